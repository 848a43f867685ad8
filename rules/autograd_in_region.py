import ast

from compilelint.analysis import tensors as T
from compilelint.rule import Rule

NOT_TENSORS = (T.SCALAR, T.MODULE, T.LOGGER, T.NONE, T.SEQ)


class AutogradInRegion(Rule):
    """
    ## What it does
    Finds autograd calls inside compiled code: `t.requires_grad_()`, `loss.backward()`,
    `torch.autograd.grad(...)` and `torch.autograd.backward(...)`, and parameters frozen there:
    `module.requires_grad_(False)` (`self.head.requires_grad_(False)` in `forward`) and
    `p.requires_grad_(False)` in a loop over `parameters()` / `named_parameters()`.

    ## Why is this bad?
    Dynamo traces the forward computation; these calls drive autograd from inside it and
    graph-break: `requires_grad_()` ("Unsupported Tensor.requires_grad_() call", GB0125; on 2.13
    an intermediate gives GB7324/GB8985), `backward()` ("Unsupported Tensor.backward() call",
    GB0123) and `torch.autograd.grad` (GB9186). `requires_grad_(False)` changes a parameter, which
    requires grad, and breaks the same way (in a loop Dynamo skips the whole frame); on a tensor that
    does not require grad (an intermediate) it changes nothing and traces. Freezing in an `__init__`
    is no claim: a module built inside compiled code runs its `__init__` eager after its first break.

    ## Example
    ```python
    @torch.compile
    def train_step(model, x, y):
        loss = F.cross_entropy(model(x), y)
        loss.backward()
    ```

    ## Use instead
    Compile the model (or the loss computation) and call `backward()` outside it; torch.compile
    builds the backward graph for you. To trace `backward()` and `torch.autograd.grad` anyway,
    set `torch._dynamo.config.trace_autograd_ops = True`. Call `requires_grad_()`, and freeze
    parameters, outside the compiled region (in `__init__`, or before `torch.compile`).

    ## References
    https://meta-pytorch.github.io/compile-graph-break-site/gb/gb0123.html
    """

    code = "CL209"
    name = "autograd-in-region"
    triggers = ('grad', 'backward')
    message = ("autograd calls inside compiled code graph-break: call backward() outside, or set "
               "torch._dynamo.config.trace_autograd_ops = True")
    gb_types = ("Unsupported Tensor.backward() call", "Unsupported Tensor.requires_grad_() call",
                "using `torch.autograd.grad` with `torch._dynamo.config.trace_autograd_ops=False`",
                "returning intermediate with requires_grad_()", "requires_grad_() intermediate leaked as output")
    gb_ids = {"2.13": ("GB0123", "GB0125", "GB9186", "GB7324", "GB8985"),
              "2.11": ("GB0123", "GB0125", "GB9186")}

    def visit_Call(self, node: ast.Call):
        func = node.func
        name = self.ctx.resolve(func)
        if name in ("torch.autograd.grad", "torch.autograd.backward"):
            self.report(node, f"`{name}()` graph-breaks inside compiled code ({{gb2}}): set "
                              "torch._dynamo.config.trace_autograd_ops = True, or call it outside the compiled region")
            return
        if not isinstance(func, ast.Attribute):
            return
        if func.attr == "backward" and self.ctx.kind(func.value) not in NOT_TENSORS:
            if self.ctx.is_tensor(func.value) or self._loss_like(func.value):
                self.report(node, "`.backward()` graph-breaks inside compiled code ({gb}): compile the forward and "
                                  "call backward() outside, or set torch._dynamo.config.trace_autograd_ops = True")
        elif func.attr == "requires_grad_" and _turns_off(node):
            if self._in_init():
                return
            if self.ctx.kind(func.value) == T.MODULE or self._own_module(func.value):
                self.report(node, "`module.requires_grad_(False)` turns off its parameters' grad inside compiled "
                                  "code and graph-breaks ({gb1}): freeze the module outside the compiled region "
                                  "(in __init__, or before torch.compile)")
            elif _iterated_parameter(self.ctx.stack, func.value):
                self.report(node, "`.requires_grad_(False)` on a parameter (which requires grad) graph-breaks inside "
                                  "compiled code ({gb1}); in a loop Dynamo skips the whole frame: freeze the "
                                  "parameters outside the compiled region (in __init__, or before torch.compile)")
        elif func.attr == "requires_grad_" and self.ctx.is_tensor(func.value):
            flag = (node.args[:1] + [k.value for k in node.keywords if k.arg == "requires_grad"])[:1]
            self.report(node, "`.requires_grad_()` graph-breaks inside compiled code ({gb1}): call it before the "
                              "compiled region", breaks_if=tuple(flag))

    def _in_init(self) -> bool:
        """In an `__init__`: a module built inside compiled code runs its `__init__` inlined until the
        first break (building a layer with parameters is one) and then as a frame of its own, which
        Dynamo skips ("Uninitialized nn.Module" at `super().__init__()`): the parameters it builds are
        frozen eager (measured on 2.13: fixtures/precision/parameter_requires_grad_off.py)."""
        fn = self.ctx.function
        return fn is not None and fn.qualname.rsplit(".", 1)[-1] == "__init__"

    def _own_module(self, node: ast.AST) -> bool:
        """`self` in a method of a class (an nn.Module's `forward`)."""
        return isinstance(node, ast.Name) and node.id == "self" and self.ctx.cls is not None

    @staticmethod
    def _loss_like(node: ast.AST) -> bool:
        return isinstance(node, ast.Name) and "loss" in node.id.lower()

    INVALID = [
        """
import torch
import torch.nn.functional as F

@torch.compile
def train_step(model, x, y):
    x = x.clone().requires_grad_()  # <-
    loss = F.cross_entropy(model(x), y)
    (g,) = torch.autograd.grad(loss, x, retain_graph=True)  # <-
    loss.backward()  # <-
    return g
""",
        """
import torch
from torch import nn

class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.body = nn.Linear(4, 4)
        self.head = nn.Linear(4, 4)

    def forward(self, x):
        self.head.requires_grad_(False)  # <-
        for p in self.body.parameters():
            p.requires_grad_(False)  # <-
        return self.head(self.body(x))

compiled = torch.compile(Net())
""",
    ]
    VALID = [
        """
import torch
import torch.nn.functional as F
from torch import nn

class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.head = nn.Linear(4, 4)
        self.head.requires_grad_(False)  # frozen at construction

    def forward(self, x):
        x = (x * 2).requires_grad_(False)  # an intermediate: nothing changes
        return self.head(x)

def train(model, opt, x, y):
    compiled = torch.compile(model)
    loss = F.cross_entropy(compiled(x), y)
    loss.backward()  # outside the compiled region
    opt.step()
""",
    ]


