"""Fix builders: rules call these while the file is walked and attach what they return to
`self.report(..., fix=...)`. Each returns a `Fix` or None: None whenever the rewrite can't be shown
to be right from the source alone (a builder refuses rather than guesses).

Every builder works on the text as read (line ends, encoding and BOM are the applier's business:
inserted newlines use the file's own) and never raises: a bug here must not cost the finding.
"""
from __future__ import annotations

import ast
import functools
import os
import re
from typing import List, Optional, Sequence, Tuple

from compilelint.analysis import tensors as T
from compilelint.analysis.astutil import module_statements, self_attr
from compilelint.finding import Edit, Fix, Span
from compilelint.fix.text import FileText

ARITH_OPS = (ast.Add, ast.Sub, ast.Mult, ast.Div, ast.FloorDiv, ast.Mod, ast.Pow)
# Expressions that need parentheses to be one argument of a call.
NEEDS_PARENS = (ast.Tuple, ast.Yield, ast.YieldFrom, ast.NamedExpr, ast.Starred, ast.GeneratorExp)
GUARD = "if not {torch}.compiler.is_compiling():"


def _never_raise(fn):
    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        try:
            return fn(*args, **kwargs)
        except Exception:  # a builder bug: no fix, the finding stays (the tests set COMPILELINT_DEBUG)
            if os.environ.get("COMPILELINT_DEBUG"):
                raise
            return None

    return wrapper


# ----- shared helpers -------------------------------------------------------------------------------
def file_text(ctx) -> FileText:
    ft = getattr(ctx, "_fix_text", None)
    if ft is None or ft.text is not ctx.source.text:
        ft = FileText(ctx.source.text)
        ctx._fix_text = ft
    return ft


def newline(ctx) -> str:
    return ctx.source.newline or "\n"


def expr_text(ft: FileText, node: ast.AST) -> str:
    text = ft.segment(ft.span(node))
    if isinstance(node, NEEDS_PARENS):
        return f"({text})"
    return text


def _module_level(ctx):
    return list(module_statements(ctx.tree.body))


def _unconditional(body):
    for stmt in body:
        yield stmt
        if isinstance(stmt, ast.Try):
            yield from _unconditional(stmt.body)


def _module_torch_names(ctx) -> List[str]:
    """Names bound to the `torch` module at module level (`import torch`, `import torch as th`)."""
    cached = getattr(ctx, "_fix_torch_names", None)  # once per file: per fix is quadratic in big files
    if cached is not None and cached[0] is ctx.tree:
        return cached[1]
    names = []
    for stmt in _unconditional(ctx.tree.body):  # not `if TYPE_CHECKING: import torch`
        if isinstance(stmt, ast.Import):
            for a in stmt.names:
                if a.name == "torch":
                    names.append(a.asname or "torch")
                elif a.name.startswith("torch.") and not a.asname:
                    names.append("torch")
    ctx._fix_torch_names = (ctx.tree, names)
    return names


def _module_binds(ctx, name: str) -> bool:
    """Whether module-level code binds `name` to something (def, class, assignment, import)."""
    for stmt in _module_level(ctx):
        if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            if stmt.name == name:
                return True
            continue
        if isinstance(stmt, (ast.Import, ast.ImportFrom)):
            for a in stmt.names:
                if (a.asname or a.name.split(".")[0]) == name:
                    return True
            continue
        for sub in ast.walk(stmt):
            if isinstance(sub, ast.Name) and sub.id == name and isinstance(sub.ctx, ast.Store):
                return True
    return False


def import_torch_edit(ctx) -> Optional[Edit]:
    """`import torch` after the module docstring and `__future__` imports, at the top of the imports."""
    cached = getattr(ctx, "_fix_import_edit", False)
    if cached is not False:
        return cached
    edit = _import_torch_edit(ctx)
    ctx._fix_import_edit = edit
    return edit


