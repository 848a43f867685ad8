"""`assert a and b, msg` → `assert a, msg` then `assert b, msg`: each check stays in the graph.

Dynamo traces `assert t` on one tensor as `torch._assert_async` (no break), but the jump of `and`
calls bool() on every operand before the last and breaks (GB0170; measured on torch 2.13 with
IBert's NaN check). Split, each operand is asserted on its own.

Safe: Python evaluates the operands, calls bool() on them and builds the message in the same order
either way, so eager behaviour is the same for any operands. Under compile a failed tensor check
raises Dynamo's RuntimeError instead of AssertionError, as any traced `assert` on a tensor does.

What the source must show (else no fix): the `assert` has its lines to itself with no comment in
them; its test is one `and` of plain operands; its message, if any, is a string constant (Dynamo
traces an `assert` only with a constant message).
"""
from __future__ import annotations

import ast
from typing import Optional

from compilelint.finding import Edit, Fix
from compilelint.fix._common import expr_text, file_text, never_raise, newline, whole_lines

MESSAGE = ("Assert each condition on its own: Dynamo traces an `assert` on one tensor. Eager behaviour is "
           "unchanged; under compile a failed check raises RuntimeError, as any traced tensor assert does")


@never_raise
def split_assert(ctx, stmt: ast.Assert) -> Optional[Fix]:
    test = stmt.test
    if not (isinstance(test, ast.BoolOp) and isinstance(test.op, ast.And)):
        return None
    if stmt.msg is not None and not (isinstance(stmt.msg, ast.Constant) and isinstance(stmt.msg.value, str)):
        return None
    ft = file_text(ctx)
    span = ft.span(stmt)
    if not whole_lines(ft, ft.span(stmt)) or ft.comments_in(span):
        return None
    indent = ft.line(span.row)[: span.col - 1]
    msg = ft.segment(ft.span(stmt.msg)) if stmt.msg is not None else ""
    msg = f", ({msg})" if "\n" in msg else f", {msg}" if msg else ""
    parts = []
    for value in test.values:
        text = expr_text(ft, value)
        if "\n" in text:  # a continued line needs brackets around it
            text = f"({text})"
        parts.append(f"assert {text}{msg}")
    return Fix("safe", MESSAGE, (Edit(f"{newline(ctx)}{indent}".join(parts), span),),
               title="Split into one assert per condition")
