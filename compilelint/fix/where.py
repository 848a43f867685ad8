"""CL104: tensor-driven branches → `torch.where` (unsafe: both sides are evaluated)."""
from __future__ import annotations

import ast
from typing import List, Optional, Sequence, Tuple

from compilelint.analysis import tensors as T
from compilelint.analysis.astutil import parameter_names
from compilelint.finding import Edit, Fix, Span
from compilelint.fix._common import (
    assigned_name, expr_text, file_text, in_fstring, names_read, never_raise, newline, statement_after, torch_name, whole_lines,
)
from compilelint.fix.warn_guard import is_warning_call

MASKED = ("; the masked writes by the tested mask run unconditionally (a write through an all-False mask "
          "writes nothing; its value is computed on the empty selection)")
WARNED = ("; its warning stays in `if not torch.compiler.is_compiling() and (cond):` (eager: the condition is "
          "evaluated twice; under compile the warning no longer runs)")


def _condition(test: ast.AST, expr: ast.AST) -> Tuple[Optional[ast.AST], bool]:
    """(the tensor condition, whether the branches swap): `if c:` or `if not c:` only."""
    if test is expr:
        return expr, False
    if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not) and test.operand is expr:
        return expr, True
    return None, False


# Expressions `.bool()` can follow without parentheses.
POSTFIXABLE = (ast.Name, ast.Attribute, ast.Call, ast.Subscript)


def _mask_text(ctx, ft, cond: ast.AST) -> Optional[str]:
    """The text of a boolean tensor that holds what `bool(cond)` answers: a boolean tensor as written;
    another tensor (`if total:`) `.bool()`: non-zero is True, NaN too, as Python's bool of it."""
    kind = ctx.kind(cond)
    if kind == T.BOOL:
        return expr_text(ft, cond)
    if kind != T.TENSOR:
        return None
    text = expr_text(ft, cond)
    return f"{text}.bool()" if isinstance(cond, POSTFIXABLE) else f"({text}).bool()"


@never_raise
def where_for_ifexp(ctx, node: ast.IfExp, expr: ast.AST) -> Optional[Fix]:
    """`a if c else b` → `torch.where(c, a, b)` (unsafe: both sides are evaluated); a test that is
    not a boolean tensor is tested as `c.bool()`."""
    cond, swap = _condition(node.test, expr)
    if cond is None or ctx.kind(cond) not in T.TENSORISH or in_fstring(ctx):
        return None
    if not (ctx.is_tensor(node.body) or ctx.is_tensor(node.orelse)):
        return None
    if _not_a_number(node.body) or _not_a_number(node.orelse):
        return None  # `torch.where(c, t, None)` raises
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
    content = f"{name}.where({_mask_text(ctx, ft, cond)}, {a}, {b})"
    message = "Replace with `torch.where(cond, a, b)`"
    return Fix("unsafe", message, imports + (Edit(content, ft.span(node)),), title=message)


def _branch_assignments(stmts: Sequence[ast.stmt]) -> Optional[List[Tuple[str, ast.AST]]]:
    out, seen = [], set()
    for s in stmts:
        name = assigned_name(s)
        if name is None:
            return None
        if name in seen:
            return None
        seen.add(name)
        out.append((name, s.value))
    return out or None


def _not_a_number(value: ast.AST) -> bool:
    """A constant torch.where cannot take as a side (None, a string)."""
    return isinstance(value, ast.Constant) and type(value.value) not in (bool, int, float)


def _bound_before(ctx, name: str, row: int) -> bool:
    func = ctx.function_node
    if func is None:
        return False
    if name in parameter_names(func.args):
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


def _header_comment(ft, node: ast.If) -> Optional[Tuple[Span, str]]:
    """(its span, its text) of a comment after the colon of `if <test>:`, else None."""
    row = node.test.end_lineno
    if node.body[0].lineno == row:
        return None  # `if c: y = a` on one line: the comment belongs to the body
    found = ft.comment_on(row)
    if found is None or found[0] < ft.span(node.test).end_col:
        return None
    col, text = found
    return Span(row, col, row, col + len(text)), text


