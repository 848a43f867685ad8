"""Small questions about syntax trees that several parts of the analysis ask."""
from __future__ import annotations

import ast
from typing import Dict, List, Optional, Tuple

from compilelint.analysis import tensors as T
from compilelint.analysis.names import ImportTable, dotted

FUNCS = (ast.FunctionDef, ast.AsyncFunctionDef)

# Operator and context singletons (Load, Store, Add…): half of all nodes, never interesting.
LEAVES = (ast.expr_context, ast.operator, ast.cmpop, ast.unaryop, ast.boolop)


# The fields that never hold a node to walk: names, numbers, flags, and the operator and context
# singletons. A Name's two fields are both of them: it has no children to look for.
_NO_CHILDREN = frozenset(("ctx", "op", "id", "attr", "name", "arg", "asname", "module", "level", "kind",
                          "type_comment", "conversion", "is_async", "simple", "tag", "rest"))
# Lists that may hold None among their nodes: `{**d}`'s key, a keyword-only parameter's missing default.
_MAY_HOLD_NONE = frozenset((ast.Dict, ast.arguments))
# The grammar's types that are no node: identifiers, numbers, strings, constants (`Global.names`).
_LEAF_TYPES = frozenset(("identifier", "int", "string", "constant"))
# Node class → `child_fields` (the walks read it inline: a call per node costs)
CHILD_FIELDS: Dict[type, Tuple[str, ...]] = {}


def child_fields(cls: type) -> Tuple[str, ...]:
    """The fields of a node class that may hold nodes (a list or one node), in `_fields` order:
    every other field holds a node, None, or a list of nodes (None too in `_MAY_HOLD_NONE`'s)."""
    fields = CHILD_FIELDS.get(cls)
    if fields is None:
        leaves = _leaf_fields(cls)
        fields = () if cls is ast.Constant else tuple(f for f in cls._fields
                                                      if f not in _NO_CHILDREN and f not in leaves)
        CHILD_FIELDS[cls] = fields
    return fields


def _leaf_fields(cls: type) -> frozenset:
    """The fields the grammar types as no node, read from the class's doc, which Python writes from
    the grammar: `Global(identifier* names)`, `MatchSingleton(constant value)`."""
    line = (cls.__doc__ or "").split("\n", 1)[0]
    if not line.startswith(cls.__name__ + "(") or not line.endswith(")"):
        return frozenset()
    parts = [p.split() for p in line[len(cls.__name__) + 1:-1].split(",")]
    return frozenset(p[1] for p in parts if len(p) == 2 and p[0].rstrip("*?") in _LEAF_TYPES)


def walk(node: ast.AST) -> List[ast.AST]:
    """All nodes under `node` (itself included), in `ast.walk`'s order (breadth first), less the
    operator and context singletons, at a third of its cost: the fields that hold nodes are known
    per class, so a value is a list of nodes, a node or None, tested without `isinstance`."""
    out = [node]
    fields_of = CHILD_FIELDS
    for n in out:  # the list grows while it is read: breadth first
        cls = n.__class__
        fields = fields_of.get(cls)
        if fields is None:
            fields = child_fields(cls)
        for name in fields:
            v = getattr(n, name, None)
            if v.__class__ is list:
                if cls in _MAY_HOLD_NONE:
                    out += [x for x in v if x is not None]
                else:
                    out += v
            elif v is not None:
                out.append(v)
    return out


def is_class_name(name: str) -> bool:
    return name.rsplit(".", 1)[-1][:1].isupper() and not name.startswith("builtins.")


def is_own_class(node: ast.AST, fn: Optional[ast.AST]) -> bool:
    """`self.__class__`, `type(self)`, or the `cls` of a classmethod `fn`: the class of the receiver."""
    if isinstance(node, ast.Attribute) and node.attr == "__class__" and is_self(node.value):
        return True
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "type" and \
            len(node.args) == 1 and is_self(node.args[0]):
        return True
    return isinstance(node, ast.Name) and isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)) and \
        bool(fn.args.args) and fn.args.args[0].arg == node.id and \
        any(isinstance(d, ast.Name) and d.id == "classmethod" for d in fn.decorator_list)


def is_super_init(func) -> bool:
    """`super().__init__` (the callee of a call)."""
    return isinstance(func, ast.Attribute) and func.attr == "__init__" and isinstance(func.value, ast.Call) and \
        isinstance(func.value.func, ast.Name) and func.value.func.id == "super"


def self_targets(target, value):
    """(attr, value) for `self.attr = value`, including tuple targets `self.a, self.b = ...`."""
    if isinstance(target, ast.Attribute) and is_self(target.value):
        return [(target.attr, value)]
    if isinstance(target, (ast.Tuple, ast.List)):
        if isinstance(value, (ast.Tuple, ast.List)) and len(value.elts) == len(target.elts):
            return [p for t, v in zip(target.elts, value.elts) for p in self_targets(t, v)]
        return [p for t in target.elts for p in self_targets(t, value)]
    return []


def self_attr_store(call) -> Optional[Tuple[str, ast.AST]]:
    """(attr, value) for a call that stores `self.attr`: `setattr(self, "attr", value)`, or
    `object.__setattr__(self, "attr", value)` (which skips the class's own `__setattr__`, as a module
    does to hold another module it must not register as its child)."""
    func = call.func
    if func.__class__ is ast.Name:
        stores = func.id == "setattr"
    else:
        stores = func.__class__ is ast.Attribute and func.attr == "__setattr__" and \
            func.value.__class__ is ast.Name and func.value.id == "object"
    if stores and len(call.args) == 3 and is_self(call.args[0]) and \
            isinstance(call.args[1], ast.Constant) and isinstance(call.args[1].value, str):
        return call.args[1].value, call.args[2]
    return None


