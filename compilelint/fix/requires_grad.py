"""`t.requires_grad = ...` inside compiled code (Dynamo breaks at the attribute write, "setattr() on
Tensor.requires_grad", measured on torch 2.13).

- `t.requires_grad = False` → `t.requires_grad_(False)` (safe: the same in eager, the same errors on
  a non-leaf tensor that requires grad; Dynamo traces the call).
- `x.requires_grad = True` on a tensor the function made itself → guarded by `if not
  torch.compiler.is_compiling():` (unsafe). Turning gradients on has no traceable spelling
  (`requires_grad_(True)` breaks too: "intermediate leaked as output"). transformers' speech
  encoders do it so that reentrant gradient checkpointing sees an input that requires grad; the
  parameters' gradients do not depend on it. Offered only when the source proves `x` is a local
  tensor where the write runs (not a parameter the caller sees; every binding before the write a
  tensor; the write in no loop) and the function reads none of its autograd state (`.grad`,
  `.is_leaf`, `.requires_grad`, hooks).
"""
from __future__ import annotations

import ast
from typing import Optional

from compilelint.analysis.astutil import parameter_names
from compilelint.finding import Edit, Fix
from compilelint.fix._common import expr_text, file_text, never_raise, whole_lines
from compilelint.fix.guard import guard_lines
from compilelint.fix.paths import _own_nodes, tensor_when_reached

# Reading one of these on the tensor would see the difference the guard makes under compile.
AUTOGRAD_STATE = frozenset({"grad", "is_leaf", "requires_grad", "retain_grad", "register_hook", "grad_fn",
                            "register_post_accumulate_grad_hook", "retains_grad"})
GUARD_MESSAGE = ("Guard with `if not torch.compiler.is_compiling():`. Compiled change: `{name}` no longer "
                 "requires grad under compile (the parameters' gradients are the same; `{name}.grad` stays "
                 "None and reentrant gradient checkpointing sees no input that requires grad); eager unchanged")


@never_raise
def requires_grad_call(ctx, stmt: ast.Assign) -> Optional[Fix]:
    if len(stmt.targets) != 1 or not (isinstance(stmt.value, ast.Constant) and stmt.value.value is False):
        return None
    target = stmt.targets[0]
    ft = file_text(ctx)
    if not whole_lines(ft, ft.span(stmt)) or ft.comments_in(ft.span(stmt)):
        return None
    return Fix("safe", "Call `t.requires_grad_(False)`",
               (Edit(f"{expr_text(ft, target.value)}.requires_grad_(False)", ft.span(stmt)),),
               title="Call `t.requires_grad_(False)`")


@never_raise
def requires_grad_guard(ctx, stmt: ast.Assign) -> Optional[Fix]:
    """`x.requires_grad = True` on a local tensor → guarded, when the source proves it harmless."""
    if len(stmt.targets) != 1 or not isinstance(stmt.targets[0], ast.Attribute):
        return None
    if isinstance(stmt.value, ast.Constant) and stmt.value.value is False:
        return None  # requires_grad_call's case
    tensor = stmt.targets[0].value
    func = ctx.function_node
    if not isinstance(tensor, ast.Name) or func is None or not isinstance(func, (ast.FunctionDef, ast.AsyncFunctionDef)):
        return None
    params = parameter_names(func.args, starred=True)
    if tensor.id in params or not tensor_when_reached(ctx, tensor, stmt):
        return None
    for node in _own_nodes(func):
        if isinstance(node, ast.Attribute) and node is not stmt.targets[0] and node.attr in AUTOGRAD_STATE and \
                isinstance(node.value, ast.Name) and node.value.id == tensor.id:
            return None
    return guard_lines(ctx, stmt, GUARD_MESSAGE.format(name=tensor.id), "Set requires_grad only outside compile")