def _any_of(ctx, cond: ast.AST) -> Optional[str]:
    """NAME of `NAME.any()` / `torch.any(NAME)` (no other argument), else None."""
    if not isinstance(cond, ast.Call) or cond.keywords:
        return None
    f = cond.func
    if isinstance(f, ast.Attribute) and f.attr == "any" and not cond.args and isinstance(f.value, ast.Name):
        return f.value.id
    if ctx.resolve(f) == "torch.any" and len(cond.args) == 1 and isinstance(cond.args[0], ast.Name):
        return cond.args[0].id
    return None


def _masked_writes(stmts: Sequence[ast.stmt], mask: Optional[str]) -> int:
    """How many statements lead `stmts` as `X[mask] = value` (X a name other than the mask): writes
    that write nothing when the mask is all False, so they need no `if mask.any()`."""
    n = 0
    for s in stmts:
        if mask is None or not (isinstance(s, ast.Assign) and len(s.targets) == 1):
            break
        t = s.targets[0]
        if not (isinstance(t, ast.Subscript) and isinstance(t.value, ast.Name) and t.value.id != mask
                and isinstance(t.slice, ast.Name) and t.slice.id == mask):
            break
        n += 1
    return n


def _dedented_rows(ft, first: int, last: int, by: int) -> Optional[List[str]]:
    rows = [ft.line(r).rstrip("\r\n") for r in range(first, last + 1)]
    if any(r.strip() and not r[:by].isspace() for r in rows):
        return None  # a continuation line left of the body's indent
    return [r[by:] for r in rows]


@never_raise
def where_for_if(ctx, node: ast.If, expr: ast.AST) -> Optional[Fix]:
    """`if c: y = a` / `else: y = b` → `y = torch.where(c, a, b)`; no else: `y = torch.where(c, a, y)`.
    Warning calls leading the `if` branch stay in `if not torch.compiler.is_compiling() and (c):`; a
    comment on the `if` line moves to the first new statement."""
    cond, swap = _condition(node.test, expr)
    if cond is None or ctx.kind(cond) != T.BOOL:
        return None
    ft = file_text(ctx)
    span = ft.span(node)
    if not whole_lines(ft, span) or not ft.line(span.row)[span.col - 1:].startswith("if"):
        return None  # shares a line, or is an `elif`
    if node.orelse and isinstance(node.orelse[0], ast.If):
        inner = ft.span(node.orelse[0])
        if ft.line(inner.row)[inner.col - 1:].startswith("elif"):
            return None
    # Warnings leading the `if` branch stay, in an `if` skipped under compile (as fix/warn_guard.py)
    warns = 0
    while warns < len(node.body) and is_warning_call(node.body[warns]):
        warns += 1
    # `if mask.any(): x[mask] = v; ...`: the writes leave the `if` (see _masked_writes)
    writes = 0 if warns or node.orelse or swap else _masked_writes(node.body, _any_of(ctx, cond))
    body = _branch_assignments(node.body[warns + writes:])
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
            for read in names_read(value) & set(names):
                if read in assigned or order[read] < order[n]:
                    return None
            assigned.add(n)
    if len(names) > 1 and names_read(cond) & set(names):
        return None
    if not all(ctx.is_tensor(true[n]) or ctx.is_tensor(false[n]) for n in names):
        return None
    if any(_not_a_number(v) for v in [*true.values(), *false.values()]):
        return None  # `torch.where(c, t, None)` raises: a side is a tensor or a Python number
    keep = [ft.span(cond)] + [ft.span(v) for v in true.values()]
    if node.orelse:
        keep += [ft.span(v) for v in false.values()]
    if warns or writes:  # copied as whole lines, their comments with them: each must have its lines to itself
        first, last = node.body[0].lineno, node.body[warns + writes - 1].end_lineno
        if first <= node.test.end_lineno or last >= node.body[warns + writes].lineno:
            return None
        keep.append(Span(first, 1, last, len(ft.line(last)) + 1))
    header = _header_comment(ft, node)
    if header is not None:
        keep.append(header[0])
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
    if header is not None:  # the `if` line's comment stays, on the statement that replaces it
        lines[0] += "  " + header[1]
    indent = ft.line(span.row)[: span.col - 1]
    nl = newline(ctx)
    content = (nl + indent).join(lines)
    message = "Replace the branch with `torch.where(cond, a, b)`"
    if writes:
        rows = _dedented_rows(ft, first, last, ft.span(node.body[0]).col - span.col)
        if rows is None:
            return None
        content = nl.join([rows[0][len(indent):], *rows[1:]]) + nl + indent + content
        message += MASKED
    if warns:
        warn_rows = [ft.line(r).rstrip("\r\n") for r in range(first, last + 1)]
        guard = f"if not {tname}.compiler.is_compiling() and ({expr_text(ft, node.test)}):"
        content = nl.join([guard] + warn_rows) + nl + indent + content
        message += WARNED
    return Fix("unsafe", message, imports + (Edit(content, span),), title="Replace the branch with `torch.where`")