def is_self(node) -> bool:
    return isinstance(node, ast.Name) and node.id == "self"


def self_attr(node) -> Optional[str]:
    """`attr` for `self.attr`, else None."""
    return node.attr if isinstance(node, ast.Attribute) and is_self(node.value) else None


def is_call_to(node, name: str) -> bool:
    return isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == name and not node.args


def is_logger_factory(node, imports: ImportTable) -> bool:
    if not isinstance(node, ast.Call):
        return False
    name = imports.resolve(node.func) or dotted(node.func) or ""
    return name.rsplit(".", 1)[-1] in T.LOGGER_FACTORIES


def keyword(node: ast.Call, name: str):
    for k in node.keywords:
        if k.arg == name:
            return k.value
    return None


def keyword_str(node: ast.Call, name: str) -> Optional[str]:
    v = keyword(node, name)
    return v.value if isinstance(v, ast.Constant) and isinstance(v.value, str) else None


def exits(stmt) -> bool:
    return isinstance(stmt, (ast.Return, ast.Raise, ast.Continue, ast.Break))


def is_generator(func) -> bool:
    stack = list(func.body)
    while stack:
        node = stack.pop()
        if isinstance(node, (ast.Yield, ast.YieldFrom)):
            return True
        if isinstance(node, FUNCS + (ast.Lambda, ast.ClassDef)):
            continue
        stack.extend(ast.iter_child_nodes(node))
    return False


def module_statements(body):
    """Module-level statements, looking into `if`/`try` blocks (guarded imports and definitions)."""
    for stmt in body:
        yield stmt
        if isinstance(stmt, ast.If):
            yield from module_statements(stmt.body)
            yield from module_statements(stmt.orelse)
        elif isinstance(stmt, ast.Try) or type(stmt).__name__ == "TryStar":
            yield from module_statements(stmt.body)
            for h in stmt.handlers:
                yield from module_statements(h.body)
            yield from module_statements(stmt.orelse)
            yield from module_statements(stmt.finalbody)


def names_in_target(target) -> List[str]:
    if isinstance(target, ast.Name):
        return [target.id]
    if isinstance(target, (ast.Tuple, ast.List)):
        return [n for e in target.elts for n in names_in_target(e)]
    if isinstance(target, ast.Starred):
        return names_in_target(target.value)
    return []


def end(node) -> Tuple[int, int]:
    return (node.end_lineno or node.lineno, node.end_col_offset or 0)


def parameter_names(args: ast.arguments, starred: bool = False) -> set:
    """The names of the parameters (`starred`: with `*args` and `**kwargs`)."""
    names = {a.arg for a in args.posonlyargs + args.args + args.kwonlyargs}
    return names | {a.arg for a in (args.vararg, args.kwarg) if a} if starred else names


def parameter_defaults(args: ast.arguments) -> list:
    """(parameter, its default) for the parameters that have one, positional and keyword-only."""
    positional = args.posonlyargs + args.args
    pairs = list(zip(positional[len(positional) - len(args.defaults):], args.defaults))
    return pairs + [(a, d) for a, d in zip(args.kwonlyargs, args.kw_defaults) if d is not None]


def enclosing_tests(fn: Optional[ast.AST], row: int) -> List[Tuple[ast.AST, bool]]:
    """The `if` tests around `row` in `fn`, outermost first, with the branch `row` is on."""
    out: List[Tuple[ast.AST, bool]] = []
    body = list(getattr(fn, "body", ()))
    while body:
        node = next((n for n in body if n.lineno <= row <= (n.end_lineno or n.lineno)), None)
        if node is None or isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            break
        if isinstance(node, ast.If):
            if node.body and node.body[0].lineno <= row <= (node.body[-1].end_lineno or row):
                out.append((node.test, True))
                body = node.body
            elif node.orelse and node.orelse[0].lineno <= row:
                out.append((node.test, False))
                body = node.orelse
            else:
                break
            continue
        body = [n for field in ("body", "orelse", "finalbody", "handlers") for n in getattr(node, field, ()) or ()]
    return out


_BLOCKS = ("body", "orelse", "finalbody")
_ESCAPES = (ast.Return, ast.Break, ast.Continue)


def falls_into_raise(stack: List[ast.AST], stmt: ast.stmt) -> bool:
    """Does every way on from `stmt` (in `stack`, the nodes from the function down to it) reach a
    `raise`: `stmt` raises, or a `raise` follows it in its block, or its block falls through (no
    `return`/`break`/`continue` after it) to a `raise` after the `if`/`with`/`except` holding it.
    Stops at a loop (its body goes round again), a `try` body (a handler may catch) and the function."""
    if isinstance(stmt, ast.Raise):
        return True
    if stmt not in stack:
        return False
    child = stmt
    for holder in reversed(stack[:stack.index(stmt)]):
        if isinstance(holder, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.For, ast.AsyncFor,
                               ast.While, ast.ClassDef, ast.Module)):
            return False
        block = next((b for b in (getattr(holder, f, None) for f in _BLOCKS + ("handlers",))
                      if isinstance(b, list) and any(s is child for s in b)), None)
        if block is None:
            continue  # an expression, or an `if`'s test: not a statement's block
        if isinstance(holder, ast.Try) and block is holder.body:
            return False
        rest = [] if isinstance(holder, ast.Try) and block is holder.handlers else \
            block[[id(s) for s in block].index(id(child)) + 1:]  # a handler goes on after its `try`
        for s in rest:
            if isinstance(s, ast.Raise):
                return True
            if any(isinstance(n, _ESCAPES + (ast.Raise,)) for n in ast.walk(s)):
                return False  # a way out (or a raise on some paths only) before any sure raise
        child = holder
    return False