def _import_torch_edit(ctx) -> Optional[Edit]:
    ft = file_text(ctx)
    nl = newline(ctx)
    body = ctx.tree.body
    i = 0
    if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant) \
            and isinstance(body[0].value.value, str):
        i = 1
    while i < len(body) and isinstance(body[i], ast.ImportFrom) and body[i].module == "__future__":
        i += 1
    if i < len(body):
        nxt = body[i]
        row = min([nxt.lineno] + [d.lineno for d in getattr(nxt, "decorator_list", [])])
        if i > 0 and body[i - 1].end_lineno >= row:
            return None  # shares a line with the docstring or a __future__ import
        if not isinstance(nxt, (ast.Import, ast.ImportFrom)) and i > 0:
            row = body[i - 1].end_lineno + 1
        if ft.row_starts_in_string(row):
            return None
        return Edit(f"import torch{nl}", Span(row, 1, row, 1))
    if i == 0:
        return None  # an empty module has nothing to fix
    row = body[i - 1].end_lineno + 1
    if row <= len(ft.lines):
        return Edit(f"import torch{nl}", Span(row, 1, row, 1))
    last = len(ft.lines)
    end_col = len(ft.line(last)) + 1
    prefix = "" if ft.text.endswith(("\n", "\r")) else nl
    if prefix:
        return Edit(f"{prefix}import torch{nl}", Span(last, end_col, last, end_col))
    return Edit(f"import torch{nl}", Span(last + 1, 1, last + 1, 1))


def torch_name(ctx) -> Optional[Tuple[str, Tuple[Edit, ...]]]:
    """How this function can spell the torch module, and the import edit when none is imported."""
    local = ctx.scope.locals
    bound = _module_torch_names(ctx)
    for name in sorted(set(bound), key=lambda n: (n != "torch", n)):
        if name not in local:
            return name, ()
    if "torch" in local or ctx.imports.aliases.get("torch", "torch") != "torch" or _module_binds(ctx, "torch"):
        return None
    edit = import_torch_edit(ctx)
    return ("torch", (edit,)) if edit is not None else None


def _whole_lines(ft: FileText, span: Span) -> bool:
    """The statement starts its first line and nothing but a comment follows it on its last."""
    if ft.line(span.row)[: span.col - 1].strip():
        return False
    rest = ft.line(span.end_row)[span.end_col - 1:].strip()
    return not rest or rest.startswith("#")


def _names_read(node: ast.AST) -> set:
    return {n.id for n in ast.walk(node) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)}


def _condition(test: ast.AST, expr: ast.AST) -> Tuple[Optional[ast.AST], bool]:
    """(the tensor condition, whether the branches swap): `if c:` or `if not c:` only."""
    if test is expr:
        return expr, False
    if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not) and test.operand is expr:
        return expr, True
    return None, False


def _in_fstring(ctx) -> bool:
    return any(isinstance(n, ast.JoinedStr) for n in ctx.stack)


# ----- CL104: tensor-driven branches → torch.where -----------------------------------------------------
@_never_raise
def where_for_ifexp(ctx, node: ast.IfExp, expr: ast.AST) -> Optional[Fix]:
    """`a if c else b` → `torch.where(c, a, b)` (unsafe: both sides are evaluated)."""
    cond, swap = _condition(node.test, expr)
    if cond is None or ctx.kind(cond) != T.BOOL or _in_fstring(ctx):
        return None
    if not (ctx.is_tensor(node.body) or ctx.is_tensor(node.orelse)):
        return None
    ft = file_text(ctx)
    keep = [ft.span(n) for n in (cond, node.body, node.orelse)]
    if ft.comments_in(ft.span(node), keep):
        return None
    t = torch_name(ctx)
    if t is None:
        return None
    name, imports = t
    a, b = expr_text(ft, node.body), expr_text(ft, node.orelse)
    if swap:
        a, b = b, a
    content = f"{name}.where({expr_text(ft, cond)}, {a}, {b})"
    return Fix("unsafe", "Replace with `torch.where(cond, a, b)`", imports + (Edit(content, ft.span(node)),))


def _branch_assignments(stmts: Sequence[ast.stmt]) -> Optional[List[Tuple[str, ast.AST]]]:
    out, seen = [], set()
    for s in stmts:
        if not (isinstance(s, ast.Assign) and len(s.targets) == 1 and isinstance(s.targets[0], ast.Name)):
            return None
        name = s.targets[0].id
        if name in seen:
            return None
        seen.add(name)
        out.append((name, s.value))
    return out or None


def _bound_before(ctx, name: str, row: int) -> bool:
    func = ctx.scope.node
    if func is None:
        return False
    a = func.args
    if name in {p.arg for p in a.posonlyargs + a.args + a.kwonlyargs}:
        return True
    stack = list(func.body)
    while stack:
        n = stack.pop()
        if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)):
            continue
        if isinstance(n, ast.Name) and n.id == name and isinstance(n.ctx, ast.Store) and n.lineno < row:
            return True
        stack.extend(ast.iter_child_nodes(n))
    return False


