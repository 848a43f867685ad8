import ast
import re

from compilelint.analysis.astutil import names_in_target
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
        fn = self.ctx.function
        name = fn.qualname.rsplit(".", 1)[-1] if fn is not None else ""
        per_call = bool(name and PER_CALL.match(name))
        if self.ctx.loops > 0:
            if per_call or not self._each_once(node):
                self.report(node)
            return
        if per_call:
            self.report(node, f"`torch.compile()` inside `{name}()` compiles again on every call (a new backend "
                              "each time): compile once at setup, e.g. in __init__, and call the compiled object")

    def _each_once(self, node: ast.Call) -> bool:
        """A setup loop compiling each of its items once: the compiled object is the loop's own
        item (`for i, layer in enumerate(layers): layers[i] = torch.compile(layer)`) and the
        result is stored, not called. Every iteration compiles another object, once. (A lambda
        closing over the item is one code object guarded on the item's value: it recompiles.)"""
        statement = self.ctx.statement()
        loop = next((n for n in reversed(self.ctx.stack) if isinstance(n, (ast.For, ast.AsyncFor))), None)
        if loop is None or not node.args or not isinstance(statement, ast.Assign) or statement.value is not node:
            return False
        target = node.args[0]
        while isinstance(target, (ast.Attribute, ast.Subscript)):  # layer, blocks[i], stage.block
            if isinstance(target, ast.Subscript) and any(isinstance(n, ast.Name) and n.id in names_in_target(loop.target)
                                                         for n in ast.walk(target.slice)):
                return True
            target = target.value
        return isinstance(target, ast.Name) and target.id in names_in_target(loop.target)

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

def compile_blocks(blocks):
    for i, block in enumerate(blocks):
        blocks[i] = torch.compile(block)
""",
    ]
