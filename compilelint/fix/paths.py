"""Is a condition a tensor on every path? Rewrites into `torch.where(cond, ...)` need it: a name that
is a tensor on one path and the Python `False` on another (`to_drop = False; if self.training:
to_drop = torch.rand([]) < p`) makes `torch.where(to_drop, ...)` raise `TypeError` on the Python
path, though tensor inference, which follows the last binding, calls it a tensor.
"""
from __future__ import annotations

import ast
import weakref

from compilelint.analysis import tensors as T
from compilelint.analysis.astutil import CHILD_FIELDS, child_fields, parameter_defaults, walk


def tensor_on_every_path(ctx, expr: ast.AST) -> bool:
    """Every local name `expr` reads is bound only to tensors in its function: each assignment's
    value is inferred a tensor, or the name is unpacked from a call known to return tensors only
    (`a, b = f(x)`, every `return` of `f` a tuple of tensors), and no other kind of binding (loop target, augmented assignment,
    `with ... as`, walrus, import) or non-None parameter default gives it another value."""
    func = ctx.function_node
    if func is None:
        return True
    names = {n.id for n in walk(expr) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)}
    names -= _keys_only(expr)
    if not names:
        return True
    names -= {n for n in names if _tensor_just_before(ctx, func, n, expr)}
    if not names:
        return True
    defaults = {a.arg: d for a, d in parameter_defaults(func.args)}
    for name, default in defaults.items():
        if name in names and not (isinstance(default, ast.Constant) and default.value is None):
            return False
    for node in _own(func).binders:
        if isinstance(node, ast.Name) and node.id in names and not isinstance(node.ctx, ast.Load):
            owner = _binding_statement(func, node)
            if owner is not None:
                if not ctx.is_tensor(owner.value):
                    return False
            elif not _unpacks_tensors(ctx, func, node):
                return False
        elif isinstance(node, (ast.Import, ast.ImportFrom)) and any(
                (a.asname or a.name.split(".")[0]) in names for a in node.names):
            return False
    return True


def _keys_only(expr: ast.AST) -> set:
    """Names `expr` reads only as the key of a subscript (`h[n] > 0`): what they hold picks an item,
    it does not make the item a Python value (the item's kind is the container's), so they need not
    be tensors."""
    keys, elsewhere = set(), set()
    stack = [(expr, False)]
    while stack:
        node, in_key = stack.pop()
        if isinstance(node, ast.Name):
            (keys if in_key else elsewhere).add(node.id)
        elif isinstance(node, ast.Subscript):
            stack.append((node.value, in_key))
            stack.append((node.slice, True))
        else:
            stack.extend((child, in_key) for child in ast.iter_child_nodes(node))
    return keys - elsewhere


def _tensor_just_before(ctx, func, name: str, expr: ast.AST) -> bool:
    """`name = <tensor>` is an earlier statement of the block holding `expr`'s statement, and no
    statement between them binds `name`: straight-line code, so that is the value `expr` reads,
    whatever other bindings of `name` elsewhere in the function are (`a, b = helper(x)` in one
    branch, `a = torch.cat([z, a])` right before the test)."""
    own = _own(func)
    up = own.parents
    stmt = expr
    while not isinstance(stmt, ast.stmt):
        if id(stmt) not in up:
            return False
        stmt = up[id(stmt)]
    parent = own.parent(stmt, func)
    block = next((b for f in ("body", "orelse", "finalbody") for b in [getattr(parent, f, None)]
                  if isinstance(b, list) and stmt in b), None)
    if block is None:
        return False
    for earlier in reversed(block[:block.index(stmt)]):
        if name in _declared(earlier):
            return False  # a def, class, import, global or nonlocal of the name
        binds = [n for n in walk(earlier) if isinstance(n, ast.Name) and n.id == name
                 and not isinstance(n.ctx, ast.Load)]
        if not binds:
            continue
        return (isinstance(earlier, ast.Assign) and len(earlier.targets) == 1 and earlier.targets[0] is binds[0]
                and len(binds) == 1 and ctx.is_tensor(earlier.value))
    return False


def _declared(stmt: ast.stmt) -> set:
    """Names a statement binds other than by assignment: defs, classes, imports, global/nonlocal."""
    if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        return {stmt.name}
    if isinstance(stmt, (ast.Import, ast.ImportFrom)):
        return {a.asname or a.name.split(".")[0] for a in stmt.names}
    if isinstance(stmt, (ast.Global, ast.Nonlocal)):
        return set(stmt.names)
    return set()


def _own_nodes(func):
    """The nodes of `func`'s body, not of functions or classes nested in it."""
    stack = list(func.body)
    while stack:
        node = stack.pop()
        yield node
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)):
            continue
        stack.extend(ast.iter_child_nodes(node))


def _binding_statement(func, name: ast.Name):
    """The `name = value` / `name: T = value` statement that binds `name` directly, else None."""
    return _own(func).bindings.get(id(name))


