import ast

from compilelint.fix.builders import where_for_if, where_for_ifexp
from compilelint.fix.rewrites.assert_split import split_assert
from compilelint.fix.rewrites.notes import BOTH_BRANCHES, explained
from compilelint.fix.rewrites.paths import tensor_on_every_path
from compilelint.fix.rewrites.tensor_raise import raise_to_assert_async
from compilelint.rule import Rule


def truth_tested(test: ast.AST):
    """The expressions Python calls bool() on when it evaluates `test` as a condition."""
    if isinstance(test, ast.BoolOp):
        for value in test.values:
            yield from truth_tested(value)
    elif isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
        yield from truth_tested(test.operand)
    else:
        yield test


def _where_or_check(ctx, node, expr):
    return where_for_if(ctx, node, expr) or raise_to_assert_async(ctx, node, expr)


class TensorBranch(Rule):
    """
    ## What it does
    Finds `if`, `elif`, `while`, ternaries, comprehension filters, `and`/`or`/`not` whose
    condition is a tensor inside compiled code.

    ## Why is this bad?
    Python needs a real `True`/`False` to pick a branch, which means reading tensor data.
    Dynamo graph-breaks at the branch (gb_type "Data-dependent branching", GB0170) and
    `fullgraph=True` raises. No config knob removes it.

    ## Example
    ```python
    if x.sum() > 0:
        y = x * 2
    else:
        y = x - 1
    ```

    ## Use instead
    `y = torch.where(x.sum() > 0, x * 2, x - 1)` (both sides are computed), or `torch.cond` for
    branches with different work. Conditions on shapes, `is None`, `isinstance` and
    `self.training` are fine: they are not data.

    ## References
    https://meta-pytorch.github.io/compile-graph-break-site/gb/gb0170.html
    """

    code = "CL104"
    name = "tensor-branch"
    message = ("branching on a tensor's value graph-breaks ({gb}): use torch.where(cond, a, b) "
               "or torch.cond")
    gb_types = ("Data-dependent branching",)
    gb_ids = {"2.13": ("GB0170",), "2.11": ("GB0170",)}
    fix = "sometimes"  # safe: `assert a and b` split; unsafe: torch.where for assignment-only if/else and ternaries

    def _check(self, test: ast.AST, what: str, build=None, owner=None):
        for expr in truth_tested(test):
            if self.ctx.is_tensor(expr):
                fix = build(self.ctx, owner, expr) if build is not None and tensor_on_every_path(self.ctx, expr) else None
                fix = explained(fix, BOTH_BRANCHES)
                self.report(expr, f"`{what}` on a tensor's value graph-breaks ({{gb}}): "
                                  "use torch.where(cond, a, b) or torch.cond", fix=fix)

    def visit_If(self, node: ast.If):
        self._check(node.test, "if", _where_or_check, node)

    def visit_While(self, node: ast.While):
        self._check(node.test, "while")

    def visit_IfExp(self, node: ast.IfExp):
        self._check(node.test, "x if cond else y", where_for_ifexp, node)

    def visit_comprehension(self, node: ast.comprehension):
        for test in node.ifs:
            self._check(test, "comprehension if")

    def visit_Assert(self, node: ast.Assert):
        # `assert t` itself is traced (Dynamo asserts asynchronously), but the jumps of `assert a and b`
        # call bool() on every operand before the last (measured: GB0170, IBert's NaN check).
        test = node.test
        if isinstance(test, ast.BoolOp):
            op = "and" if isinstance(test.op, ast.And) else "or"
            fix = split_assert(self.ctx, node)  # one fix for the statement: on its first finding
            for value in test.values[:-1]:
                for expr in truth_tested(value):
                    if self.ctx.is_tensor(expr):
                        self.report(expr, f"`assert ... {op} ...` calls bool() on a tensor and graph-breaks ({{gb}}): "
                                          "assert each condition on its own, or combine them with `&`", fix=fix)
                        fix = None

    def visit_BoolOp(self, node: ast.BoolOp):
        # Inside a condition the whole test is checked by the statement; here only values used as data.
        parent = self.ctx.parent()
        if isinstance(parent, (ast.If, ast.While, ast.IfExp, ast.BoolOp, ast.UnaryOp, ast.Assert)) or \
                isinstance(parent, ast.comprehension):
            return
        op = "and" if isinstance(node.op, ast.And) else "or"
        for value in node.values[:-1]:
            for expr in truth_tested(value):
                if self.ctx.is_tensor(expr):
                    self.report(expr, f"`{op}` calls bool() on a tensor and graph-breaks ({{gb}}): "
                                      "use logical_and/logical_or or torch.where")

    def visit_UnaryOp(self, node: ast.UnaryOp):
        if not isinstance(node.op, ast.Not):
            return
        parent = self.ctx.parent()
        if isinstance(parent, (ast.If, ast.While, ast.IfExp, ast.BoolOp, ast.UnaryOp, ast.Assert, ast.comprehension)):
            return
        if self.ctx.is_tensor(node.operand):
            self.report(node.operand, "`not` on a tensor calls bool() and graph-breaks ({gb}): use "
                                      "torch.logical_not(t) or `~mask`")

    # (before, after `--fix --unsafe-fixes`): what the fix does; tests/test_fix.py runs them.
    FIXES = [
        (
            """
import torch
from torch import nn

class Gate(nn.Module):
    def forward(self, x):
        if x.sum() > 0:
            y = x * 2
        else:
            y = x - 1
        return y if y.mean() > 0 else -y
""",
            """
import torch
from torch import nn

class Gate(nn.Module):
    def forward(self, x):
        y = torch.where(x.sum() > 0, x * 2, x - 1)
        return torch.where(y.mean() > 0, y, -y)
""",
        ),
        (
            """
import torch
from torch import nn

class Act(nn.Module):
    def forward(self, x):
        x_min, x_max = x.min(), x.max()
        assert x_max.isnan().sum() == 0 and x_min.isnan().sum() == 0, (
            "NaN detected"
        )
        return x
""",
            """
import torch
from torch import nn

class Act(nn.Module):
    def forward(self, x):
        x_min, x_max = x.min(), x.max()
        assert x_max.isnan().sum() == 0, "NaN detected"
        assert x_min.isnan().sum() == 0, "NaN detected"
        return x
""",
        ),
    ]

    INVALID = [
        """
import torch
from torch import nn

class Gate(nn.Module):
    def forward(self, x):
        if x.sum() > 0:  # <-
            x = x * 2
        while x.max() > 1:  # <-
            x = x / 2
        y = x if x.mean() > 0 else -x  # <-
        if self.training and torch.isnan(x).any():  # <-
            x = torch.zeros_like(x)
        assert x.isnan().sum() == 0 and y.isnan().sum() == 0, "NaN"  # <-
        return x + y
""",
    ]
    VALID = [
        """
import torch
from torch import nn

class Block(nn.Module):
    def forward(self, x, mask=None):
        if x.shape[0] > 2:
            x = x * 2
        if mask is None:
            mask = torch.ones_like(x)
        if self.training:
            x = x + 1
        if isinstance(x, torch.Tensor) and x.dim() == 2:
            x = x.t()
        assert (x > -100).all()
        return torch.where(x.sum() > 0, x, mask)
""",
    ]