@_never_raise
def where_for_if(ctx, node: ast.If, expr: ast.AST) -> Optional[Fix]:
    """`if c: y = a` / `else: y = b` → `y = torch.where(c, a, b)`; no else: `y = torch.where(c, a, y)`."""
    cond, swap = _condition(node.test, expr)
    if cond is None or ctx.kind(cond) != T.BOOL:
        return None
    ft = file_text(ctx)
    span = ft.span(node)
    if not _whole_lines(ft, span) or not ft.line(span.row)[span.col - 1:].startswith("if"):
        return None  # shares a line, or is an `elif`
    if node.orelse and isinstance(node.orelse[0], ast.If):
        inner = ft.span(node.orelse[0])
        if ft.line(inner.row)[inner.col - 1:].startswith("elif"):
            return None
    body = _branch_assignments(node.body)
    if body is None:
        return None
    names = [n for n, _ in body]
    if node.orelse:
        other = _branch_assignments(node.orelse)
        if other is None or sorted(n for n, _ in other) != sorted(names):
            return None
    else:
        if not all(_bound_before(ctx, n, node.lineno) for n in names):
            return None
        # The value each name had before the `if` (positioned there, so inference reads that binding).
        other = [(n, ast.copy_location(ast.Name(id=n, ctx=ast.Load()), node)) for n in names]
    true, false = dict(body), dict(other)
    order = {n: i for i, n in enumerate(names)}
    # Each expression must see the values the original saw: nothing assigned before it in its own
    # branch, nothing this rewrite assigns on an earlier line.
    for branch in (body, other if node.orelse else []):
        assigned = set()
        for n, value in branch:
            for read in _names_read(value) & set(names):
                if read in assigned or order[read] < order[n]:
                    return None
            assigned.add(n)
    if len(names) > 1 and _names_read(cond) & set(names):
        return None
    if not all(ctx.is_tensor(true[n]) or ctx.is_tensor(false[n]) for n in names):
        return None
    keep = [ft.span(cond)] + [ft.span(v) for v in true.values()]
    if node.orelse:
        keep += [ft.span(v) for v in false.values()]
    if ft.comments_in(span, keep):
        return None
    t = torch_name(ctx)
    if t is None:
        return None
    tname, imports = t
    c = expr_text(ft, cond)
    lines = []
    for n in names:
        a = expr_text(ft, true[n])
        b = expr_text(ft, false[n]) if node.orelse else n
        if swap:
            a, b = b, a
        lines.append(f"{n} = {tname}.where({c}, {a}, {b})")
    indent = ft.line(span.row)[: span.col - 1]
    content = (newline(ctx) + indent).join(lines)
    title = "Replace the branch with `torch.where(cond, a, b)`"
    return Fix("unsafe", title, imports + (Edit(content, span),))


# ----- CL101: `.item()` as an arithmetic operand ---------------------------------------------------
_ITEM_TAIL = re.compile(r"\.[ \t]*item[ \t]*\([ \t]*\)$")


@_never_raise
def drop_item(ctx, call: ast.Call) -> Optional[Fix]:
    """`y * t.item()` with `y` a tensor → `y * t` (unsafe: the number becomes a 0-d tensor)."""
    parent = ctx.parent()
    if not isinstance(parent, ast.BinOp) or not isinstance(parent.op, ARITH_OPS):
        return None
    if parent.left is call:
        other = parent.right
    elif parent.right is call:
        other = parent.left
    else:
        return None
    if not ctx.is_tensor(other) or _in_fstring(ctx):
        return None
    ft = file_text(ctx)
    whole, value = ft.span(call), ft.span(call.func.value)
    start = ft.offset(value.end_row, value.end_col)
    end = ft.offset(whole.end_row, whole.end_col)
    m = _ITEM_TAIL.search(ft.text[start:end])
    if m is None:
        return None
    row, col = ft.position(start + m.start())
    return Fix("unsafe", "Drop `.item()`: keep the 0-d tensor",
               (Edit("", Span(row, col, whole.end_row, whole.end_col)),))


# ----- CL201-CL204: side-effect statements → guarded by is_compiling() -------------------------------
def _indent_unit(ctx, ft: FileText, stmt: ast.stmt, indent: str) -> str:
    owner = None
    passed = False
    for n in reversed(ctx.stack):
        if n is stmt:
            passed = True
            continue
        if passed and isinstance(n, ast.stmt):
            owner = n
            break
    if owner is None:
        owner = ctx.scope.node
    if owner is not None:
        outer = ft.indent_of(owner.lineno)
        if indent.startswith(outer) and len(indent) > len(outer):
            return indent[len(outer):]
    return "\t" if indent.startswith("\t") else "    "


