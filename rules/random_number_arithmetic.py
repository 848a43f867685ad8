import ast

from compilelint.rule import Rule

# Python's random draws that Dynamo traces rather than skips: it draws the number when the graph
# runs and stands a 0-d tensor in for it while tracing (`random.random` breaks on its own, CL206).
TRACED_DRAWS = frozenset({"random.randint", "random.randrange", "random.uniform"})
ARITHMETIC = (ast.Add, ast.Sub, ast.Mult, ast.Div, ast.FloorDiv, ast.Mod, ast.Pow)


class RandomNumberArithmetic(Rule):
    """
    ## What it does
    Finds Python arithmetic with a number that `random.randint`, `random.randrange` or
    `random.uniform` drew inside compiled code: `randrange(n) + 1`, `k * 2` after
    `k = randint(1, 4)`, `k += 1`.

    ## Why is this bad?
    Dynamo traces these three draws (the number is drawn each time the graph runs), and stands a
    0-d tensor in for the number while tracing. A tensor operand works (`x * randint(1, 4)`), but
    Python arithmetic with another Python number does not: measured on torch 2.13 (and in the
    truth corpus on 2.11, `randrange(steps) + 1`), `randrange(4) + 1`, `1 + randrange(4)`,
    `randint(1, 4) + 1`, `uniform(0, 1) + 1` and `k += 1` graph-break with "unimplemented builtin
    op on tensor arguments" (GB0213; bench/measure/snippets_random_draws.out).

    ## Example
    ```python
    def forward(self, x):
        steps = randrange(self.max_steps) + 1
        for _ in range(steps):
            x = self.block(x)
        return x
    ```

    ## Use instead
    Draw the number outside the compiled region and pass it in (`int(randrange(n)) + 1` breaks
    too: "constant fold exception", GB0178, measured on 2.13), or draw a tensor
    (`torch.randint(1, n + 1, ())`) where the number scales tensors.

    ## References
    https://meta-pytorch.github.io/compile-graph-break-site/gb/gb0213.html
    """

    code = "CL219"
    name = "random-number-arithmetic"
    triggers = ("randint", "randrange", "uniform")
    message = ("Python arithmetic on a number `random` drew graph-breaks ({gb}): Dynamo traces the draw as a "
               "tensor; draw it outside the compiled region and pass it in")
    gb_types = ("unimplemented builtin op on tensor arguments",)
    gb_ids = {"2.13": ("GB0213",), "2.11": ("GB0213",)}

    def __init__(self, ctx):
        super().__init__(ctx)
        self.drawn = {}  # name → the row of the draw it holds, in the function being walked

    def visit_FunctionDef(self, node):
        self.drawn = {}

    visit_AsyncFunctionDef = visit_FunctionDef

    def visit_Assign(self, node: ast.Assign):
        for target in node.targets:
            if isinstance(target, ast.Name):
                if self._draw(node.value):
                    self.drawn[target.id] = node.lineno
                else:
                    self.drawn.pop(target.id, None)

    def visit_AugAssign(self, node: ast.AugAssign):
        if isinstance(node.op, ARITHMETIC) and self._drawn(node.target) and not self.ctx.is_tensor(node.value):
            self.report(node)

    def visit_BinOp(self, node: ast.BinOp):
        if not isinstance(node.op, ARITHMETIC):
            return
        for one, other in ((node.left, node.right), (node.right, node.left)):
            if self._drawn(one) and not self._drawn(other) and not self.ctx.is_tensor(other):
                self.report(node)
                return

    def _draw(self, node) -> bool:
        return isinstance(node, ast.Call) and self.ctx.resolve(node.func) in TRACED_DRAWS

    def _drawn(self, node) -> bool:
        """A draw, or a name the function last bound to one."""
        return self._draw(node) or isinstance(node, ast.Name) and node.id in self.drawn

    INVALID = [
        """
import torch
from random import randrange

class Recycle(torch.nn.Module):
    def forward(self, x, steps=None):
        steps = steps if steps is not None else randrange(self.max_steps) + 1  # <-
        for _ in range(steps):
            x = self.block(x)
        return x
""",
        """
import random
import torch

@torch.compile
def scale(x):
    k = random.randint(1, 4)
    k += 1  # <-
    return x * k
""",
    ]

    VALID = [
        """
import random
import torch

@torch.compile
def scale(x):
    return x * random.randint(1, 4) + random.randrange(4)
""",
        """
import random
import torch

def plan(n):  # not compiled
    return random.randrange(n) + 1
""",
    ]
