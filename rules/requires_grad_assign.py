import ast

from compilelint.analysis import tensors as T
from compilelint.fix import builder
from compilelint.rule import Rule

# fix builders, imported when a finding asks for its fix
requires_grad_call = builder("requires_grad", "requires_grad_call")
requires_grad_guard = builder("requires_grad", "requires_grad_guard")

NOT_TENSORS = (T.SCALAR, T.MODULE, T.LOGGER, T.NONE, T.SEQ)


class RequiresGradAssign(Rule):
    """
    ## What it does
    Finds `t.requires_grad = ...` (the attribute form) inside compiled code.

    ## Why is this bad?
    Dynamo does not trace a store to `Tensor.requires_grad`: measured on torch 2.13, on an
    input or on an intermediate, with `True` or `False`, it graph-breaks with "setattr() on
    Tensor.requires_grad" (GB0206 on torch 2.13). The method form `t.requires_grad_()` breaks too (CL209).

    ## Example
    ```python
    def forward(self, hidden_states):
        hidden_states.requires_grad = True
        return self.block(hidden_states)
    ```

    ## Use instead
    `t.requires_grad_(False)` for `t.requires_grad = False` (the fix: the same in eager, errors
    included), or `t = t.detach()`. Turning gradients on inside the region breaks either way: set
    `requires_grad` on the inputs before calling the compiled module, or drop it: tensors computed
    from parameters already require grad. The unsafe fix guards `x.requires_grad = True` with
    `if not torch.compiler.is_compiling():` when `x` is a tensor the function made itself and
    reads no autograd state of (transformers' speech encoders): eager is unchanged, and under
    compile `x` no longer requires grad (the parameters' gradients are the same).

    ## Fix safety
    Safe: `t.requires_grad = False` → `t.requires_grad_(False)` (the statement on lines of its own):
    the same in eager, with the same error on a non-leaf tensor, and Dynamo traces the call.

    Unsafe: `x.requires_grad = True` on a tensor the function made itself (not a parameter, every
    binding before the write a tensor, the write in no loop, no read of `.grad`, `.is_leaf`,
    `.requires_grad` or hooks in the function) → guarded by `if not torch.compiler.is_compiling():`.
    Eager is unchanged; under compile `x` no longer requires grad: the parameters' gradients are the
    same, but `x.grad` stays None and reentrant gradient checkpointing sees no input that requires grad.

    Either applies where the target is a tensor: known here, or, for an untyped parameter, passed a
    tensor by every traced call.

    ## References
    https://meta-pytorch.github.io/compile-graph-break-site/gb/gb0206.html
    """

    code = "CL215"
    name = "requires-grad-assign"
    triggers = ("requires_grad",)
    message = ("`t.requires_grad = ...` inside compiled code graph-breaks ({gb} on torch 2.13): use "
               "`t.requires_grad_(False)`, or set it on the inputs before the compiled call")
    gb_types = ("setattr() on Tensor.requires_grad",)
    gb_ids = {"2.13": ("GB0206",)}  # measured on 2.13 CPU only
    fix = "sometimes"  # safe: `= False` → `t.requires_grad_(False)`; unsafe: a local's `= True` guarded

    def _check(self, target, fix=None, fix_if_tensors=()):
        if isinstance(target, ast.Attribute) and target.attr == "requires_grad" and \
                self.ctx.kind(target.value) not in NOT_TENSORS and not _is_self(target.value):
            self.report(target, fix=fix, fix_if_tensors=fix_if_tensors)

    def visit_Assign(self, node: ast.Assign):
        for target in node.targets:
            # the rewrite only where the value is known to be a tensor on every path: here, or
            # (an untyped parameter) by every traced call passing one, which the project pass checks
            proven = isinstance(target, ast.Attribute) and self.ctx.is_tensor(target.value)
            param = "" if proven or not isinstance(target, ast.Attribute) else self.ctx.untyped_param(target.value)
            fix = (requires_grad_call(self.ctx, node) or requires_grad_guard(self.ctx, node)) if proven or param else None
            self._check(target, fix, (param,) if param else ())

    def visit_AnnAssign(self, node: ast.AnnAssign):
        if node.value is not None:
            self._check(node.target)

    # (before, after `--fix --unsafe-fixes`): what the fix does; tests/test_fix.py runs them.
    FIXES = [
        (
            """
import torch

@torch.compile
def frozen(x):
    y = x * 2
    y.requires_grad = False
    return y + 1
""",
            """
import torch

@torch.compile
def frozen(x):
    y = x * 2
    y.requires_grad_(False)
    return y + 1
""",
        ),
    ]

    INVALID = [
        """
import torch
from torch import nn

class Block(nn.Module):
    def forward(self, hidden_states):
        if self.training:
            hidden_states.requires_grad = True  # <-
        y = hidden_states * 2
        y.requires_grad = False  # <-
        return y
""",
    ]
    VALID = [
        """
import torch
from torch import nn

class Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.requires_grad = False  # a plain attribute of the module
        self.proj = nn.Linear(4, 4)
        for p in self.proj.parameters():
            p.requires_grad = False  # in __init__, not compiled

    def forward(self, x):
        return self.proj(x)

def prepare(x):  # nothing compiles this
    x.requires_grad = True
    return x
""",
    ]


def _is_self(node) -> bool:
    return isinstance(node, ast.Name) and node.id == "self"
