"""A module-level helper that plans with NumPy's random generator (transformers' SpecAugment
`_compute_mask_indices`: `np.random.rand`, `np.random.choice`) → `@torch.compiler.disable` on it.

Dynamo traces NumPy through `torch._numpy` and draws NumPy's random numbers from torch's
generator (`torch._dynamo.config.use_numpy_random_stream` is False), so the compiled run masks
other frames than eager, and the planning breaks inside (`np.random.choice`, `.item()`). Run
eagerly, the helper draws from NumPy's own generator as in eager and costs one break at its call.
Measured on wav2vec2 in train mode (torch 2.13, CPU): 16 → 13 breaks, and the compiled outputs and
gradients go from differing from eager to bitwise equal.

Safe: `torch.compiler.disable` does nothing outside torch.compile. What the source must show (else
no fix): the call sits in a module-level `def` (not a method, not nested) with no decorator, which
the file does not hand to `torch.compile` itself.
"""
from __future__ import annotations

import ast
from typing import Optional

from compilelint.finding import Edit, Fix, Span
from compilelint.fix._common import never_raise, newline, torch_name

MESSAGE = ("Run `{name}` eagerly: `@{torch}.compiler.disable`. Under compile its NumPy random draws come "
           "from NumPy's generator as in eager (Dynamo draws them from torch's), and it costs one break "
           "at its call instead of breaking inside. Eager behaviour is unchanged")


@never_raise
def disable_numpy_planner(ctx) -> Optional[Fix]:
    func, info = ctx.function_node, ctx.function
    if func is None or info is None or ctx.cls is not None or "." in info.qualname:
        return None
    if not isinstance(func, ast.FunctionDef) or func.decorator_list:
        return None
    if func.col_offset:
        return None  # a `def` under an `if` or `try` at module level: left alone
    if func.name in ctx.fixes.compiled_names:
        return None  # `torch.compile(helper)`: disabling it would undo the user's compile
    t = torch_name(ctx)
    if t is None:
        return None
    tname, imports = t
    edit = Edit(f"@{tname}.compiler.disable{newline(ctx)}", Span(func.lineno, 1, func.lineno, 1))
    return Fix("safe", MESSAGE.format(name=func.name, torch=tname), imports + (edit,),
               title="Run the helper eagerly: `@compiler.disable`")
