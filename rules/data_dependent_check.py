import ast

from compilelint.rule import Rule

FUNCTIONS = {"torch.equal": "equal", "torch.allclose": "allclose", "torch.is_nonzero": "is_nonzero"}
METHODS = frozenset({"equal", "allclose", "is_nonzero"})


class DataDependentCheck(Rule):
    """
    ## What it does
    Finds `torch.equal(a, b)`, `torch.allclose(a, b)`, `t.equal(o)`, `t.allclose(o)` and
    `t.is_nonzero()` inside compiled code.

    ## Why is this bad?
    These return a Python `bool` computed from tensor data. The call itself graph-breaks
    ("Data dependent operator", GB0033), whether or not the result feeds an `if`, and
    `fullgraph=True` raises. No config knob removes it.

    ## Example
    ```python
    if torch.allclose(q, k):
        attn = q
    ```

    ## Use instead
    Keep the answer as a boolean tensor (`(a == b).all()`, `torch.isclose(a, b).all()`) and use
    it through `torch.where(cond, a, b)` or `torch.cond`, or do the check outside the compiled
    region (tests, asserts in eager code).

    ## References
    https://meta-pytorch.github.io/compile-graph-break-site/gb/gb0033.html
    """

    code = "CL105"
    name = "data-dependent-check"
    triggers = ('equal', 'allclose', 'is_nonzero')
    message = ("a tensor comparison that returns a Python bool graph-breaks ({gb}): keep a boolean tensor "
               "(`(a == b).all()`, `torch.isclose(a, b).all()`) and use torch.where / torch.cond")
    gb_types = ("Data dependent operator",)
    gb_ids = {"2.13": ("GB0033",), "2.11": ("GB0033",)}

    def visit_Call(self, node: ast.Call):
        func = node.func
        name = self.ctx.resolve(func)
        if name in FUNCTIONS:
            what = f"torch.{FUNCTIONS[name]}()"
        elif isinstance(func, ast.Attribute) and func.attr in METHODS and self.ctx.is_tensor(func.value):
            what = f"Tensor.{func.attr}()"
        else:
            return
        self.report(node, f"`{what}` reads tensor data into a Python bool and graph-breaks ({{gb}}): keep a "
                          "boolean tensor (`(a == b).all()`, `torch.isclose(a, b).all()`) and use torch.where / torch.cond")

    INVALID = [
        """
import torch
from torch import nn

class CrossAttention(nn.Module):
    def forward(self, q, k):
        if torch.allclose(q, k):  # <-
            return q
        same = q.equal(k)  # <-
        nonzero = (q.sum() > 0).is_nonzero()  # <-
        return q + k
""",
        """
import torch as T

@T.compile
def tied(a: T.Tensor, b: T.Tensor):
    return a * 2 if T.equal(a, b) else a + b  # <-
""",
    ]
    VALID = [
        """
import torch
from torch import nn

class CrossAttention(nn.Module):
    def forward(self, q, k):
        same = torch.isclose(q, k).all()
        assert (q.abs() < 1e4).all()
        return torch.where(same, q, q + k)

def test_equal(model, x):
    assert torch.equal(model(x), model(x))  # eager test code
""",
    ]
