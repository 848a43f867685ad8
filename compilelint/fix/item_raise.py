"""`if t.item() >= n: raise E("msg")` → `torch._assert_async(torch.logical_not(t >= n), "msg")`.

`.item()` in the test reads one number out of the tensor only to compare it, and Dynamo breaks
there (GB0124; with capture_scalar_outputs it breaks at the comparison instead, on an unbacked
value). Compared as a 0-d tensor, `torch._assert_async` keeps the check in the graph (traced on
torch 2.13), raising `RuntimeError` when the condition is false.

What the source must show (else no fix): the `if` has no `else`/`elif`, its body is the single
`raise E()` / `raise E(message)`, the message a string or an f-string (written as a plain string
naming its fields, fix/tensor_raise.py); its test is one comparison (`<`, `<=`, `>`, `>=`, `==`,
`!=`) with `X.item()` as an operand, X inferred a tensor and the other operand a number or tensor
(fix/tensor_assert.py's test); the statement has its lines to itself with no comments.

Eager behaviour that changes (unsafe fix, said in its message): a failed check raises
`RuntimeError` instead of `E`, with the f-string's fields named rather than their values, on CUDA
asynchronously; the comparison runs in the tensor's dtype.
"""
from __future__ import annotations

import ast
from typing import Optional

from compilelint.finding import Edit, Fix
from compilelint.fix._common import file_text, never_raise, torch_name, whole_lines
from compilelint.fix.tensor_assert import ATOMS, COMPARISONS, NOT_NUMBERS
from compilelint.fix.tensor_raise import message_text

MESSAGE = ("Check with `torch._assert_async(...)` on the 0-d tensor instead of `if ....item() ...: raise`. "
           "Eager change: a failed check raises RuntimeError (not the original exception type; an f-string "
           "message names its fields, not their values), asynchronously on CUDA; the comparison runs in the "
           "tensor's dtype")


@never_raise
def raise_on_item(ctx, call: ast.Call) -> Optional[Fix]:
    stmt = ctx.statement()
    if not isinstance(stmt, ast.If) or stmt.orelse or len(stmt.body) != 1 or not isinstance(stmt.body[0], ast.Raise):
        return None
    test, receiver = stmt.test, call.func.value
    if not (isinstance(test, ast.Compare) and len(test.ops) == 1 and isinstance(test.ops[0], COMPARISONS)):
        return None
    other = test.comparators[0] if test.left is call else test.left if test.comparators[0] is call else None
    if other is None or ctx.kind(other) in NOT_NUMBERS or not ctx.is_tensor(receiver):
        return None
    exc = stmt.body[0].exc
    if stmt.body[0].cause is not None or not isinstance(exc, ast.Call) or exc.keywords or len(exc.args) > 1:
        return None
    ft = file_text(ctx)
    msg = message_text(ft, exc.args[0]) if exc.args else ""
    span = ft.span(stmt)
    if msg is None or not whole_lines(ft, span) or not ft.line(span.row)[span.col - 1:].startswith("if") \
            or ft.comments_in(span):
        return None
    t = torch_name(ctx)
    if t is None:
        return None
    tname, imports = t
    inner = ft.segment(ft.span(receiver))
    if not isinstance(receiver, ATOMS):
        inner = f"({inner})"
    whole, cs = ft.span(test), ft.span(call)
    start, end = ft.offset(whole.row, whole.col), ft.offset(whole.end_row, whole.end_col)
    c0, c1 = ft.offset(cs.row, cs.col), ft.offset(cs.end_row, cs.end_col)
    cond = ft.text[start:c0] + inner + ft.text[c1:end]
    text = f"{tname}._assert_async({tname}.logical_not({cond}){', ' + msg if msg else ''})"
    return Fix("unsafe", MESSAGE, imports + (Edit(text, span),), title="Check with `torch._assert_async(...)`")
