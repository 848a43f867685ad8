"""What every fix builder shares: the never-raise wrapper, the file's text, how to spell `torch`
in the function at hand (and the edit that imports it), and small AST predicates and edits."""
from __future__ import annotations

import ast
import functools
import os
from typing import Dict, Iterable, List, Optional, Tuple

from compilelint.analysis.astutil import module_statements
from compilelint.file_text import FileText
from compilelint.finding import Edit, Span
from compilelint.rule import RuleContext

ARITH_OPS = (ast.Add, ast.Sub, ast.Mult, ast.Div, ast.FloorDiv, ast.Mod, ast.Pow)


NEEDS_PARENS = (ast.Tuple, ast.Yield, ast.YieldFrom, ast.NamedExpr, ast.Starred, ast.GeneratorExp)


GUARD = "if not {torch}.compiler.is_compiling():"


def never_raise(fn):
    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        try:
            return fn(*args, **kwargs)
        except Exception:  # a builder bug: no fix, the finding stays (the tests set COMPILELINT_DEBUG)
            if os.environ.get("COMPILELINT_DEBUG"):
                raise
            return None

    return wrapper


def file_text(ctx: RuleContext) -> FileText:
    return ctx.fixes.text


def newline(ctx: RuleContext) -> str:
    return ctx.fixes.newline


def expr_text(ft: FileText, node: ast.AST) -> str:
    text = ft.segment(ft.span(node))
    if isinstance(node, NEEDS_PARENS):
        return f"({text})"
    return text


def module_level(ctx):
    return list(module_statements(ctx.fixes.tree.body))


def _unconditional(body):
    for stmt in body:
        yield stmt
        if isinstance(stmt, ast.Try):
            yield from _unconditional(stmt.body)


def _module_torch_names(ctx: RuleContext) -> List[str]:
    """Names bound to the `torch` module at module level (`import torch`, `import torch as th`);
    once per file: per fix it is quadratic in big files."""
    return ctx.fixes.once("torch_names", lambda: _torch_names(ctx.fixes.tree))


def _torch_names(tree: ast.Module) -> List[str]:
    names = []
    for stmt in _unconditional(tree.body):  # not `if TYPE_CHECKING: import torch`
        if isinstance(stmt, ast.Import):
            for a in stmt.names:
                if a.name == "torch":
                    names.append(a.asname or "torch")
                elif a.name.startswith("torch.") and not a.asname:
                    names.append("torch")
    return names


def _module_binds(ctx, name: str) -> bool:
    """Whether module-level code binds `name` to something (def, class, assignment, import); once
    per file and name (asked for every fix that spells torch)."""
    return ctx.fixes.once(f"module_binds:{name}", lambda: _binds(module_level(ctx), name))


def _binds(statements, name: str) -> bool:
    for stmt in statements:
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


def import_torch_edit(ctx: RuleContext) -> Optional[Edit]:
    """`import torch` after the module docstring and `__future__` imports, at the top of the imports."""
    return ctx.fixes.once("import_torch_edit", lambda: _import_torch_edit(ctx))


def _import_torch_edit(ctx) -> Optional[Edit]:
    ft = file_text(ctx)
    nl = newline(ctx)
    body = ctx.fixes.tree.body
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
    local = ctx.locals
    bound = _module_torch_names(ctx)
    for name in sorted(set(bound), key=lambda n: (n != "torch", n)):
        if name not in local:
            return name, ()
    if "torch" in local or ctx.fixes.imports.aliases.get("torch", "torch") != "torch" or _module_binds(ctx, "torch"):
        return None
    edit = import_torch_edit(ctx)
    return ("torch", (edit,)) if edit is not None else None


def whole_lines(ft: FileText, span: Span) -> bool:
    """The statement starts its first line and nothing but a comment follows it on its last."""
    if ft.line(span.row)[: span.col - 1].strip():
        return False
    rest = ft.line(span.end_row)[span.end_col - 1:].strip()
    return not rest or rest.startswith("#")


def names_read(node: ast.AST) -> set:
    return {n.id for n in ast.walk(node) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)}


def in_fstring(ctx) -> bool:
    return any(isinstance(n, ast.JoinedStr) for n in ctx.stack)


def int_const(node) -> Optional[int]:
    if isinstance(node, ast.Constant) and type(node.value) is int:
        return node.value
    return None


def parents(root: ast.AST) -> Dict[int, ast.AST]:
    out = {}
    for n in ast.walk(root):
        for c in ast.iter_child_nodes(n):
            out[id(c)] = n
    return out


def delete_lines(ft: FileText, node: ast.stmt) -> Optional[Edit]:
    """An edit removing the statement's lines, or None when they hold anything else."""
    if not whole_lines(ft, ft.span(node)):
        return None
    span = ft.span(node)
    if ft.comments_in(Span(span.row, 1, span.end_row, len(ft.line(span.end_row)) + 1)):
        return None
    if span.end_row >= len(ft.lines):
        return None
    return Edit("", Span(span.row, 1, span.end_row + 1, 1))


def names_loaded(nodes: Iterable[ast.AST]) -> set:
    return {n.id for root in nodes for n in ast.walk(root) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)}


def names_stored(nodes: Iterable[ast.AST]) -> set:
    return {n.id for root in nodes for n in ast.walk(root)
            if isinstance(n, ast.Name) and isinstance(n.ctx, (ast.Store, ast.Del))}


def signed_int_const(node) -> Optional[int]:
    """An int literal, negative ones (`-1`) included."""
    if isinstance(node, ast.Constant) and type(node.value) is int:
        return node.value
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        inner = signed_int_const(node.operand)
        return -inner if inner is not None else None
    return None


def assigned_name(stmt: Optional[ast.AST]) -> Optional[str]:
    """`name` when `stmt` is `name = value` (one plain name as its only target), else None."""
    if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name):
        return stmt.targets[0].id
    return None


def statement_after(ctx, node: ast.stmt) -> Optional[ast.stmt]:
    """The statement that follows `node` in the block of the function at hand that holds it, else None."""
    func = ctx.function_node
    if func is None:
        return None
    stack = [func]
    while stack:
        n = stack.pop()
        for field in ("body", "orelse", "finalbody"):
            block = getattr(n, field, None)
            if isinstance(block, list) and node in block:
                i = block.index(node)
                return block[i + 1] if i + 1 < len(block) else None
        stack.extend(c for c in ast.iter_child_nodes(n)
                     if not isinstance(c, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)))
    return None
