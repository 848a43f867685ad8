import ast

from compilelint.analysis import tensors as T
from compilelint.rule import Rule

# Measured to graph-break on 2.13, each with its GB id (`{gb}`: the first of `gb_ids`); `set_` and
# `untyped_storage()` were measured clean.
METHODS = {"resize_": "{gb}", "resize_as_": "{gb1}"}


class UnsupportedTensorMethod(Rule):
    """
    ## What it does
    Finds tensor methods Dynamo refuses to trace inside compiled code: `t.resize_(...)` and
    `t.resize_as_(...)`.

    ## Why is this bad?
    Resizing storage in place changes a tensor's metadata behind the graph's back: Dynamo
    graph-breaks ("Unsupported Tensor.resize_() call", GB0126; "Unsupported
    Tensor.resize_as_() call", GB0127) and `fullgraph=True` raises. No knob helps.

    ## Example
    ```python
    buf = torch.empty(0, device=x.device)
    buf.resize_(n, d)
    ```

    ## Use instead
    Allocate the size you need (`torch.empty(n, d, ...)`, `x.new_empty(...)`), or use
    out-of-place reshapes (`view`, `reshape`, `expand`) and slicing.

    ## References
    https://meta-pytorch.github.io/compile-graph-break-site/gb/gb0126.html
    """

    code = "CL212"
    name = "unsupported-tensor-method"
    triggers = ('resize_',)
    message = ("`Tensor.resize_()` graph-breaks ({gb}): allocate the right size (torch.empty / new_empty) "
               "or reshape out of place")
    gb_types = ("Unsupported Tensor.resize_() call", "Unsupported Tensor.resize_as_() call")
    gb_ids = {"2.13": ("GB0126", "GB0127"), "2.11": ("GB0126", "GB0127")}

    def visit_Call(self, node: ast.Call):
        func = node.func
        if not isinstance(func, ast.Attribute) or func.attr not in METHODS:
            return
        if self.ctx.kind(func.value) in (T.SCALAR, T.MODULE, T.LOGGER, T.NONE, T.SEQ):
            return
        self.report(node, f"`Tensor.{func.attr}()` graph-breaks ({METHODS[func.attr]}): allocate the right size "
                          "(torch.empty / new_empty) or reshape out of place")

    INVALID = [
        """
import torch
from torch import nn

class Pool(nn.Module):
    def forward(self, x):
        buf = torch.empty(0, device=x.device)
        buf.resize_(x.shape[0], 4)  # <-
        out = torch.empty(0)
        out.resize_as_(x)  # <-
        return x + buf.sum() + out.sum()
""",
    ]
    VALID = [
        """
import torch
from torch import nn

class Pool(nn.Module):
    def forward(self, x):
        buf = x.new_empty(x.shape[0], 4)
        y = x.reshape(-1).view(x.shape)
        y.set_(x)
        return y + buf.sum()
""",
    ]
