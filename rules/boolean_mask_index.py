import ast

from compilelint.analysis import tensors as T
from compilelint.fix import builder
from compilelint.rule import Rule

# fix builders, imported when a finding asks for its fix
where_for_mask_sum = builder("mask_sum", "where_for_mask_sum")
unconditional_masked_writes = builder("mask_count", "unconditional_masked_writes")


class BooleanMaskIndex(Rule):
    """
    ## What it does
    Finds reads of a tensor indexed by a boolean mask, `x[mask]` (also `x[:, mask]`), inside
    compiled code. Assignments through a mask (`x[mask] = 0`, `x[mask] += v`) are not reported:
    they keep the shape and trace cleanly.

    ## Why is this bad?
    The result has as many rows as the mask has `True` values, which is data: a plain
    `torch.compile` graph-breaks ("Dynamic shape operator", GB0036) and the next call
    recompiles for the new size.

    ## Example
    ```python
    valid = scores[scores > threshold]
    return valid.mean()
    ```

    ## Use instead
    Keep the shape: `torch.where(mask, x, 0)`, `x.masked_fill(~mask, 0)`, or a masked
    reduction (`(x * mask).sum() / mask.sum()`). Or set
    `torch._dynamo.config.capture_dynamic_output_shape_ops = True`.

    ## Fix safety
    Unsafe: `x[mask].sum()` (`.sum()` with no arguments) → `torch.where(mask, x, 0).sum()`, only
    when the mask has `x`'s shape because it is made from `x` itself: a comparison of `x` with a number,
    `torch.isfinite(x)` / `isnan(x)` / `isinf(x)`, their `~`, or a local bound once to one of those.
    Float sums add in another order (the last bits may round differently); the masked-out values are
    read (a NaN there is replaced by 0, as before); the dense tensor costs `x`'s full size in memory.
    Unsafe: `n = x[mask].nelement()` followed by `if n:` whose body writes through the same mask
    (`x[mask] = v`) and then only warns → the writes unconditional (an all-False mask writes
    nothing), the warnings under `if not torch.compiler.is_compiling() and n:`; with
    `capture_dynamic_output_shape_ops` nothing then guards on the data-dependent count. Eager: with no
    True value the writes still run (writing nothing, but bumping the tensor's version) and the mask is
    computed once more (fix/mask_count.py).

    ## References
    https://meta-pytorch.github.io/compile-graph-break-site/gb/gb0036.html
    """

    code = "CL302"
    name = "boolean-mask-index"
    message = ("indexing with a boolean mask has a data-dependent size and graph-breaks ({gb}): use "
               "torch.where(mask, x, 0) / masked_fill, or set torch._dynamo.config.capture_dynamic_output_shape_ops = True")
    gb_types = ("Dynamic shape operator",)
    gb_ids = {"2.13": ("GB0036",), "2.11": ("GB0036",)}
    fix = "sometimes"  # unsafe: `x[x > 0].sum()` → `torch.where(x > 0, x, 0).sum()` (rewrites/mask_sum.py)

    # (before, after `--fix --unsafe-fixes`): what the fix does; tests/test_fix.py runs them.
    FIXES = [
        (
            """
import torch

@torch.compile
def positive_total(x: torch.Tensor):
    return x[x > 0].sum()
""",
            """
import torch

@torch.compile
def positive_total(x: torch.Tensor):
    return torch.where(x > 0, x, 0).sum()
""",
        ),
    ]

    def visit_Subscript(self, node: ast.Subscript):
        if not isinstance(node.ctx, ast.Load) or not self.ctx.is_tensor(node.value):
            return
        index = node.slice
        parts = index.elts if isinstance(index, ast.Tuple) else [index]
        if any(self.ctx.kind(p) == T.BOOL for p in parts):
            self.report(node, fix=where_for_mask_sum(self.ctx, node) or unconditional_masked_writes(self.ctx, node))

    INVALID = [
        """
import torch
from torch import nn

class Filter(nn.Module):
    def forward(self, x, scores):
        keep = scores > 0.5
        kept = x[keep]  # <-
        clean = x[~torch.isnan(x)].sum()  # <-
        cols = x[:, x[0] > 0]  # <-
        return kept, clean, cols
""",
    ]
    VALID = [
        """
import torch
from torch import nn

class Filter(nn.Module):
    def forward(self, x, scores, idx):
        keep = scores > 0.5
        x[keep] = 0
        x[~keep] += 1.0
        y = torch.where(keep, x, 0)
        z = x.masked_fill(~keep, 0.0)
        picked = x[idx]
        first = x[0]
        return y + z + picked.sum() + first.sum()
""",
    ]
