import ast

from compilelint.analysis.astutil import is_self, walk
from compilelint.fix import builder
from compilelint.rule import Rule

# fix builders, imported when a finding asks for its fix
guard_conversion = builder("module_cast", "guard_conversion")

# nn.Module methods that convert the module's parameters and buffers in place (and return it).
CONVERSIONS = frozenset({"to", "half", "float", "bfloat16", "double", "cuda", "cpu"})
# torch.nn classes that hold parameters (by name prefix: `Conv2d`, `BatchNorm1d`, `ModuleList`); the
# others (activations, dropout, pooling, losses) have none for a conversion to rebuild.
NN_WITH_PARAMETERS = ("Linear", "Bilinear", "LazyLinear", "Conv", "LazyConv", "Embedding", "LayerNorm", "GroupNorm",
                      "RMSNorm", "BatchNorm", "LazyBatchNorm", "SyncBatchNorm", "InstanceNorm", "LazyInstanceNorm",
                      "MultiheadAttention", "RNN", "LSTM", "GRU", "Transformer", "PReLU", "AdaptiveLogSoftmax",
                      "Sequential", "ModuleList", "ModuleDict", "ParameterList", "ParameterDict")
# Tensors, not modules: `self.v = nn.Parameter(...) if affine else None` lands among the classes built.
NN_TENSORS = frozenset({"Parameter", "Buffer", "UninitializedParameter", "UninitializedBuffer"})


def _may_hold_parameters(classes) -> bool:
    """Modules only, and one of them may own parameters: a project's module class may, a torch.nn
    class if it is one that does."""
    torch_nn = [c.rsplit(".", 1)[-1] for c in classes if c.startswith("torch.nn.")]
    if any(leaf in NN_TENSORS for leaf in torch_nn):
        return False
    return len(torch_nn) < len(classes) or any(leaf.startswith(NN_WITH_PARAMETERS) for leaf in torch_nn)


def _guarded(stack, stmt, module: ast.AST) -> bool:
    """The statement runs only under a test of the module's own dtype or device
    (`if self.m.weight.dtype != dtype:`, `if next(self.m.parameters()).device != d:`)."""
    key = ast.dump(module)
    for node in stack:
        if node is stmt:
            return False
        if isinstance(node, ast.If) and any(
                isinstance(n, ast.Attribute) and n.attr in ("dtype", "device") and
                any(ast.dump(k) == key for k in walk(n.value)) for n in walk(node.test)):
            return True
    return False


