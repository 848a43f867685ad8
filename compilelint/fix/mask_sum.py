"""`x[mask].sum()` → `torch.where(mask, x, 0).sum()`: the same total without a data-dependent shape.

`x[mask]` has as many elements as the mask has True values, so Dynamo breaks ("Dynamic shape
operator"); summing the dense `torch.where(mask, x, 0)` adds zeros instead of skipping.

What the source must show (else no fix): the subscript's only use is `.sum()` with no arguments
(a full reduction, where 0 is neutral); the mask has x's shape because it is a comparison of x
itself with a number (`x > 0`, `x != pad`), `torch.isfinite(x)`/`isnan(x)`/`isinf(x)`, their `~`
negation, or a local name bound once to one of those (a mask over leading dimensions would
broadcast differently in `torch.where`).

Eager behaviour that changes (unsafe fix, said in its message): float sums add in another order
(rounding may differ in the last bits); masked-out values are read (a NaN there is replaced by 0,
as before); the dense tensor costs x's full size in memory.
"""
from __future__ import annotations

import ast
from typing import Optional

from compilelint.finding import Edit, Fix
from compilelint.fix._common import expr_text, file_text, never_raise, torch_name

MESSAGE = ("Sum `torch.where(mask, x, 0)` instead of `x[mask]`. Eager change: float sums may round differently "
           "(another order); x's masked-out values are read and replaced by 0; memory of x's full size")
ELEMENTWISE = ("torch.isfinite", "torch.isnan", "torch.isinf")


@never_raise
def where_for_mask_sum(ctx, node: ast.Subscript) -> Optional[Fix]:
    attr, call = ctx.parent(), ctx.parent(2)
    if not (isinstance(attr, ast.Attribute) and attr.attr == "sum" and isinstance(call, ast.Call)
            and call.func is attr and not call.args and not call.keywords):
        return None
    x, mask = node.value, node.slice
    if not isinstance(x, (ast.Name, ast.Attribute)) or not ctx.is_tensor(x) or not _same_shape_mask(ctx, mask, x):
        return None
    ft = file_text(ctx)
    t = torch_name(ctx)
    if t is None:
        return None
    tname, imports = t
    dense = f"{tname}.where({expr_text(ft, mask)}, {expr_text(ft, x)}, 0)"
    return Fix("unsafe", MESSAGE, imports + (Edit(dense, ft.span(node)),), title="Sum over `torch.where(mask, x, 0)`")


def _same_shape_mask(ctx, mask: ast.AST, x: ast.AST, depth: int = 0) -> bool:
    same = ast.dump(x)
    if isinstance(mask, ast.UnaryOp) and isinstance(mask.op, ast.Invert):
        return _same_shape_mask(ctx, mask.operand, x, depth)
    if isinstance(mask, ast.Compare) and len(mask.ops) == 1:
        a, b = mask.left, mask.comparators[0]
        number = (ast.Constant,)
        return (ast.dump(a) == same and isinstance(b, number)) or (ast.dump(b) == same and isinstance(a, number))
    if isinstance(mask, ast.Call) and ctx.resolve(mask.func) in ELEMENTWISE and len(mask.args) == 1 \
            and not mask.keywords:
        return ast.dump(mask.args[0]) == same
    if isinstance(mask, ast.Name) and depth == 0:
        bound = _single_local_value(ctx, mask.id)
        return bound is not None and _same_shape_mask(ctx, bound, x, 1)
    return False


def _single_local_value(ctx, name: str) -> Optional[ast.AST]:
    func = ctx.function_node
    if func is None:
        return None
    stores = [n for n in ast.walk(func) if isinstance(n, ast.Name) and n.id == name and not isinstance(n.ctx, ast.Load)]
    if len(stores) != 1:
        return None
    for n in ast.walk(func):
        if isinstance(n, ast.Assign) and len(n.targets) == 1 and n.targets[0] is stores[0]:
            return n.value
    return None
