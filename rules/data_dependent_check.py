import ast

from compilelint.fix import builder
from compilelint.rule import Rule

# fix builders, imported when a finding asks for its fix
skip_equal_under_compile = builder("equal_shortcut", "skip_equal_under_compile")

FUNCTIONS = {"torch.equal": "equal", "torch.allclose": "allclose", "torch.is_nonzero": "is_nonzero"}
METHODS = frozenset({"equal", "allclose", "is_nonzero"})
CONTROL_FLOW = ("; no rewrite: the bool decides Python control flow (an `if` here or on the name it is bound to), "
                "where a boolean tensor breaks again, and `(a == b).all()` is not `torch.equal` where the shapes "
                "differ (a broadcast or an error instead of False)")
SHORTCUT = ("; where the bool only picks a shortcut (the path for unequal tensors is the general one), "
            "the unsafe fix skips the call under compile")
TESTS = (ast.If, ast.While, ast.IfExp, ast.Assert)


def _truth_tested_names(ctx, fn: ast.AST) -> set:
    """Names read in the tests of the function's `if`/`while`/ternaries/asserts (the file's shared
    walk of the function, not another)."""
    return {n.id for t in ctx.nodes(fn) if isinstance(t, TESTS)
            for n in ast.walk(t.test) if isinstance(n, ast.Name)}


def decides_control_flow(ctx, node: ast.Call) -> bool:
    """The call's bool is tested by an `if`/`while`/ternary/assert, directly or through the local
    it is assigned to."""
    stack = ctx.stack
    for parent, child in zip(stack, stack[1:]):
        if isinstance(parent, TESTS) and child is parent.test:
            return True
    stmt = ctx.statement()
    fn = ctx.function_node
    if fn is None or not (isinstance(stmt, ast.Assign) and stmt.value is node and len(stmt.targets) == 1
                          and isinstance(stmt.targets[0], ast.Name)):
        return False
    return stmt.targets[0].id in _truth_tested_names(ctx, fn)


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

    `torch.equal(a, b)` is False where the shapes differ, where `(a == b).all()` broadcasts or raises,
    so that rewrite is right only where the shapes are known equal, which the source rarely shows;
    and where the bool decides Python control flow (`x1_eq_x2 = torch.equal(x1, x2)` then
    `if x1_eq_x2:`), a boolean tensor breaks again at the `if`. The finding says so in that case.

    ## Fix safety
    Where `torch.equal` / `torch.allclose` (or the methods) picks a path in Python as a shortcut, the
    unsafe fix writes `not torch.compiler.is_compiling() and torch.equal(a, b)`: Dynamo folds it to
    False and never runs the call, so compiled code takes the path for unequal tensors, the general
    one (it cannot assume anything of the two), also when they are equal: other rounding, maybe
    slower; eager runs the call as before. Offered only where no `assert`/`while` tests the bool, no
    `if` testing it raises, and a name bound to it is read only by tests and call arguments (never
    returned or stored): a check that raises on unequal tensors would raise on every compiled call.

    ## References
    https://meta-pytorch.github.io/compile-graph-break-site/gb/gb0033.html
    """

    code = "CL105"
    name = "data-dependent-check"
    fix = "unsafe"  # an equality shortcut skipped under compile (fix/equal_shortcut.py)
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
        decides = decides_control_flow(self.ctx, node)
        shortcut = what.endswith(("equal()", "allclose()")) and decides
        fix = skip_equal_under_compile(self.ctx, node) if shortcut else None
        why_not = SHORTCUT if fix is not None else CONTROL_FLOW if decides else ""
        self.report(node, f"`{what}` reads tensor data into a Python bool and graph-breaks ({{gb}}): keep a "
                          "boolean tensor (`(a == b).all()`, `torch.isclose(a, b).all()`) and use torch.where / "
                          f"torch.cond{why_not}", fix=fix)

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
        """
import torch
from torch import nn

class Pairwise(nn.Module):
    def forward(self, a, b):
        same = torch.equal(a, b)  # <-
        if not torch.equal(a.sum(0), b.sum(0)):  # <-
            raise ValueError("different totals")
        if same:
            return torch.zeros(a.shape[0])
        return (a - b).norm(dim=-1)
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
