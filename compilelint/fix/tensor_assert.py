"""`assert t.item() <= n` → `torch._assert_async(t <= n)`: the check stays in the graph.

`.item()` in an `assert` breaks the graph only to compare one number; `torch._assert_async(cond)`
takes the 0-d tensor and Dynamo traces it (no break, verified on torch 2.13), raising
`RuntimeError` when the condition is false, in eager and compiled code alike.

What the source must show (else no fix): the `assert` statement has its lines to itself; its test
is `X.item()` or one comparison (`<`, `<=`, `>`, `>=`, `==`, `!=`) with `X.item()` as an operand,
X inferred a tensor, the other operand not a container, None or module (a number or a tensor: the
comparison means the same on a 0-d tensor); its message, if any, is a plain string (an f-string
would now be built on every call, not only on failure).

Eager behaviour that changes (unsafe fix, said in its message): a failed check raises
`RuntimeError` instead of `AssertionError`; it also runs under `python -O`; on CUDA it is reported
asynchronously (at a later synchronising call); the comparison is done in the tensor's dtype.
"""
from __future__ import annotations

import ast
from typing import Optional

from compilelint.analysis import tensors as T
from compilelint.finding import Edit, Fix
from compilelint.fix._common import file_text, never_raise, torch_name, whole_lines

MESSAGE = ("Check with `torch._assert_async(cond)` on the 0-d tensor. Eager change: a failed check raises "
           "RuntimeError (not AssertionError), also under `python -O`, asynchronously on CUDA; the comparison "
           "runs in the tensor's dtype")
COMPARISONS = (ast.Lt, ast.LtE, ast.Gt, ast.GtE, ast.Eq, ast.NotEq)
NOT_NUMBERS = (T.SEQ, T.MODULE, T.NONE, T.LOGGER)
# Receivers whose source text can stand as a comparison operand without parentheses.
ATOMS = (ast.Name, ast.Attribute, ast.Call, ast.Subscript, ast.Constant)


@never_raise
def assert_async(ctx, call: ast.Call) -> Optional[Fix]:
    """The fix for a `.item()` finding inside an `assert`."""
    stmt = ctx.statement()
    if not isinstance(stmt, ast.Assert) or ctx.parent() is None:
        return None
    receiver = call.func.value
    if not ctx.is_tensor(receiver):
        return None
    test = stmt.test
    if test is not call:
        if not (isinstance(test, ast.Compare) and len(test.ops) == 1 and isinstance(test.ops[0], COMPARISONS)):
            return None
        other = test.comparators[0] if test.left is call else test.left if test.comparators[0] is call else None
        if other is None or ctx.kind(other) in NOT_NUMBERS:
            return None
    if stmt.msg is not None and not (isinstance(stmt.msg, ast.Constant) and isinstance(stmt.msg.value, str)):
        return None
    ft = file_text(ctx)
    if not whole_lines(ft, ft.span(stmt)) or ft.comments_in(ft.span(stmt)):
        return None
    t = torch_name(ctx)
    if t is None:
        return None
    tname, imports = t
    inner = ft.segment(ft.span(receiver))
    if not isinstance(receiver, ATOMS):
        inner = f"({inner})"
    whole = ft.span(test)
    start, end = ft.offset(whole.row, whole.col), ft.offset(whole.end_row, whole.end_col)
    cs = ft.span(call)
    c0, c1 = ft.offset(cs.row, cs.col), ft.offset(cs.end_row, cs.end_col)
    cond = ft.text[start:c0] + inner + ft.text[c1:end]
    msg = f", {ft.segment(ft.span(stmt.msg))}" if stmt.msg is not None else ""
    return Fix("unsafe", MESSAGE, imports + (Edit(f"{tname}._assert_async({cond}{msg})", ft.span(stmt)),),
               title="Check with `torch._assert_async(cond)`")