@_never_raise
def guard_statement(ctx, call: ast.Call, what: str = "the call") -> Optional[Fix]:
    """Wrap an expression statement in `if not torch.compiler.is_compiling():` (unsafe: it no longer
    runs under compile)."""
    stmt = ctx.statement()
    if not isinstance(stmt, ast.Expr) or stmt.value is not call:
        return None
    ft = file_text(ctx)
    span = ft.span(stmt)
    if not _whole_lines(ft, span):
        return None
    if span.end_row > span.row:
        ft.row_starts_in_string(span.row)  # tokenizes
        if not ft.tokens_ok:
            return None  # can't tell string continuation lines from code: don't re-indent blindly
    t = torch_name(ctx)
    if t is None:
        return None
    tname, imports = t
    indent = ft.line(span.row)[: span.col - 1]
    unit = _indent_unit(ctx, ft, stmt, indent)
    nl = newline(ctx)
    parts = [indent + GUARD.format(torch=tname) + nl + indent + unit]
    for row in range(span.row, span.end_row + 1):
        line = ft.lines[row - 1]
        piece = line[span.col - 1:] if row == span.row else line
        if row == span.end_row:
            cut = span.end_col - 1 - (0 if row != span.row else span.col - 1)
            piece = piece[:cut]
        if row != span.row and piece.strip() and not ft.row_starts_in_string(row):
            piece = unit + piece
        parts.append(piece)
    content = "".join(parts)
    return Fix("unsafe", f"Guard {what} with `if not torch.compiler.is_compiling():`",
               imports + (Edit(content, Span(span.row, 1, span.end_row, span.end_col)),))


# ----- CL303: F.one_hot(x) → F.one_hot(x, num_classes=K) -----------------------------------------------
def _int_const(node) -> Optional[int]:
    if isinstance(node, ast.Constant) and type(node.value) is int:
        return node.value
    return None


def _class_node(ctx) -> Optional[ast.ClassDef]:
    cls = ctx.cls
    if cls is None:
        return None
    for stmt in ctx.tree.body:
        if isinstance(stmt, ast.ClassDef) and stmt.name == cls.info.qualname:
            return stmt
    return None


def _method(cls_node: ast.ClassDef, name: str):
    for m in cls_node.body:
        if isinstance(m, (ast.FunctionDef, ast.AsyncFunctionDef)) and m.name == name:
            return m
    return None


def _is_self_attr(node, attr: Optional[str] = None) -> bool:
    name = self_attr(node)
    return name is not None and (attr is None or name == attr)


def _self_attr_stores(tree: ast.AST, attr: str) -> List[ast.AST]:
    """Statements anywhere in the module that bind `self.<attr>` (assignments, augmented, deletes)."""
    out = []
    for n in ast.walk(tree):
        if isinstance(n, (ast.Assign, ast.AugAssign, ast.AnnAssign, ast.Delete)):
            targets = n.targets if isinstance(n, (ast.Assign, ast.Delete)) else [n.target]
            for t in targets:
                if any(_is_self_attr(x, attr) for x in ast.walk(t)):
                    out.append(n)
                    break
        elif isinstance(n, ast.Call) and isinstance(n.func, ast.Name) and n.func.id in ("setattr", "delattr"):
            out.append(n)  # dynamic attribute writes: can't tell what they touch
    return out


def _init_constant(ctx, attr: str) -> Optional[Tuple[ast.Assign, object]]:
    """The single `self.<attr> = <number>` statement at the top level of this class's `__init__`,
    when nothing else in the module binds `self.<attr>` (which would make it a different value)."""
    cls_node = _class_node(ctx)
    if cls_node is None:
        return None
    init = _method(cls_node, "__init__")
    if init is None:
        return None
    found = None
    for stmt in init.body:
        if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and _is_self_attr(stmt.targets[0], attr):
            value = stmt.value
            if isinstance(value, ast.Constant) and type(value.value) in (int, float):
                if found is not None:
                    return None
                found = (stmt, value.value)
    if found is None:
        return None
    return found