def _joined_mask(ctx, ft, tname: str, test: ast.AST, expr: ast.AST) -> Optional[str]:
    """`a and b` / `a or b` of boolean tensors, `expr` the first → `torch.logical_and(a, b)` (bool() of
    `a and b` on one-element tensors is bool() of their logical and); else None."""
    if not (isinstance(test, ast.BoolOp) and test.values[0] is expr):
        return None
    if any(ctx.kind(v) != T.BOOL for v in test.values):
        return None
    fn = "logical_and" if isinstance(test.op, ast.And) else "logical_or"
    text = expr_text(ft, test.values[0])
    for v in test.values[1:]:
        text = f"{tname}.{fn}({text}, {expr_text(ft, v)})"
    return text


def _comment_rows(ft, first: int, last: int) -> Optional[List[str]]:
    """The rows in [first, last] that hold only a comment; None if a comment shares a row with code."""
    rows = []
    for r in range(first, last + 1):
        found = ft.comment_on(r)
        if found is None:
            continue
        if ft.line(r)[: found[0] - 1].strip():
            return None
        rows.append(found[1])
    return rows


@never_raise
def where_for_return(ctx, node: ast.If, expr: ast.AST) -> Optional[Fix]:
    """`if c: return a` followed by `return b` → `return torch.where(c, a, b)` (unsafe: both sides are
    evaluated, and the function returns a tensor either way); `c` may be `p and q` / `p or q` of
    boolean tensors; comments on rows of their own in the branch move above the new statement."""
    cond, swap = _condition(node.test, expr)
    joined = isinstance(node.test, ast.BoolOp) and cond is None
    if (cond is None and not joined) or node.orelse or len(node.body) != 1:
        return None
    early, last = node.body[0], statement_after(ctx, node)
    if not (isinstance(early, ast.Return) and isinstance(last, ast.Return)):
        return None
    if early.value is None or last.value is None or _not_a_number(early.value) or _not_a_number(last.value):
        return None
    if not (ctx.is_tensor(early.value) or ctx.is_tensor(last.value)):
        return None
    ft = file_text(ctx)
    if_span, last_span = ft.span(node), ft.span(last)
    span = Span(if_span.row, if_span.col, last_span.end_row, last_span.end_col)
    if not whole_lines(ft, span) or not ft.line(span.row)[span.col - 1:].startswith("if"):
        return None  # shares a line, or is an `elif`
    keep = [ft.span(n) for n in (node.test, early.value, last.value)]
    header = _header_comment(ft, node)  # `if c:  # why`: the comment stays, on the new statement
    if header is not None:
        keep.append(header[0])
    # Comments on rows of their own between the `if` line and the early `return` move above the new statement.
    moved = _comment_rows(ft, node.test.end_lineno + 1, early.lineno - 1)
    if moved is None:
        return None
    keep += [Span(r, 1, r, len(ft.line(r)) + 1) for r in range(node.test.end_lineno + 1, early.lineno)]
    if ft.comments_in(span, keep):
        return None
    t = torch_name(ctx)
    if t is None:
        return None
    tname, imports = t
    mask = _joined_mask(ctx, ft, tname, node.test, expr) if joined else _mask_text(ctx, ft, cond)
    if mask is None:
        return None
    a, b = expr_text(ft, early.value), expr_text(ft, last.value)
    if swap:
        a, b = b, a
    message = ("Return `torch.where(cond, a, b)` instead of returning early (both sides are computed, their "
               "errors and NaN/inf too; the result is always a tensor, of both sides' promoted dtype)")
    content = f"return {tname}.where({mask}, {a}, {b})" + ("  " + header[1] if header is not None else "")
    indent = ft.line(span.row)[: span.col - 1]
    content = "".join(f"{c}{newline(ctx)}{indent}" for c in moved) + content
    return Fix("unsafe", message, imports + (Edit(content, span),), title="Return `torch.where(c, a, b)`")
