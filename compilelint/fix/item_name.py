"""`s = t.item()` whose Python number only feeds tensor arithmetic → `s = t.detach()` (the 0-d tensor).

`.item()` breaks the graph to read one number (GB0124); when every use of that number is an
operand of `+ - * / // % **` beside a tensor, the 0-d tensor computes the same and Dynamo keeps it
in the graph. `.detach()`, not the bare tensor: like the Python number, it passes no gradient back
(dropping `.item()` alone would change the parameters' gradients in training). transformers' and timm's scale factors (`scale = x.abs().max().item(); y = x / scale`)
have this shape.

What the source must show (else no fix): the statement is `NAME = X.item()` with X a tensor, NAME
is bound nowhere else in the function (no loop, augmented assignment or second assignment), it is
not a parameter, global or closure name, and every read of NAME is one operand of an arithmetic
BinOp whose other operand is a tensor (the analysis proves it). A NAME that reaches a condition,
a call, a return, a container or a format string is a Python value there: no fix.

Eager behaviour that changes (unsafe fix, said in its message): see notes.ZERO_D.
"""
from __future__ import annotations

import ast
from typing import Optional

from compilelint.analysis.astutil import parameter_names
from compilelint.finding import Edit, Fix, Span
from compilelint.fix._common import ARITH_OPS, file_text, never_raise
from compilelint.fix.notes import ZERO_D
from compilelint.fix.paths import _own_nodes

MESSAGE = ("Keep the 0-d tensor: `.item()` → `.detach()` (its number only feeds tensor arithmetic). "
           f"Eager change: {ZERO_D}")


@never_raise
def item_feeds_tensors(ctx, call: ast.Call) -> Optional[Fix]:
    stmt = ctx.statement()
    if not (isinstance(stmt, ast.Assign) and stmt.value is call and len(stmt.targets) == 1
            and isinstance(stmt.targets[0], ast.Name)):
        return None
    name = stmt.targets[0].id
    func = ctx.function_node
    if not isinstance(func, (ast.FunctionDef, ast.AsyncFunctionDef)) or not ctx.is_tensor(call.func.value):
        return None
    if name in parameter_names(func.args, starred=True):
        return None
    up = {id(c): n for n in _own_nodes(func) for c in ast.iter_child_nodes(n)}
    reads = 0
    for node in _own_nodes(func):
        if isinstance(node, (ast.Global, ast.Nonlocal)) and name in node.names:
            return None
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)) and \
                name in {n.id for n in ast.walk(node) if isinstance(n, ast.Name)}:
            return None  # read or bound by a nested scope: its uses are not all visible here
        if not (isinstance(node, ast.Name) and node.id == name):
            continue
        if not isinstance(node.ctx, ast.Load):
            if node is not stmt.targets[0]:
                return None  # bound twice
            continue
        parent = up.get(id(node))
        if not (isinstance(parent, ast.BinOp) and isinstance(parent.op, ARITH_OPS)):
            return None
        other = parent.right if parent.left is node else parent.left
        if not ctx.is_tensor(other):
            return None
        reads += 1
    if not reads:
        return None
    ft = file_text(ctx)
    whole, receiver = ft.span(call), ft.span(call.func.value)
    tail = ft.text[ft.offset(receiver.end_row, receiver.end_col):ft.offset(whole.end_row, whole.end_col)]
    if tail.replace(" ", "") != ".item()":
        return None
    return Fix("unsafe", MESSAGE, (Edit(".detach()", Span(receiver.end_row, receiver.end_col, whole.end_row, whole.end_col)),),
               title="`.item()` → `.detach()`")
