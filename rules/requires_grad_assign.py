import ast

from compilelint.fix.rewrites.requires_grad import requires_grad_call
from compilelint.rule import Rule


class RequiresGradAssign(Rule):
    """
    ## What it does
    Finds `t.requires_grad = ...` on a tensor inside code that torch.compile traces.

    ## Why is this bad?
    Dynamo does not trace attribute writes to `requires_grad`: a plain `torch.compile`
    graph-breaks there ("setattr() on Tensor.requires_grad", measured on torch 2.13) and
    `fullgraph=True` raises. `t.requires_grad_(False)` is traced.

    ## Example
    ```python
    y = x * 2
    y.requires_grad = False
    ```

    ## Use instead
    `y.requires_grad_(False)` (the fix: the same in eager, errors included), or `y = y.detach()`.
    Turning gradients on inside the region breaks either way: do it before compiling.

    ## References
    https://docs.pytorch.org/docs/stable/compile/programming_model.common_graph_breaks.html
    """

    code = "CL214"
    name = "requires-grad-assign"
    triggers = ("requires_grad",)
    message = ("`t.requires_grad = ...` graph-breaks (setattr() on Tensor.requires_grad): use "
               "`t.requires_grad_(False)`, or set requires_grad before compiling")
    gb_types = ("setattr() on Tensor.requires_grad",)
    gb_ids = {"2.13": (), "2.11": ()}
    fix = "sometimes"  # safe: `t.requires_grad = False` → `t.requires_grad_(False)`

    def visit_Assign(self, node: ast.Assign):
        for target in node.targets:
            if isinstance(target, ast.Attribute) and target.attr == "requires_grad" \
                    and self.ctx.is_tensor(target.value):
                self.report(target, fix=requires_grad_call(self.ctx, node))

    # (before, after `--fix --unsafe-fixes`): what the fix does; tests/test_fix.py runs them.
    FIXES = [
        (
            """
import torch

@torch.compile
def frozen(x):
    y = x * 2
    y.requires_grad = False
    return y + 1
""",
            """
import torch

@torch.compile
def frozen(x):
    y = x * 2
    y.requires_grad_(False)
    return y + 1
""",
        ),
    ]

    INVALID = [
        """
import torch
from torch import nn

class Head(nn.Module):
    def forward(self, x):
        y = torch.tanh(x)
        y.requires_grad = False  # <-
        return y
""",
    ]
    VALID = [
        """
import torch
from torch import nn

class Head(nn.Module):
    def __init__(self):
        super().__init__()
        self.proj = nn.Linear(4, 4)
        self.proj.weight.requires_grad = False  # __init__ is not compiled

    def forward(self, x):
        y = torch.tanh(x)
        y.requires_grad_(False)
        return y
""",
    ]
