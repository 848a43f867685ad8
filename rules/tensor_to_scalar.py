import ast

from compilelint.rule import Rule

# Factories whose positional arguments are sizes or bounds (Python numbers to Dynamo).
SIZED_FACTORIES = frozenset(f"torch.{n}" for n in ("arange", "zeros", "ones", "empty", "rand", "randn"))
# The casts reported on a tensor (besides `math.*`).
SCALAR_CASTS = frozenset({"builtins.int", "builtins.float", "builtins.bool"})


class TensorToScalar(Rule):
    """
    ## What it does
    Finds `int(t)`, `float(t)`, `bool(t)` and `math.*(t)` of a tensor inside compiled code,
    including `range(int(t))`, factories sized by a tensor op (`torch.arange(lengths.max())`) and
    slices bounded by a tensor (`x[:, :n]` with `n = sizes[0]`).

    ## Why is this bad?
    Converting a tensor to a Python number reads its data: a plain `torch.compile` graph-breaks
    (GB0124 "Unsupported Tensor.item() call with capture_scalar_outputs=False"; `math.sqrt(t)`:
    GB0033 "Data dependent operator"). `bool(t)`, `math.*(t)` and `range(int(t))` fail even under
    `fullgraph=True` ("Could not guard on data-dependent expression"), and no config knob helps
    them. `int(t)`/`float(t)` are captured with `capture_scalar_outputs = True`. `torch.arange(t.max())`
    graph-breaks with "Data dependent operator" (GB0033; VITS's output lengths).

    ## Example
    ```python
    n = int(lengths.max())
    return x[:, :n]
    ```

    ## Use instead
    Stay in tensor land (`torch.sqrt(t)`, `t.clamp(...)`, masks), pass the number in from outside
    the compiled region, or set `torch._dynamo.config.capture_scalar_outputs = True` for int/float.

    ## References
    https://meta-pytorch.github.io/compile-graph-break-site/gb/gb0124.html
    """

    code = "CL102"
    name = "tensor-to-scalar"
    triggers = ()
    message = "converting a tensor to a Python number graph-breaks"
    gb_types = ("Unsupported Tensor.item() call with capture_scalar_outputs=False", "Data dependent operator")
    gb_ids = {"2.13": ("GB0124", "GB0033"), "2.11": ("GB0124", "GB0033")}

    def visit_Call(self, node: ast.Call):
        name = self.ctx.resolve(node.func)
        if name in SIZED_FACTORIES:
            # `torch.arange(lengths.max())`: a size computed by a tensor op is read back as a number.
            if any(isinstance(a, ast.Call) and self.ctx.is_tensor(a) for a in node.args):
                self.report(node, f"`{name}()` sized by a tensor reads its data into Python and graph-breaks "
                                  "({gb1}): size it with Python numbers (shapes), or allocate the maximum and mask")
            return
        if len(node.args) != 1 or node.keywords:
            return
        if name is None or not (name in SCALAR_CASTS or name.startswith("math.")):
            return  # the name first: most calls of one argument are none of these, and tensor inference costs
        if not self.ctx.is_tensor(node.args[0]):
            return
        if name in ("builtins.int", "builtins.float"):
            self.report(node, f"`{name[9:]}(tensor)` reads tensor data into Python and graph-breaks "
                              "({gb}): keep the tensor, or set torch._dynamo.config.capture_scalar_outputs = True")
        elif name == "builtins.bool":
            self.report(node, "`bool(tensor)` is data-dependent and graph-breaks even under capture_scalar_outputs: "
                              "keep a boolean tensor and use torch.where / torch.cond")
        elif name.startswith("math."):
            self.report(node, f"`{name}(tensor)` reads tensor data into Python and graph-breaks ({{gb1}}): "
                              f"use the torch equivalent (torch.{name[5:]})")

    def visit_Subscript(self, node: ast.Subscript):
        # `x[:, :n]` with `n` a 0-d tensor: the bound is read back as a Python int.
        parts = node.slice.elts if isinstance(node.slice, ast.Tuple) else [node.slice]
        for part in parts:
            if isinstance(part, ast.Slice) and any(b is not None and self.ctx.is_tensor(b)
                                                   for b in (part.lower, part.upper, part.step)):
                self.report(node, "slicing with a tensor bound reads it into Python and graph-breaks ({gb}): "
                                  "pass the bound as a Python int, or set torch._dynamo.config.capture_scalar_outputs = True")
                return

    INVALID = [
        """
import math
import torch
from torch import nn

class Decoder(nn.Module):
    def forward(self, x, lengths):
        n = int(lengths.max())  # <-
        keep = bool((x > 0).any())  # <-
        norm = math.sqrt(x.pow(2).sum())  # <-
        steps = torch.arange(lengths.max(), device=x.device)  # <-
        half = x[:, :lengths[0]]  # <-
        return x[:, :n] / norm, steps, half
""",
    ]
    VALID = [
        """
import math
import torch
from torch import nn

class Decoder(nn.Module):
    def forward(self, x):
        n = int(x.shape[0] * 0.5)
        d = math.sqrt(x.size(-1))
        steps = torch.arange(x.shape[1], device=x.device)
        return x[:n] / d, steps
""",
    ]