def _class_count(ctx, node: ast.AST) -> Optional[str]:
    """Source text for a class count that is a known int: a literal, a module-level int constant, or
    `self.<attr>` bound once, to an int constant, in `__init__`."""
    if _int_const(node) is not None and node.value > 0:
        return str(node.value)
    if isinstance(node, ast.Name) and ctx.is_global_number(node.id):
        for stmt in _module_level(ctx):
            if isinstance(stmt, ast.Assign) and any(isinstance(t, ast.Name) and t.id == node.id for t in stmt.targets):
                if _int_const(stmt.value) is None or stmt.value.value <= 0:
                    return None
        return node.id
    if _is_self_attr(node):
        found = _init_constant(ctx, node.attr)
        if found is None or type(found[1]) is not int or found[1] <= 0:
            return None
        if len(_self_attr_stores(ctx.tree, node.attr)) != 1:
            return None
        return f"self.{node.attr}"
    return None


def _single_binding(ctx, name: str, before: ast.AST) -> Optional[ast.AST]:
    """The value of the only assignment to local `name` in this function, when it comes before `before`."""
    func = ctx.scope.node
    if func is None:
        return None
    a = func.args
    if name in {p.arg for p in a.posonlyargs + a.args + a.kwonlyargs}:
        return None
    found = []
    for n in ast.walk(func):
        if isinstance(n, ast.Name) and n.id == name and isinstance(n.ctx, (ast.Store, ast.Del)):
            found.append(n)
    if len(found) != 1:
        return None
    for n in ast.walk(func):
        if isinstance(n, ast.Assign) and len(n.targets) == 1 and n.targets[0] is found[0]:
            if (n.end_lineno, n.end_col_offset) <= (before.lineno, before.col_offset):
                return n.value
    return None


def _one_hot_classes(ctx, x: ast.AST) -> Optional[Tuple[str, str]]:
    """(class count text, "safe" | "unsafe") for the indices `x`, or None.

    safe: `torch.arange(K)` — the width `x.max() + 1` is exactly K.
    unsafe: `e % K` and `torch.randint(K, ...)` / `torch.randint(0, K, ...)` — every index is below
    K, so num_classes=K is right for every value, but the eager width (max + 1) may have been smaller.
    """
    if isinstance(x, ast.Name):
        bound = _single_binding(ctx, x.id, x)
        if bound is None:
            return None
        x = bound
    if isinstance(x, ast.BinOp) and isinstance(x.op, ast.Mod):
        k = _class_count(ctx, x.right)
        return (k, "unsafe") if k else None
    if isinstance(x, ast.Call) and all(k.arg in ("device", "dtype", "generator", "requires_grad")
                                       for k in x.keywords):
        name = ctx.resolve(x.func)
        args = x.args
        if name == "torch.arange" and len(args) == 1 and not any(k.arg == "dtype" for k in x.keywords):
            k = _class_count(ctx, args[0])
            return (k, "safe") if k else None
        if name == "torch.arange" and len(args) == 2 and _int_const(args[0]) == 0:
            k = _class_count(ctx, args[1])
            return (k, "safe") if k else None
        if name == "torch.randint" and len(args) == 2:  # randint(high, size)
            k = _class_count(ctx, args[0])
            return (k, "unsafe") if k else None
        if name == "torch.randint" and len(args) == 3 and _int_const(args[0]) == 0:  # randint(0, high, size)
            k = _class_count(ctx, args[1])
            return (k, "unsafe") if k else None
    return None


@_never_raise
def one_hot_num_classes(ctx, call: ast.Call) -> Optional[Fix]:
    """`F.one_hot(x)` → `F.one_hot(x, num_classes=K)` where K follows from how `x` was made."""
    if not call.args or isinstance(call.args[0], ast.Starred) or _in_fstring(ctx):
        return None
    if any(k.arg is None for k in call.keywords):
        return None
    found = _one_hot_classes(ctx, call.args[0])
    if found is None:
        return None
    k, applicability = found
    ft = file_text(ctx)
    title = f"Pass `num_classes={k}`"
    if len(call.args) > 1:
        return Fix(applicability, title, (Edit(k, ft.span(call.args[1])),))
    for kw in call.keywords:
        if kw.arg == "num_classes":
            return Fix(applicability, title, (Edit(k, ft.span(kw.value)),))
    end = ft.span(call.args[0])
    return Fix(applicability, title, (Edit(f", num_classes={k}", Span(end.end_row, end.end_col, end.end_row, end.end_col)),))


# ----- CL401: `self.n += 1` on a Python number → a buffer updated in place ---------------------------
INPLACE = {ast.Add: "add_", ast.Sub: "sub_", ast.Mult: "mul_", ast.Div: "div_"}


