"""CL101: `.item()` as an arithmetic operand of a tensor → the 0-d tensor, detached (unsafe).

`.detach()` rather than the bare tensor: like the Python number it passes no gradient back, so a
training step computes the same gradients."""
from __future__ import annotations

import ast
import re
from typing import Optional

from compilelint.finding import Edit, Fix, Span
from compilelint.fix._common import ARITH_OPS, file_text, in_fstring, never_raise

_ITEM_TAIL = re.compile(r"\.[ \t]*item[ \t]*\([ \t]*\)$")


@never_raise
def drop_item(ctx, call: ast.Call) -> Optional[Fix]:
    """`y * t.item()` with `y` a tensor → `y * t.detach()` (unsafe: the number becomes a 0-d tensor)."""
    parent = ctx.parent()
    if not isinstance(parent, ast.BinOp) or not isinstance(parent.op, ARITH_OPS):
        return None
    if parent.left is call:
        other = parent.right
    elif parent.right is call:
        other = parent.left
    else:
        return None
    if not ctx.is_tensor(other) or in_fstring(ctx):
        return None
    ft = file_text(ctx)
    whole, value = ft.span(call), ft.span(call.func.value)
    start = ft.offset(value.end_row, value.end_col)
    end = ft.offset(whole.end_row, whole.end_col)
    m = _ITEM_TAIL.search(ft.text[start:end])
    if m is None:
        return None
    row, col = ft.position(start + m.start())
    return Fix("unsafe", "`.item()` → `.detach()`: keep the 0-d tensor",
               (Edit(".detach()", Span(row, col, whole.end_row, whole.end_col)),), title="`.item()` → `.detach()`")
