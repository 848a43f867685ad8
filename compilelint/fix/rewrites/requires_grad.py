"""`t.requires_grad = False` → `t.requires_grad_(False)` (safe: the same in eager, the same errors on a
non-leaf tensor that requires grad; Dynamo traces the call, verified on torch 2.13, and breaks at
the attribute write). Only the constant `False`: turning gradients on breaks in both spellings."""
from __future__ import annotations

import ast
from typing import Optional

from compilelint.finding import Edit, Fix
from compilelint.fix.builders._common import expr_text, file_text
from compilelint.fix.rewrites._shared import never_raise, whole_lines


@never_raise
def requires_grad_call(ctx, stmt: ast.Assign) -> Optional[Fix]:
    if len(stmt.targets) != 1 or not (isinstance(stmt.value, ast.Constant) and stmt.value.value is False):
        return None
    target = stmt.targets[0]
    ft = file_text(ctx)
    if not whole_lines(ft, stmt) or ft.comments_in(ft.span(stmt)):
        return None
    return Fix("safe", "Call `t.requires_grad_(False)`",
               (Edit(f"{expr_text(ft, target.value)}.requires_grad_(False)", ft.span(stmt)),))