def _module_class(ctx, name: str, depth: int = 0) -> bool:
    info = ctx.summary.classes.get(name)
    if info is None or depth > 5:
        return False
    for base in info.bases:
        if base in ("torch.nn.Module", "torch.nn.modules.module.Module"):
            return True
        prefix = ctx.module + "."
        if base.startswith(prefix) and _module_class(ctx, base[len(prefix):], depth + 1):
            return True
    return False


def _super_init_before(init, stmt) -> bool:
    for s in init.body:
        if s is stmt:
            return False
        if isinstance(s, ast.Expr) and isinstance(s.value, ast.Call):
            f = s.value.func
            if isinstance(f, ast.Attribute) and f.attr == "__init__":
                return True
    return False


def _reads_ok(tree: ast.AST, attr: str, sites: Sequence[ast.AST]) -> bool:
    """Every read of `self.<attr>` is an operand of arithmetic (or one of the statements rewritten):
    a 0-d tensor behaves like the number there, unlike in `if`, `range()` or formatting."""
    skip = set()
    for s in sites:
        for n in ast.walk(s):
            skip.add(id(n))
    parents = {}
    for n in ast.walk(tree):
        for c in ast.iter_child_nodes(n):
            parents[id(c)] = n
    for n in ast.walk(tree):
        if _is_self_attr(n, attr) and isinstance(n.ctx, ast.Load) and id(n) not in skip:
            p = parents.get(id(n))
            if not (isinstance(p, ast.BinOp) and isinstance(p.op, tuple(INPLACE) + (ast.FloorDiv, ast.Pow))):
                return False
    return True


@_never_raise
def buffer_counter(ctx, stmt: ast.AST, attr: str) -> Optional[Fix]:
    """`self.n += 1` (or `self.n = self.n * k`) where `__init__` says `self.n = 0` →
    `self.register_buffer("n", torch.tensor(0), persistent=False)` and `self.n.add_(1)` (unsafe)."""
    if isinstance(stmt, ast.AugAssign):
        op, value = stmt.op, stmt.value
    elif isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.value, ast.BinOp) \
            and _is_self_attr(stmt.value.left, attr):
        op, value = stmt.value.op, stmt.value.right
    else:
        return None
    method = INPLACE.get(type(op))
    if method is None or any(_is_self_attr(n, attr) for n in ast.walk(value)):
        return None
    found = _init_constant(ctx, attr)
    if found is None:
        return None
    init_stmt, number = found
    cls_node = _class_node(ctx)
    init = _method(cls_node, "__init__")
    if not _module_class(ctx, cls_node.name) or not _super_init_before(init, init_stmt):
        return None
    # Other writes would assign a number to a buffer (a TypeError) or fork the value.
    sites = [s for s in _self_attr_stores(ctx.tree, attr) if s is not init_stmt]
    if any(s is not stmt and not _rewritable_site(s, attr) for s in sites):
        return None
    if not _reads_ok(ctx.tree, attr, sites + [init_stmt]):
        return None
    if type(number) is int:
        if method == "div_" or _int_const(value) is None:
            return None  # an integer buffer can't take true division or a float
        tensor = "tensor({})"
    else:
        if not (isinstance(value, ast.Constant) and type(value.value) in (int, float)):
            return None
        tensor = "tensor({}, dtype={}.float64)"
    t = torch_name(ctx)
    if t is None:
        return None
    tname, imports = t
    if tname in _stored_names(init):
        return None
    ft = file_text(ctx)
    keep = [ft.span(value)]
    span = ft.span(stmt)
    if ft.comments_in(span, keep) or ft.comments_in(ft.span(init_stmt)):
        return None
    literal = ft.segment(ft.span(init_stmt.value))
    made = f"{tname}." + tensor.format(literal, tname)
    register = f'self.register_buffer("{attr}", {made}, persistent=False)'
    update = f"self.{attr}.{method}({expr_text(ft, value)})"
    return Fix("unsafe", f"Keep `self.{attr}` in a buffer updated in place (`self.{attr}.{method}(...)`)",
               imports + (Edit(register, ft.span(init_stmt)), Edit(update, span)))


def _rewritable_site(s: ast.AST, attr: str) -> bool:
    """Another `self.n += k` elsewhere: on a buffer it updates the tensor in place and still works."""
    return isinstance(s, ast.AugAssign) and _is_self_attr(s.target, attr)


def _stored_names(func) -> set:
    a = func.args
    names = {p.arg for p in a.posonlyargs + a.args + a.kwonlyargs}
    names |= {n.id for n in ast.walk(func) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)}
    return names
