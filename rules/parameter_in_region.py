import ast

from compilelint.rule import Rule

PARAMETER = frozenset({"torch.nn.Parameter", "torch.nn.parameter.Parameter"})
# Tensor factories that take `requires_grad=`: with True they make a new leaf that needs grad.
FACTORIES = frozenset(f"torch.{n}" for n in (
    "zeros", "ones", "empty", "full", "rand", "randn", "randint", "tensor", "arange", "linspace", "eye",
    "zeros_like", "ones_like", "empty_like", "full_like", "rand_like", "randn_like", "as_tensor",
))

# nn layers whose constructor makes parameters by default (measured on 2.13: `nn.Linear(4, 4)` and
# `nn.LayerNorm(4)` in forward break in their `__init__`, `nn.Dropout(0.1)` does not).
PARAMETERIZED_LAYERS = frozenset(f"torch.nn.{n}" for n in (
    "Linear", "Bilinear", "Conv1d", "Conv2d", "Conv3d", "ConvTranspose1d", "ConvTranspose2d", "ConvTranspose3d",
    "Embedding", "EmbeddingBag", "LayerNorm", "GroupNorm", "RMSNorm", "BatchNorm1d", "BatchNorm2d", "BatchNorm3d",
    "MultiheadAttention", "PReLU",
))
# Keywords that leave such a layer without parameters (`nn.LayerNorm(d, elementwise_affine=False)`).
NO_PARAMETERS = ("elementwise_affine", "affine")


class ParameterInRegion(Rule):
    """
    ## What it does
    Finds trainable leaf tensors created inside compiled code: `nn.Parameter(...)` (also a lazily
    created `self.w = nn.Parameter(...)` in `forward`), nn layers that make parameters built there
    (`nn.Linear(...)`, `nn.LayerNorm(...)` in `forward`; not in an `__init__`) and tensor factories
    called with `requires_grad=True` (`torch.zeros(n, requires_grad=True)`), or with a flag, in the
    mode or on the calls that make it true (`requires_grad=self.training`: in train).

    ## Why is this bad?
    Dynamo does not trace the creation of a new leaf that requires grad. Measured on torch 2.13:
    `nn.Parameter(t)` graph-breaks with "Attempted to use `torch.nn.Parameter()` constructor with
    Dynamo" (GB0264 on torch 2.13), and `torch.zeros(..., requires_grad=True)` with "Attempted to use tensor
    creation function with requires_grad=True" (GB0225 on torch 2.13). A lazily created parameter also
    recompiles once (`hasattr(self, ...)` guard).

    ## Example
    ```python
    def forward(self, x):
        scale = nn.Parameter(torch.ones(x.shape[-1]))
        return x * scale
    ```

    ## Use instead
    Create parameters in `__init__` (or run one eager forward before compiling a lazily built
    module), and make tensors that need grad outside the compiled region.

    ## References
    https://meta-pytorch.github.io/compile-graph-break-site/gb/gb0264.html
    """

    code = "CL214"
    name = "parameter-in-region"
    triggers = ("Parameter", "requires_grad", "Linear", "Conv", "Embedding", "Norm", "Bilinear",
                "MultiheadAttention", "PReLU")
    message = ("`nn.Parameter(...)` inside compiled code graph-breaks ({gb} on torch 2.13): create the parameter in "
               "__init__, outside the compiled region")
    gb_types = ("Attempted to use `torch.nn.Parameter()` constructor with Dynamo",
                "Attempted to use tensor creation function with requires_grad=True")
    gb_ids = {"2.13": ("GB0264", "GB0225")}  # measured on 2.13 CPU only

    def _in_init(self) -> bool:
        """In an `__init__`: reach enters one for every class a traced function may build, also
        where an argument decides it never is (BigBird's `set_attention_type(value)` builds either
        attention class; its forward only ever asks for one): a layer built there is no claim."""
        fn = self.ctx.function
        return fn is not None and fn.qualname.rsplit(".", 1)[-1] == "__init__"

    def visit_Call(self, node: ast.Call):
        name = self.ctx.resolve(node.func)
        if name in PARAMETER:
            self.report(node)
        elif name in PARAMETERIZED_LAYERS and not self._in_init() and not any(
                kw.arg in NO_PARAMETERS and isinstance(kw.value, ast.Constant) and kw.value.value is False
                for kw in node.keywords):
            self.report(node, f"`{name[6:]}(...)` built inside compiled code makes its parameters there and "
                              "graph-breaks ({gb} on torch 2.13): build the layer in __init__ and reuse it")
        elif name in FACTORIES:
            for kw in node.keywords:
                if kw.arg != "requires_grad" or isinstance(kw.value, ast.Constant) and not kw.value.value:
                    continue
                # a constant True breaks on every call; a flag (`requires_grad=self.training`) where it is true
                flag = () if isinstance(kw.value, ast.Constant) else (kw.value,)
                self.report(node, f"`{name}(..., requires_grad=True)` inside compiled code graph-breaks "
                                  "({gb1} on torch 2.13): create the tensor outside the compiled region and pass it in",
                            breaks_if=flag)

    INVALID = [
        """
import torch
from torch import nn

class LazyScale(nn.Module):
    def forward(self, x):
        if not hasattr(self, "scale"):
            self.scale = nn.Parameter(torch.ones(x.shape[-1]))  # <-
        return x * self.scale
""",
        """
import torch
from torch.nn import Parameter

@torch.compile
def affine(x):
    w = Parameter(torch.ones(8))  # <-
    b = torch.zeros(8, requires_grad=True)  # <-
    return x * w + b
""",
        """
import torch
from torch import nn

class OnTheFly(nn.Module):
    def forward(self, x):
        proj = nn.Linear(x.shape[-1], 8)  # <-
        return nn.LayerNorm(8)(proj(x))  # <-
""",
        """
import torch
from torch import nn

class Penalized(nn.Module):
    def __init__(self):
        super().__init__()
        self.proj = nn.Linear(8, 8)

    def forward(self, x):
        extra = torch.tensor([0.0], device=x.device, requires_grad=self.training)  # <-
        return self.proj(x), extra
""",
    ]
    VALID = [
        """
import torch
from torch import nn

class Scale(nn.Module):
    def __init__(self, n):
        super().__init__()
        self.scale = nn.Parameter(torch.ones(n))
        self.bias = torch.zeros(n, requires_grad=True)

    def forward(self, x):
        mask = torch.zeros(x.shape, requires_grad=False)
        return x * self.scale + self.bias + mask
""",
        """
import torch
from torch import nn

class Stateless(nn.Module):
    def forward(self, x):
        x = nn.Dropout(0.1)(x)
        return nn.LayerNorm(x.shape[-1], elementwise_affine=False)(x)
""",
        """
import torch
from torch import nn

def zero_like_loss(x, track=False):
    return torch.zeros(1, device=x.device, requires_grad=track)

class Head(nn.Module):
    def __init__(self):
        super().__init__()
        self.proj = nn.Linear(8, 8)

    def forward(self, x):
        return self.proj(x).sum() + zero_like_loss(x).sum()
""",
    ]
