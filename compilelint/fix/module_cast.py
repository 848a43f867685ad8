"""A submodule's dtype conversion in compiled code (`self.m = self.m.to(dtype)`, `self.m.to(dtype)`,
`self.m.half()`) → the same statement under `if self.m.weight.dtype != dtype:`.

`nn.Module.to` and its shorthands run `nn.Module._apply`, which Dynamo does not trace when a
parameter changes (its `nn.Parameter(...)`, GB0264). Torch 2.11 also breaks there when nothing
changes (the truth corpus: a Switch-style router converting its classifier to float32 in every
forward, the model already in float32); 2.13 traces a conversion that changes nothing. Under the
guard, the call runs only when the weight has another dtype, so a model already in that dtype
traces on both (measured on 2.13: eval and train, no break; a weight of another dtype still breaks
once, as the conversion itself does).

What the source must show (else no fix): the conversion is the statement (`self.m = self.m.<cast>(...)`
or `self.m.<cast>(...)`), its target dtype is plain (`.half()`/`.float()`/`.bfloat16()`/`.double()`,
`.to(dtype)`, `.to(dtype=...)` with a torch dtype or a name or attribute called `*dtype`; no device,
no tensor), and every class the class's `self.m` may hold is a torch.nn layer that always owns a
`weight` parameter and no buffers (a LayerNorm may have no weight; a user module may have none).

Eager behaviour that changes (unsafe fix, said in its message): when the weight already has the
dtype, nothing is converted, so a bias or other parameter kept in a dtype other than the weight's
stays as it is (`.to` would have converted it).
"""
from __future__ import annotations

import ast
from typing import Optional, Tuple

from compilelint.analysis.astutil import is_self
from compilelint.finding import Fix
from compilelint.fix._common import expr_text, file_text, never_raise, torch_name
from compilelint.fix.guard import wrap_lines

# nn.Module methods that convert every floating-point parameter to one dtype.
DTYPE_CASTS = {"half": "float16", "float": "float32", "bfloat16": "bfloat16", "double": "float64"}
# torch.nn layers whose `weight` is always a parameter (no affine switch) and that hold no buffers.
WEIGHTED_LAYERS = frozenset({
    "Linear", "Bilinear", "Conv1d", "Conv2d", "Conv3d", "ConvTranspose1d", "ConvTranspose2d", "ConvTranspose3d",
    "Embedding", "EmbeddingBag", "PReLU",
})
TORCH_DTYPES = frozenset(f"torch.{n}" for n in (
    "float16", "half", "float32", "float", "bfloat16", "float64", "double", "complex64", "complex128",
))
MESSAGE = ("Convert only when needed: `if {module}.weight.dtype != {dtype}:`. Eager change: when the weight "
           "already has that dtype nothing is converted, so a bias or other parameter kept in another dtype "
           "stays as it is")


def _weighted(classes) -> bool:
    return bool(classes) and all(c.startswith("torch.nn.") and c.rsplit(".", 1)[-1] in WEIGHTED_LAYERS
                                 for c in classes)


def _is_dtype(ctx, node) -> bool:
    """`torch.float32`, `x.dtype`, `self.dtype`, `router_dtype`: a dtype, never a device or a tensor."""
    if isinstance(node, ast.Attribute) and ctx.resolve(node) in TORCH_DTYPES:
        return True
    if isinstance(node, ast.Attribute):
        return node.attr.endswith("dtype") and isinstance(node.value, (ast.Name, ast.Attribute))
    return isinstance(node, ast.Name) and node.id.endswith("dtype")


def _target_dtype(ctx, call: ast.Call) -> Optional[Tuple[str, tuple]]:
    """The dtype the call converts to as source text (`torch.float16` spelt as this function can),
    and the edits that text needs (an `import torch`); None when it is not a plain dtype."""
    method = call.func.attr
    if method in DTYPE_CASTS:
        if call.args or call.keywords:
            return None
        t = torch_name(ctx)
        return (f"{t[0]}.{DTYPE_CASTS[method]}", t[1]) if t is not None else None
    if method != "to" or any(k.arg not in ("dtype", "non_blocking") for k in call.keywords):
        return None
    given = [k.value for k in call.keywords if k.arg == "dtype"] + list(call.args[:1])
    if len(given) != 1 or len(call.args) > 1 or not _is_dtype(ctx, given[0]):
        return None
    return expr_text(file_text(ctx), given[0]), ()


@never_raise
def guard_conversion(ctx, stmt: ast.stmt, call: ast.Call, classes) -> Optional[Fix]:
    """`stmt` (the conversion `call` of a submodule holding `classes`) under a dtype test."""
    module = call.func.value
    if not (isinstance(module, ast.Attribute) and is_self(module.value)) or not _weighted(classes):
        return None
    if isinstance(stmt, ast.Assign):
        target = stmt.targets[0]
        if len(stmt.targets) != 1 or stmt.value is not call or not (
                isinstance(target, ast.Attribute) and is_self(target.value) and target.attr == module.attr):
            return None
    elif not (isinstance(stmt, ast.Expr) and stmt.value is call):
        return None
    target = _target_dtype(ctx, call)
    if target is None:
        return None
    dtype, imports = target
    text = expr_text(file_text(ctx), module)
    return wrap_lines(ctx, stmt, f"if {text}.weight.dtype != {dtype}:", MESSAGE.format(module=text, dtype=dtype),
                      "Convert only when the dtype differs", imports)
