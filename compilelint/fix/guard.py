"""CL201-CL204: side-effect statements → guarded by `if not torch.compiler.is_compiling():` (unsafe:
the statement no longer runs under compile)."""
from __future__ import annotations

import ast
from typing import Optional

from compilelint.file_text import FileText
from compilelint.finding import Edit, Fix, Span
from compilelint.fix._common import GUARD, file_text, never_raise, newline, torch_name, whole_lines


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
        owner = ctx.function_node
    if owner is not None:
        outer = ft.indent_of(owner.lineno)
        if indent.startswith(outer) and len(indent) > len(outer):
            return indent[len(outer):]
    return "\t" if indent.startswith("\t") else "    "


@never_raise
def guard_statement(ctx, call: ast.Call, what: str = "the call") -> Optional[Fix]:
    """Wrap an expression statement in `if not torch.compiler.is_compiling():` (unsafe: it no longer
    runs under compile)."""
    stmt = ctx.statement()
    if not isinstance(stmt, ast.Expr) or stmt.value is not call:
        return None
    return guard_lines(ctx, stmt, f"Guard {what} with `if not torch.compiler.is_compiling():`",
                       f"Skip {what} under torch.compile")


def guard_lines(ctx, stmt: ast.stmt, message: str, title: str) -> Optional[Fix]:
    """The statement's lines under `if not torch.compiler.is_compiling():` (unsafe, with `message`
    and `title`)."""
    t = torch_name(ctx)
    if t is None:
        return None
    tname, imports = t
    return wrap_lines(ctx, stmt, GUARD.format(torch=tname), message, title, imports)


def wrap_lines(ctx, stmt: ast.stmt, header: str, message: str, title: str, imports=()) -> Optional[Fix]:
    """The statement's lines indented one level under `header` (an `if ...:` line; unsafe, with
    `message` and the quick-fix `title`), plus the `imports` edits the header needs."""
    ft = file_text(ctx)
    span = ft.span(stmt)
    if not whole_lines(ft, span):
        return None
    in_string = ft.rows_starting_in_string(span.row, span.end_row) if span.end_row > span.row else set()
    if in_string is None:
        return None  # can't tell string continuation lines from code: don't re-indent blindly
    indent = ft.line(span.row)[: span.col - 1]
    unit = _indent_unit(ctx, ft, stmt, indent)
    nl = newline(ctx)
    parts = [indent + header + nl + indent + unit]
    for row in range(span.row, span.end_row + 1):
        line = ft.lines[row - 1]
        piece = line[span.col - 1:] if row == span.row else line
        if row == span.end_row:
            cut = span.end_col - 1 - (0 if row != span.row else span.col - 1)
            piece = piece[:cut]
        if row != span.row and piece.strip() and row not in in_string:
            piece = unit + piece
        parts.append(piece)
    content = "".join(parts)
    return Fix("unsafe", message, tuple(imports) + (Edit(content, Span(span.row, 1, span.end_row, span.end_col)),),
               title=title)
