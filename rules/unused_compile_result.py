import ast

from compilelint.analysis.names import COMPILE_FUNCS
from compilelint.rule import Rule


class UnusedCompileResult(Rule):
    """
    ## What it does
    Finds `torch.compile(model)` used as a statement, its result thrown away.

    ## Why is this bad?
    `torch.compile(model)` does not change `model`: it returns a new, compiled object
    (an `OptimizedModule` or a wrapped function). Dropping the result compiles nothing, and
    the code keeps running eager. `model.compile()` is the in-place spelling.

    ## Example
    ```python
    model = MyModel()
    torch.compile(model)
    model(x)  # still eager
    ```

    ## Use instead
    `model = torch.compile(model)`, or `model.compile()` to compile an `nn.Module` in place.

    ## References
    https://docs.pytorch.org/docs/stable/generated/torch.compile.html
    """

    code = "CL501"
    name = "unused-compile-result"
    triggers = ('compile',)
    message = ("the result of torch.compile() is discarded, so nothing is compiled: assign it "
               "(`model = torch.compile(model)`) or call `model.compile()` to compile in place")
    kind = "usage"
    region_only = False

    def visit_Expr(self, node: ast.Expr):
        value = node.value
        if isinstance(value, ast.Call) and value.args and self.ctx.resolve(value.func) in COMPILE_FUNCS:
            self.report(value)

    INVALID = [
        """
import torch
from torch import nn

model = nn.Linear(4, 4)
torch.compile(model)  # <-

def setup(net):
    torch.compile(net, mode="max-autotune")  # <-
    return net
""",
    ]
    VALID = [
        """
import torch
from torch import nn

model = nn.Linear(4, 4)
model = torch.compile(model)
other = nn.Linear(4, 4)
other.compile()

def setup(net):
    return torch.compile(net)
""",
    ]
