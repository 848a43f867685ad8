import ast

from compilelint.fix import builder
from compilelint.fix.notes import FIXED_WIDTH, explained
from compilelint.rule import Rule

# fix builders, imported when a finding asks for its fix
one_hot_num_classes = builder("one_hot", "one_hot_num_classes")

ONE_HOT = frozenset({"torch.nn.functional.one_hot", "torch._C._nn.one_hot"})


def _minus_one(node: ast.AST) -> bool:
    return isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub) and \
        isinstance(node.operand, ast.Constant) and node.operand.value == 1


class OneHotDynamic(Rule):
    """
    ## What it does
    Finds `F.one_hot(x)` without `num_classes` (or with `num_classes=-1`) inside compiled code.

    ## Why is this bad?
    Without `num_classes` the width of the result is `x.max() + 1`, read from the data: Dynamo
    graph-breaks ("Attempted to use `torch.nn.functional.one_hot` with data-dependent output
    shape", GB0246) and `fullgraph=True` raises. No knob helps.

    ## Example
    ```python
    mask = F.one_hot(expert_ids)
    ```

    ## Use instead
    Pass the class count: `F.one_hot(expert_ids, num_classes=self.num_experts)`.

    ## Fix safety
    `F.one_hot(x)` gets `num_classes=K`, where `K` is a positive int literal, a module-level int
    constant or `self.k` set once in `__init__` to one, and `x` (or the local bound once to it) shows
    the bound:
    - safe for `torch.arange(K)` / `torch.arange(0, K)`: the eager width, `x.max() + 1`, is exactly K;
    - unsafe for `e % K` and `torch.randint(K, ...)` / `torch.randint(0, K, ...)`: every index is below
      K, but the eager width may have been smaller; with the fix it is always K.

    ## References
    https://meta-pytorch.github.io/compile-graph-break-site/gb/gb0246.html
    """

    code = "CL303"
    name = "one-hot-dynamic"
    triggers = ('one_hot',)
    message = ("`F.one_hot()` without num_classes has a data-dependent width and graph-breaks ({gb}): "
               "pass num_classes")
    gb_types = ("Attempted to use `torch.nn.functional.one_hot` with data-dependent output shape",)
    gb_ids = {"2.13": ("GB0246",), "2.11": ("GB0246",)}
    # safe for `torch.arange(K)` indices, unsafe where only a bound is known (`x % K`, randint(K, ...))
    fix = "sometimes"

    def visit_Call(self, node: ast.Call):
        if self.ctx.resolve(node.func) not in ONE_HOT:
            return
        classes = node.args[1] if len(node.args) > 1 else None
        for k in node.keywords:
            if k.arg == "num_classes":
                classes = k.value
            elif k.arg is None:
                return  # **kwargs: can't tell
        if classes is None or _minus_one(classes):
            self.report(node, fix=explained(one_hot_num_classes(self.ctx, node), FIXED_WIDTH))

    # (before, after `--fix --unsafe-fixes`): what the fix does; tests/test_fix.py runs them.
    FIXES = [
        (
            """
import torch
import torch.nn.functional as F
from torch import nn

class Router(nn.Module):
    def __init__(self):
        super().__init__()
        self.num_experts = 8

    def forward(self, ids):
        return F.one_hot(ids % self.num_experts)
""",
            """
import torch
import torch.nn.functional as F
from torch import nn

class Router(nn.Module):
    def __init__(self):
        super().__init__()
        self.num_experts = 8

    def forward(self, ids):
        return F.one_hot(ids % self.num_experts, num_classes=self.num_experts)
""",
        ),
    ]

    INVALID = [
        """
import torch
import torch.nn.functional as F
from torch.nn.functional import one_hot
from torch import nn

class Router(nn.Module):
    def forward(self, expert_ids):
        a = F.one_hot(expert_ids)  # <-
        b = one_hot(expert_ids, num_classes=-1)  # <-
        return a, b
""",
    ]
    VALID = [
        """
import torch
import torch.nn.functional as F
from torch import nn

class Router(nn.Module):
    def __init__(self, n):
        super().__init__()
        self.num_experts = n

    def forward(self, expert_ids):
        a = F.one_hot(expert_ids, self.num_experts)
        b = F.one_hot(expert_ids, num_classes=8)
        return a + b
""",
    ]
