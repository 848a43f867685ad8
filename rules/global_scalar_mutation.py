import ast

from compilelint.analysis.astutil import walk
from compilelint.rule import Rule


class GlobalScalarMutation(Rule):
    """
    ## What it does
    Finds `global N; N += 1` (or `N = N + 1`) in compiled code where `N` is a module-level int
    or float.

    ## Why is this bad?
    Dynamo guards on the value of module globals it reads. Changing one from compiled code
    fails the guard on the next call: one recompile per call (measured: 4 of 5 calls) until
    `recompile_limit` (8), then the frame runs eager. No graph break, so `explain()` says clean.

    ## Example
    ```python
    _STEP = 0

    @torch.compile
    def step(x):
        global _STEP
        _STEP += 1
        return x * 2
    ```

    ## Use instead
    Count outside the compiled function, or keep the counter in a tensor (a 0-d tensor global
    updated in place with `.add_(1)`) so it is data, not a guarded constant.

    ## References
    https://docs.pytorch.org/docs/stable/compile/programming_model.recompilation.html
    """

    code = "CL402"
    name = "global-scalar-mutation"
    triggers = ('global',)
    message = ("mutating a module-level number from compiled code recompiles on every call until recompile_limit "
               "(8), then the frame runs eager: count outside the compiled region, or keep a 0-d tensor")
    kind = "recompile"
    severity = "warning"

    def _say(self, name: str, node):
        if self.ctx.function is not None and self.ctx.is_global_number(name):
            self.report(node, f"`global {name}` is a Python number: changing it from compiled code recompiles on "
                              "every call until recompile_limit (8), then the frame runs eager; count outside the "
                              "compiled region, or keep a 0-d tensor updated in place")

    def visit_AugAssign(self, node: ast.AugAssign):
        if isinstance(node.target, ast.Name):
            self._say(node.target.id, node)

    def visit_Assign(self, node: ast.Assign):
        for t in node.targets:  # `n = n + 1`: the walk last, as most assignments are to locals
            if isinstance(t, ast.Name) and self.ctx.function is not None and self.ctx.is_global_number(t.id) and \
                    any(isinstance(n, ast.Name) and n.id == t.id for n in walk(node.value)):
                self._say(t.id, node)

    INVALID = [
        """
import torch

_CALLS = 0
_TOTAL = 0.0

@torch.compile
def step(x: torch.Tensor):
    global _CALLS, _TOTAL
    _CALLS += 1  # <-
    _TOTAL = _TOTAL + 0.5  # <-
    return x * 2
""",
    ]
    VALID = [
        """
import torch

_SCALE = 2
_STATS = {}

@torch.compile
def step(x: torch.Tensor):
    _STATS["last"] = x
    n = _SCALE
    n += 1
    return x * n

def count():
    global _SCALE
    _SCALE += 1  # not compiled
""",
    ]