PARAMETER_ITERATORS = {"parameters": False, "named_parameters": True}  # method → yields (name, parameter)


def _iterated_parameter(stack, node: ast.AST) -> bool:
    """Is `node` the name a `for` around it binds to a module's parameters (`for p in
    m.parameters():`, `for name, p in m.named_parameters():`)? A parameter requires grad unless
    frozen before: turning that off changes it, which Dynamo refuses (turning off a tensor that
    does not require grad, an intermediate, traces)."""
    if not isinstance(node, ast.Name):
        return False
    for holder in reversed(stack):
        if isinstance(holder, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
            return False
        if not (isinstance(holder, ast.For) and isinstance(holder.iter, ast.Call)
                and isinstance(holder.iter.func, ast.Attribute) and holder.iter.func.attr in PARAMETER_ITERATORS):
            continue
        target = holder.target
        if PARAMETER_ITERATORS[holder.iter.func.attr]:
            target = target.elts[-1] if isinstance(target, ast.Tuple) and len(target.elts) == 2 else None
        if isinstance(target, ast.Name) and target.id == node.id:
            return True
    return False


def _turns_off(node: ast.Call) -> bool:
    args = list(node.args) + [k.value for k in node.keywords if k.arg == "requires_grad"]
    return any(isinstance(a, ast.Constant) and a.value is False for a in args)
