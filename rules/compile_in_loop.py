import ast
import re

from compilelint.analysis.names import COMPILE_FUNCS
from compilelint.rule import Rule

# Functions that run once per step/batch: compiling there compiles again every call.
PER_CALL = re.compile(r"^(forward|__call__|step|.*_step|train_step|training_step|validation_step|predict_step)$")


class CompileInLoop(Rule):
    """
    ## What it does
    Finds `torch.compile(...)` called inside a loop, or inside a `forward` / `__call__` /
    `*_step` function that itself runs once per batch. Counts anywhere, not only in compiled
    code.

    ## Why is this bad?
    Each `torch.compile(...)` call makes a new compiled wrapper with a new backend: Dynamo's
    cache does not match it ("BACKEND_MATCH failure"), so every iteration compiles again
    (measured: 5 calls in a loop, 5 compilations), burning seconds per step and pushing the
    frame towards `recompile_limit` (8), after which it runs eager. A new lambda or closure per
    iteration recompiles for the same reason.

    ## Example
    ```python
    for batch in loader:
        out = torch.compile(model)(batch)
    ```

    ## Use instead
    Compile once, outside the loop (`model = torch.compile(model)` or `model.compile()` at
    setup), and call the compiled object in the loop.

    ## References
    https://docs.pytorch.org/docs/stable/compile/programming_model.recompilation.html
    """

    code = "CL406"
    name = "compile-in-loop"
    triggers = ('compile',)
    message = ("`torch.compile()` inside a loop compiles again on every iteration (a new backend each time): "
               "compile once, outside the loop, and call the compiled object")
    kind = "usage"
    severity = "warning"
    region_only = False

    def visit_Call(self, node: ast.Call):
        if self.ctx.resolve(node.func) not in COMPILE_FUNCS:
            return
        if self.ctx.loops > 0:
            self.report(node)
            return
        fn = self.ctx.function
        name = fn.qualname.rsplit(".", 1)[-1] if fn is not None else ""
        if name and PER_CALL.match(name):
            self.report(node, f"`torch.compile()` inside `{name}()` compiles again on every call (a new backend "
                              "each time): compile once at setup, e.g. in __init__, and call the compiled object")

    INVALID = [
        """
import torch
from torch import nn

def evaluate(model, loader):
    for batch in loader:
        out = torch.compile(model)(batch)  # <-

class Wrapper(nn.Module):
    def __init__(self, inner):
        super().__init__()
        self.inner = inner

    def forward(self, x):
        fast = torch.compile(self.inner)  # <-
        return fast(x)
""",
    ]
    VALID = [
        """
import torch
from torch import nn

class Wrapper(nn.Module):
    def __init__(self, inner):
        super().__init__()
        self.inner = torch.compile(inner)

    def forward(self, x):
        return self.inner(x)

def evaluate(model, loader):
    model = torch.compile(model)
    for batch in loader:
        model(batch)
""",
    ]