class ModuleConversion(Rule):
    """
    ## What it does
    Finds a submodule converted inside compiled code: `self.m = self.m.to(dtype)`, `self.m.to(...)`,
    `self.m.half()`, `.float()`, `.bfloat16()`, `.double()`, `.cuda()`, `.cpu()`, where `self.m` is
    a module the class builds (`self.m = nn.Linear(...)`, any module class) — a router that keeps its
    classifier in float32 whatever the model's dtype, for instance. Not a tensor's `.to()`, not a
    conversion in `__init__`, and not a registered buffer (CL217).

    ## Why is this bad?
    `nn.Module.to` and its shorthands run `nn.Module._apply`, which makes a new `nn.Parameter` for
    a parameter it converts; Dynamo does not trace that ("Attempted to use `torch.nn.Parameter()`
    constructor with Dynamo", GB0264). Measured: torch 2.11 breaks there on every call even when
    nothing changes (the truth corpus, float32 models: switch_transformers' router,
    `self.classifier = self.classifier.to(self.dtype)`, 13 breaks and 6 skipped frames in eval and
    in train; nllb-moe's, 12 breaks in eval, 9 in train); torch 2.13 traces a conversion that
    changes nothing and breaks on a call whose conversion changes a parameter's dtype (the first
    call of a model held in another dtype; the next call recompiles). A torch.nn module without
    parameters (an activation, dropout) is not reported.

    ## Example
    ```python
    def forward(self, hidden):
        self.classifier = self.classifier.to(self.dtype)
        return self.classifier(hidden.to(self.dtype))
    ```

    ## Use instead
    Convert the module once, outside the compiled code (after loading the model), or only when it
    is needed: `if self.classifier.weight.dtype != self.dtype:` before the conversion (the fix, for
    torch.nn layers that always have a weight). Traced with no break when the dtype already
    matches: on torch 2.13 (measured, eval and train) and on 2.11 (nllb-moe's router guarded by
    hand: 0 breaks, on an H100).

    ## Fix safety
    Unsafe: the conversion statement (`self.m = self.m.half()`, `self.m.to(dtype)`, ...) → the same
    statement under `if self.m.weight.dtype != dtype:`. Offered only for a plain dtype (no device, no
    tensor argument) and when every class `self.m` may hold is a torch.nn layer that always owns a
    `weight` and no buffers. When the weight already has the dtype nothing is converted, so a bias or
    other parameter kept in another dtype stays as it is (`.to` would have converted it).

    ## References
    https://meta-pytorch.github.io/compile-graph-break-site/gb/gb0264.html
    """

    code = "CL218"
    name = "module-conversion"
    triggers = (".to(", ".half(", ".float(", ".bfloat16(", ".double(", ".cuda(", ".cpu(")
    message = ("converting a submodule in compiled code (`self.m.to(...)`, `.half()`) makes new Parameters, which "
               "Dynamo does not trace ({gb}): torch 2.11 breaks on every call, even when nothing changes, torch 2.13 "
               "on a call that changes the module; convert it once outside, or only when needed "
               "(`if self.m.weight.dtype != dtype:`)")
    gb_types = ("Attempted to use `torch.nn.Parameter()` constructor with Dynamo",)
    gb_ids = {"2.13": ("GB0264",), "2.11": ("GB0264",)}
    fix = "unsafe"  # the conversion under a dtype test (rewrites/module_cast.py)

    def visit_Call(self, node: ast.Call):
        func = node.func
        cls = self.ctx.cls
        if cls is None or not isinstance(func, ast.Attribute) or func.attr not in CONVERSIONS:
            return
        module = func.value
        if not (isinstance(module, ast.Attribute) and is_self(module.value)):
            return
        classes = cls.info.submodules.get(module.attr)
        if not classes or not _may_hold_parameters(classes) or module.attr in cls.tensor_attrs or \
                (func.attr == "to" and not (node.args or node.keywords)):
            return
        fn = self.ctx.function
        if fn is not None and fn.qualname.rsplit(".", 1)[-1] == "__init__":
            return  # reach enters every constructor a traced function may call: no claim there
        stmt = self.ctx.statement()
        if _guarded(self.ctx.stack, stmt, module):
            return
        whole = isinstance(stmt, (ast.Assign, ast.Expr)) and stmt.value is node
        self.report(stmt if whole else node, fix=guard_conversion(self.ctx, stmt, node, classes))

    # (before, after `--fix --unsafe-fixes`): what the fix does; tests/test_fix.py runs them.
    FIXES = [
        (
            """
import torch
from torch import nn

class Router(nn.Module):
    def __init__(self, dim, experts):
        super().__init__()
        self.classifier = nn.Linear(dim, experts, bias=False)
        self.dtype = torch.float32

    def forward(self, hidden):
        self.classifier = self.classifier.to(self.dtype)
        return self.classifier(hidden.to(self.dtype))
""",
            """
import torch
from torch import nn

class Router(nn.Module):
    def __init__(self, dim, experts):
        super().__init__()
        self.classifier = nn.Linear(dim, experts, bias=False)
        self.dtype = torch.float32

    def forward(self, hidden):
        if self.classifier.weight.dtype != self.dtype:
            self.classifier = self.classifier.to(self.dtype)
        return self.classifier(hidden.to(self.dtype))
""",
        ),
    ]

    INVALID = [
        """
import torch
from torch import nn

class Router(nn.Module):
    def __init__(self, dim, experts):
        super().__init__()
        self.classifier = nn.Linear(dim, experts, bias=False)
        self.head = nn.Sequential(nn.Linear(dim, dim), nn.GELU())
        self.dtype = torch.float32

    def forward(self, hidden):
        self.classifier = self.classifier.to(self.dtype)  # <-
        self.head.half()  # <-
        self.head.to(hidden.device)  # <-
        if hidden.dtype != self.dtype:  # a test of the input, not of the module
            self.head = self.head.to(self.dtype)  # <-
        return self.classifier(hidden.to(self.dtype)) + self.head.float()(hidden)  # <-
""",
    ]
    VALID = [
        """
import torch
from torch import nn

class Router(nn.Module):
    def __init__(self, dim, experts):
        super().__init__()
        self.classifier = nn.Linear(dim, experts).to(torch.float32)
        self.classifier.half()
        self.act = nn.GELU()
        self.scale = nn.Parameter(torch.ones(experts))
        self.shift = nn.Parameter(torch.zeros(experts)) if experts > 1 else None
        self.register_buffer("table", torch.zeros(experts))
        self.dtype = torch.float32

    def forward(self, hidden):
        hidden = hidden.to(self.dtype)
        scale = self.scale.to(hidden.dtype) + self.shift.to(hidden.dtype)
        table = self.table.to(hidden.device)
        if self.classifier.weight.dtype != self.dtype:
            self.classifier = self.classifier.to(self.dtype)
        self.act = self.act.to(self.dtype)
        return self.act(self.classifier(hidden).float()) * scale + table
""",
    ]
