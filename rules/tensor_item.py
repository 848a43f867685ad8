import ast

from compilelint.analysis import tensors as T
from compilelint.fix import builder
from compilelint.fix.notes import ZERO_D, explained
from compilelint.rule import Rule

# fix builders, imported when a finding asks for its fix
drop_item = builder("item", "drop_item")
item_feeds_tensors = builder("item_name", "item_feeds_tensors")
assert_async = builder("tensor_assert", "assert_async")
raise_on_item = builder("item_raise", "raise_on_item")


class TensorItem(Rule):
    """
    ## What it does
    Finds `.item()` on a tensor inside code that torch.compile traces.

    ## Why is this bad?
    `.item()` copies a tensor value into a Python number. Dynamo cannot put a Python number that
    depends on data into the graph, so a plain `torch.compile` splits the graph there
    (gb_type "Unsupported Tensor.item() call with capture_scalar_outputs=False", GB0124) and adds a
    recompile when the value changes. `fullgraph=True` hides this: it captures the scalar silently.

    ## Example
    ```python
    scale = x.abs().max().item()
    return x / scale
    ```

    ## Use instead
    Keep the 0-d tensor (`scale = x.abs().max()`), or set
    `torch._dynamo.config.capture_scalar_outputs = True` to capture it as a symbolic scalar.

    ## Fix safety
    Unsafe, offered in three shapes only:
    - `y * t.item()`, where the other operand of `+ - * / // % **` is a tensor → `y * t.detach()`;
    - `s = t.item()`, where `s` is bound nowhere else in the function (not a parameter, global or
      closure name) and every read of it is an operand of arithmetic beside a tensor → `s = t.detach()`;
    - `assert t.item() <= n` (the bare `.item()` or one comparison, no container or None on the other
      side, a plain-string message, the statement on lines of its own) → `torch._assert_async(t <= n)`.

    The value stays a 0-d tensor instead of a Python number: the result's dtype follows tensor
    promotion, and it lives on the tensor's device; `.detach()` passes no gradient back, as the number
    did. The `assert` rewrite raises `RuntimeError` instead of `AssertionError`, also under
    `python -O`, asynchronously on CUDA, and compares in the tensor's dtype.

    ## References
    https://meta-pytorch.github.io/compile-graph-break-site/gb/gb0124.html
    """

    code = "CL101"
    name = "tensor-item"
    triggers = ('item',)
    message = ("`.item()` on a tensor graph-breaks ({gb}): keep the 0-d tensor, or set "
               "torch._dynamo.config.capture_scalar_outputs = True")
    # On a NumPy array Dynamo traces (its values come from tensors) the same read-out is reported
    # as GB0033, "Data dependent operator" (`_local_scalar_dense`; transformers' SpecAugment,
    # `np.random.rand(1).item()`, measured on torch 2.13).
    gb_types = ("Unsupported Tensor.item() call with capture_scalar_outputs=False", "Data dependent operator")
    gb_ids = {"2.13": ("GB0124", "GB0033"), "2.11": ("GB0124", "GB0033")}
    fix = "unsafe"  # when it applies: `y * t.item()` with y a tensor → `y * t.detach()`

    def visit_Call(self, node: ast.Call):
        func = node.func
        if not (isinstance(func, ast.Attribute) and func.attr == "item") or node.args or node.keywords:
            return
        # `.item()` is a tensor (or numpy) method; only a value known to be something else is exempt.
        if self.ctx.kind(func.value) in (T.SCALAR, T.MODULE, T.LOGGER, T.NONE):
            return
        self.report(node, fix=explained(drop_item(self.ctx, node), ZERO_D) or assert_async(self.ctx, node)
                    or item_feeds_tensors(self.ctx, node) or raise_on_item(self.ctx, node))

    # (before, after `--fix --unsafe-fixes`): what the fix does; tests/test_fix.py runs them.
    FIXES = [
        (
            """
import torch

@torch.compile
def scale(x, t):
    return x * t.item()
""",
            """
import torch

@torch.compile
def scale(x, t):
    return x * t.detach()
""",
        ),
    ]

    INVALID = [
        """
import torch
from torch import nn

class Scaler(nn.Module):
    def forward(self, x):
        scale = x.abs().max().item()  # <-
        return x / scale
""",
        """
import torch

@torch.compile
def normalize(x: torch.Tensor):
    return x - x.mean().item()  # <-
""",
    ]
    VALID = [
        """
import torch

def eager_only(x):  # nothing compiles this
    return x.sum().item()
""",
        """
import torch
from torch import nn

class Model(nn.Module):
    def forward(self, x):
        if not torch.compiler.is_compiling():
            print(x.sum().item())
        return x * 2
""",
    ]
