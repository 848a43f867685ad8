"""`if cond: raise E("msg")` on tensor data → `torch._assert_async(torch.logical_not(cond), "msg")`.

The `if` reads the tensor's value into Python, so Dynamo breaks there ("Data-dependent branching");
`torch._assert_async` keeps the check in the graph (traced without a break on torch 2.13) and
raises `RuntimeError` when its condition is false.

What the source must show (else no fix): the `if` has no `else`/`elif`, its body is the single
`raise E()` / `raise E("plain string")`, its test is the tensor (or `not` the tensor) and a tensor
on every path (rewrites/paths.py), the statement has its lines to itself with no comments inside.

Eager behaviour that changes (unsafe fix, said in its message): a failed check raises
`RuntimeError` with the same text instead of `E`; on CUDA it is reported asynchronously.
"""
from __future__ import annotations

import ast
from typing import Optional

from compilelint.analysis import tensors as T
from compilelint.finding import Edit, Fix
from compilelint.fix._common import expr_text, file_text, never_raise, torch_name, whole_lines
from compilelint.fix.paths import tensor_on_every_path

MESSAGE = ("Check with `torch._assert_async(...)` instead of `if ...: raise`. Eager change: a failed check "
           "raises RuntimeError (not the original exception type), asynchronously on CUDA")


@never_raise
def raise_to_assert_async(ctx, node: ast.If, expr: ast.AST) -> Optional[Fix]:
    if node.orelse or len(node.body) != 1 or not isinstance(node.body[0], ast.Raise):
        return None
    negated = isinstance(node.test, ast.UnaryOp) and isinstance(node.test.op, ast.Not) and node.test.operand is expr
    if node.test is not expr and not negated:
        return None
    if ctx.kind(expr) != T.BOOL or not tensor_on_every_path(ctx, expr):
        return None
    exc = node.body[0].exc
    if node.body[0].cause is not None or not isinstance(exc, ast.Call) or exc.keywords or len(exc.args) > 1:
        return None
    if exc.args and not (isinstance(exc.args[0], ast.Constant) and isinstance(exc.args[0].value, str)):
        return None  # an f-string message would be built on every call, not only on failure
    ft = file_text(ctx)
    span = ft.span(node)
    if not whole_lines(ft, ft.span(node)) or not ft.line(span.row)[span.col - 1:].startswith("if") \
            or ft.comments_in(span):
        return None
    t = torch_name(ctx)
    if t is None:
        return None
    tname, imports = t
    cond = expr_text(ft, expr) if negated else f"{tname}.logical_not({expr_text(ft, expr)})"
    msg = f", {ft.segment(ft.span(exc.args[0]))}" if exc.args else ""
    return Fix("unsafe", MESSAGE, imports + (Edit(f"{tname}._assert_async({cond}{msg})", span),),
               title="Check with `torch._assert_async(...)`")
