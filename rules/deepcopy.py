import ast

from compilelint.analysis import tensors as T
from compilelint.rule import Rule


def _plain_literal(node: ast.AST) -> bool:
    """A literal made only of constants: deepcopy of it is traced (measured clean)."""
    if isinstance(node, ast.Constant):
        return True
    if isinstance(node, (ast.List, ast.Tuple, ast.Set)):
        return all(_plain_literal(e) for e in node.elts)
    if isinstance(node, ast.Dict):
        return all(k is None or _plain_literal(k) for k in node.keys) and all(_plain_literal(v) for v in node.values)
    return False


class Deepcopy(Rule):
    """
    ## What it does
    Finds `copy.deepcopy(...)` inside compiled code (however `copy` was imported).

    ## Why is this bad?
    Dynamo cannot deep-copy a tensor or a module while tracing: the call graph-breaks
    ("Attempted to copy.deepcopy a tensor", GB4198 on 2.13; "copy.deepcopy()", GB0179 on 2.11)
    and `fullgraph=True` raises. A deepcopy of plain Python constants is traced and not
    reported.

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
        self.report(node)

    INVALID = [
        """
import copy
import copy as cp
from copy import deepcopy
import torch
from torch import nn

class EMA(nn.Module):
    def forward(self, x):
        shadow = copy.deepcopy(x)  # <-
        saved = cp.deepcopy(self.cache)  # <-
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