class _Own:
    """A function's own nodes (`_own_nodes`, in its order), the parent of each (by `id`; the body's
    statements' is the function: `parent`), those that bind names (a stored `Name`, an import), and, by the
    `id` of each `Name` an `=` / `x: T =` binds directly, that statement: once per function, not a
    walk per name asked. It never holds the function itself: as a value of `_OWN` it would keep its
    own key alive, and with it every tree of the run (measured: 93,000 nodes of 445 functions left
    after 300 files, which later collections traversed)."""

    def __init__(self, func):
        self.nodes = _own_list(func)
        self.parents = _parents(self.nodes)
        self.body = {id(c) for c in func.body}
        self.binders = [n for n in self.nodes if (isinstance(n, ast.Name) and not isinstance(n.ctx, ast.Load))
                        or isinstance(n, (ast.Import, ast.ImportFrom))]
        self.bindings = {}
        for node in self.nodes:
            if isinstance(node, ast.Assign):
                for target in node.targets:
                    self.bindings.setdefault(id(target), node)
            elif isinstance(node, ast.AnnAssign) and node.value is not None:
                self.bindings.setdefault(id(node.target), node)

    def parent(self, node, func):
        """The node holding `node` in `func` (`func` for its body's statements), else None."""
        return func if id(node) in self.body else self.parents.get(id(node))


def _own_list(func) -> list:
    """`_own_nodes(func)` in its order, less the operator and context singletons (no binding is
    one), at a third of its cost: the fields that hold nodes are known per class (`astutil.walk`)."""
    out = []
    stack = list(func.body)
    fields_of = CHILD_FIELDS
    while stack:
        node = stack.pop()
        if node is None:  # `{**d}`'s key, a keyword-only parameter's missing default
            continue
        out.append(node)
        cls = node.__class__
        if cls in _SCOPES:
            continue
        fields = fields_of.get(cls)
        for name in child_fields(cls) if fields is None else fields:
            value = getattr(node, name, None)
            if value.__class__ is list:
                stack += value
            elif value is not None:
                stack.append(value)
    return out


def _parents(nodes) -> dict:
    """id(child) → node, for the children of each of `nodes` (`ast.iter_child_nodes`' less the
    operator and context singletons, which no path goes up from), read by the fields that hold nodes."""
    out = {}
    fields_of = CHILD_FIELDS
    for node in nodes:
        cls = node.__class__
        fields = fields_of.get(cls)
        for name in child_fields(cls) if fields is None else fields:
            value = getattr(node, name, None)
            if value.__class__ is list:
                for child in value:
                    if child is not None:
                        out[id(child)] = node
            elif value is not None:
                out[id(value)] = node
    return out


_SCOPES = frozenset((ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda))
_OWN: "weakref.WeakKeyDictionary[ast.AST, _Own]" = weakref.WeakKeyDictionary()


def _own(func) -> _Own:
    own = _OWN.get(func)
    if own is None:
        own = _OWN[func] = _Own(func)
    return own


def _unpacked_names(target: ast.AST):
    """The names a tuple/list target unpacks, at any depth (not a starred one: it gets a list)."""
    for e in target.elts:
        if isinstance(e, ast.Name):
            yield e
        elif isinstance(e, (ast.Tuple, ast.List)):
            yield from _unpacked_names(e)


def _unpacks_tensors(ctx, func, name: ast.Name) -> bool:
    """`name` is an element of `a, b = f(...)` and the call is inferred a sequence of tensors (what
    every `return` of the callee gives, or its annotation): unpacking it binds a tensor to each; or an
    element, at any depth, of `(a, b), (c, d) = value` where the value is a tensor: unpacking a tensor
    gives tensors (its rows), and so does unpacking those."""
    for node in _own(func).nodes:
        if isinstance(node, ast.Assign) and len(node.targets) == 1:
            target = node.targets[0]
            if not isinstance(target, (ast.Tuple, ast.List)):
                continue
            if isinstance(node.value, ast.Call) and any(e is name for e in target.elts) \
                    and ctx.kind(node.value) == T.SEQ:
                return True
            if any(e is name for e in _unpacked_names(target)):
                return ctx.kind(node.value) == T.TENSOR
    return False


def tensor_when_reached(ctx, name: ast.Name, stmt: ast.stmt) -> bool:
    """The local `name` is a tensor when `stmt` runs: `stmt` is in no loop of its function, and every
    binding of `name` before it is a plain assignment of a tensor (later bindings cannot reach it).
    Parameters and names bound any other way (loop targets, `with`, imports, ...) are not proven."""
    func = ctx.function_node
    if func is None:
        return False
    up = _own(func).parents
    node = stmt
    while id(node) in up:
        node = up[id(node)]
        if isinstance(node, (ast.For, ast.AsyncFor, ast.While)):
            return False
    seen = False
    for node in _own(func).nodes:
        if isinstance(node, ast.Name) and node.id == name.id and not isinstance(node.ctx, ast.Load) \
                and (node.lineno, node.col_offset) < (stmt.lineno, stmt.col_offset):
            owner = _binding_statement(func, node)
            if owner is None or not ctx.is_tensor(owner.value):
                return False
            seen = True
        elif isinstance(node, (ast.Import, ast.ImportFrom, ast.Global, ast.Nonlocal)) and name.id in (
                [a.asname or a.name.split(".")[0] for a in node.names] if isinstance(node, (ast.Import, ast.ImportFrom))
                else node.names):
            return False
    return seen
