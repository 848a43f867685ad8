import ast

from compilelint.analysis import tensors as T
from compilelint.rule import Rule

# Before torch 2.13 every deepcopy breaks; from 2.13 only one that copies a tensor (measured).
ANY_VALUE = "deepcopy-breaks-on-any-value"


def _plain_literal(node: ast.AST) -> bool:
    """A literal made only of constants: deepcopy of it is traced (measured clean)."""
    if isinstance(node, ast.Constant):
        return True
    if isinstance(node, (ast.List, ast.Tuple, ast.Set)):
        return all(_plain_literal(e) for e in node.elts)
    if isinstance(node, ast.Dict):
        return all(k is None or _plain_literal(k) for k in node.keys) and all(_plain_literal(v) for v in node.values)
    return False


def _holds_tensor(ctx, node: ast.AST) -> bool:
    """`node` is known to hold a tensor: a tensor, a module (its parameters), or a literal
    container with one in it."""
    if isinstance(node, (ast.List, ast.Tuple, ast.Set)):
        return any(_holds_tensor(ctx, e) for e in node.elts)
    if isinstance(node, ast.Dict):
        return any(_holds_tensor(ctx, v) for v in node.values)
    return ctx.is_tensor(node) or ctx.kind(node) == T.MODULE


class Deepcopy(Rule):
    """
    ## What it does
    Finds `copy.deepcopy(...)` inside compiled code (however `copy` was imported).

    ## Why is this bad?
    Dynamo cannot deep-copy a tensor or a module while tracing: the call graph-breaks
    ("Attempted to copy.deepcopy a tensor", GB4198 on 2.13; "copy.deepcopy()", GB0179 on 2.11)
    and `fullgraph=True` raises. Torch 2.11 breaks on every deepcopy, a configuration object's
    too (the truth corpus: transformers' `get_text_config`); torch 2.13 traces a copy that holds
    no tensor (measured: `bench/measure/snippets_deepcopy.out`), so a value not known to hold a
    tensor (`copy.deepcopy(self.config)`) is reported only for torch before 2.13
    (`torch-version`). A deepcopy of plain Python constants is not reported.

    ## Example
    ```python
    state = copy.deepcopy(self.cache)
    ```

    ## Use instead
    `t.clone()` (or `t.detach().clone()`) for tensors, build copies of modules in `__init__`,
    or do the copy outside the compiled region.

    ## References
    https://meta-pytorch.github.io/compile-graph-break-site/gb/gb4198.html
    """

    code = "CL207"
    name = "deepcopy"
    triggers = ('deepcopy',)
    message = ("`copy.deepcopy()` graph-breaks on tensors and modules ({gb}): use t.clone(), or copy outside "
               "the compiled region")
    gb_types = ("Attempted to copy.deepcopy a tensor", "copy.deepcopy()")
    gb_ids = {"2.13": ("GB4198",), "2.11": ("GB0179",)}

    def visit_Call(self, node: ast.Call):
        if self.ctx.resolve(node.func) != "copy.deepcopy" or not node.args:
            return
        arg = node.args[0]
        if _plain_literal(arg) or self.ctx.kind(arg) in (T.SCALAR, T.NONE):
            return
        if _holds_tensor(self.ctx, arg):
            self.report(node)
        else:
            self.report(node, self.ANY_VALUE_MESSAGE, behaviour=ANY_VALUE)

    ANY_VALUE_MESSAGE = ("`copy.deepcopy()` graph-breaks on this torch whatever it copies ({gb}; torch 2.13 traces "
                         "a copy that holds no tensor): copy outside the compiled region")

    INVALID = [
        """
import copy
import copy as cp
from copy import deepcopy
import torch
from torch import nn

class EMA(nn.Module):
    def __init__(self):
        super().__init__()
        self.proj = nn.Linear(4, 4)

    def forward(self, x):
        shadow = copy.deepcopy(x)  # <-
        saved = cp.deepcopy(self.proj)  # <-
        again = deepcopy([x, x])  # <-
        return shadow + x
""",
    ]
    VALID = [
        """
import copy
import torch
from torch import nn

def deepcopy(x):  # a local helper named deepcopy
    return x

class EMA(nn.Module):
    def __init__(self, model):
        super().__init__()
        self.shadow = copy.deepcopy(model)  # __init__ is not compiled

    def forward(self, x):
        cfg = copy.deepcopy({"eps": 1e-5, "dims": [1, 2]})
        y = deepcopy(x)
        return x.detach().clone() * cfg["eps"] + y
""",
    ]
