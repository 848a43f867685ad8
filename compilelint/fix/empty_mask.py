"""`if not mask.any(): mask = None` → the statement deleted: the all-False mask is kept.

Dropping an optional mask when it masks nothing reads the mask's data into Python, so Dynamo breaks
at the `if` ("Data-dependent branching", GB0170). Without the statement the code after gets a mask
that masks nothing instead of None.

Eager behaviour that changes (unsafe fix, said in its message): the code after takes its
masked path with a mask of all False. Outputs are equal where it only applies the mask
(masked_fill, torch.where, multiplying by it), at the cost of that work; where it branches on
`mask is None` to other computations they may differ, which this statement alone does not show:
`compilelint verify --fix` judges it at the user's call.

What the source must show (else no fix): the `if` has no `else`/`elif`; its test is
`not NAME.any()` or `not torch.any(NAME)` with no other argument, NAME a boolean tensor; its body
is the single `NAME = None`; the statement has its lines to itself with no comments.
"""
from __future__ import annotations

import ast
from typing import Optional

from compilelint.analysis import tensors as T
from compilelint.finding import Fix
from compilelint.fix._common import assigned_name, delete_lines, file_text, never_raise

MESSAGE = ("Keep the mask instead of dropping it when it masks nothing (delete the `if`). Eager change: "
           "the code after takes its masked path with an all-False mask: equal outputs where it only applies "
           "the mask (masked_fill, where, multiply), its cost paid every call; where it branches on `is None` to "
           "other work outputs may differ (`compilelint verify --fix` judges)")


def _any_of(call: ast.AST) -> Optional[ast.Name]:
    """NAME for `NAME.any()` / `torch.any(NAME)` (the `torch` spelling is checked by the caller)."""
    if not isinstance(call, ast.Call) or call.keywords:
        return None
    f = call.func
    if isinstance(f, ast.Attribute) and f.attr == "any" and not call.args and isinstance(f.value, ast.Name):
        return f.value
    if isinstance(f, ast.Attribute) and f.attr == "any" and isinstance(f.value, ast.Name) \
            and len(call.args) == 1 and isinstance(call.args[0], ast.Name):
        return call.args[0]
    return None


@never_raise
def keep_empty_mask(ctx, node: ast.If, expr: ast.AST) -> Optional[Fix]:
    test = node.test
    if node.orelse or len(node.body) != 1:
        return None
    if not (isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not) and test.operand is expr):
        return None
    mask = _any_of(expr)
    if mask is None or ctx.kind(mask) != T.BOOL:
        return None
    if expr.args and not ctx.is_tensor(expr):  # `torch.any(m)`: `torch` is the module, not a local
        return None
    stmt = node.body[0]
    if not (assigned_name(stmt) == mask.id and isinstance(stmt.value, ast.Constant) and stmt.value.value is None):
        return None
    if not _tensor_elsewhere(ctx, mask.id, stmt):
        return None
    edit = delete_lines(file_text(ctx), node)
    if edit is None:
        return None
    return Fix("unsafe", MESSAGE, (edit,), title="Keep the all-False mask")


def _tensor_elsewhere(ctx, name: str, dropped: ast.stmt) -> bool:
    """`name` is a local bound only by `name = <tensor>` in its function, besides the deleted `= None`."""
    func = ctx.function_node
    if func is None or any(a.arg == name for a in ast.walk(func.args) if isinstance(a, ast.arg)):
        return False
    for node in ast.walk(func):
        if node is dropped:
            continue
        if isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == name for t in node.targets):
            if len(node.targets) != 1 or not ctx.is_tensor(node.value):
                return False
        elif isinstance(node, (ast.AugAssign, ast.AnnAssign, ast.For, ast.With, ast.NamedExpr, ast.comprehension)) \
                and any(isinstance(n, ast.Name) and n.id == name and not isinstance(n.ctx, ast.Load)
                        for n in ast.walk(node)):
            return False
    return True
