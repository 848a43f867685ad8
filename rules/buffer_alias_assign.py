import ast

from compilelint.analysis.astutil import is_self
from compilelint.fix import builder
from compilelint.rule import Rule

# fix builders, imported when a finding asks for its fix
buffer_to_local = builder("buffer_local", "buffer_to_local")


def _buffer(ctx, node) -> str:
    """The buffer declared `nn.Buffer(...)` that `node` names (`self.pos`), or ""."""
    cls = ctx.cls
    if cls is None or not (isinstance(node, ast.Attribute) and is_self(node.value)):
        return ""
    return node.attr if node.attr in cls.marked_buffer_attrs else ""


class BufferAliasAssign(Rule):
    """
    ## What it does
    Finds a buffer declared `self.pos = nn.Buffer(t)` rebound to itself inside compiled code:
    `self.pos = self.pos.to(...)` and augmented assignments `self.count += 1`.

    ## Why is this bad?
    `nn.Buffer(t)` marks the tensor itself as a buffer. `.to()` returns that tensor when nothing
    changes, and `+=` updates it in place; setting the module attribute to it again makes
    `nn.Module.__setattr__` see a marked buffer and read its `persistent` flag, which Dynamo does not
    trace. Measured: torch 2.13 graph-breaks inside `nn.Module.__setattr__` with "Unsupported
    python_type() call" (GB4841); torch 2.11 skips the frame with "Data-dependent branching" (GB0170;
    transformers' CTRL, `self.pos_encoding = self.pos_encoding.to(device=..., dtype=...)`). The same
    code on a buffer from `self.register_buffer("pos", t)` is traced on both (its tensor carries no
    mark), as is assigning a new tensor (`self.pos = self.pos * 2`) or a plain tensor attribute.

    ## Example
    ```python
    def forward(self, x):
        self.pos = self.pos.to(device=x.device, dtype=x.dtype)
        return x + self.pos
    ```

    ## Use instead
    Read the converted buffer into a local (`pos = self.pos.to(x.dtype)`), or update it in place
    without rebinding the attribute (`self.count.add_(1)`).

    ## Fix safety
    Unsafe: `self.b = self.b.to(...)` in a forward (a registered buffer) → `b = self.b.to(...)`, and
    the function's later reads of `self.b` read `b`. Offered only when the assignment is in no loop,
    has its lines to itself with no comment, every later read of `self.b` is in the rest of its own
    block, the function writes `self.b` nowhere else, and no local, parameter or global is named `b`.
    The module's buffer is no longer replaced by the converted tensor: other methods, later calls and
    `state_dict()` see it as `model.to(...)` left it, and each call converts it again.

    ## References
    https://meta-pytorch.github.io/compile-graph-break-site/gb/gb4841.html
    """

    code = "CL217"
    name = "buffer-alias-assign"
    triggers = ("Buffer", "register_buffer")
    message = ("rebinding a buffer to itself (`self.b = self.b.to(...)`, `self.b += v`) graph-breaks ({gb}): "
               "keep the converted buffer in a local, or update it in place with add_/copy_")
    gb_types = ("Unsupported python_type() call", "Data-dependent branching")
    gb_ids = {"2.13": ("GB4841",), "2.11": ("GB0170",)}
    fix = "unsafe"  # `self.b = self.b.to(...)` → a local (rewrites/buffer_local.py)

    def visit_Assign(self, node: ast.Assign):
        if len(node.targets) != 1:
            return
        attr = _buffer(self.ctx, node.targets[0])
        value = node.value
        if attr and isinstance(value, ast.Call) and isinstance(value.func, ast.Attribute) and \
                value.func.attr == "to" and _buffer(self.ctx, value.func.value) == attr:
            self.report(node, fix=buffer_to_local(self.ctx, node, attr))

    def visit_AugAssign(self, node: ast.AugAssign):
        if _buffer(self.ctx, node.target):
            self.report(node)

    # (before, after `--fix --unsafe-fixes`): what the fix does; tests/test_fix.py runs them.
    FIXES = [
        (
            """
import torch
from torch import nn

class Positional(nn.Module):
    def __init__(self):
        super().__init__()
        self.pos = nn.Buffer(torch.randn(16, 8))

    def forward(self, x, ids):
        self.pos = self.pos.to(device=x.device, dtype=x.dtype)
        return x + self.pos[ids]
""",
            """
import torch
from torch import nn

class Positional(nn.Module):
    def __init__(self):
        super().__init__()
        self.pos = nn.Buffer(torch.randn(16, 8))

    def forward(self, x, ids):
        pos = self.pos.to(device=x.device, dtype=x.dtype)
        return x + pos[ids]
""",
        ),
    ]

    INVALID = [
        """
import torch
from torch import nn

class Positional(nn.Module):
    def __init__(self):
        super().__init__()
        self.pos = nn.Buffer(torch.randn(16, 8))
        self.steps = nn.Buffer(torch.zeros(()))

    def forward(self, x):
        self.pos = self.pos.to(device=x.device, dtype=x.dtype)  # <-
        self.steps += 1  # <-
        return x + self.pos
""",
    ]
    VALID = [
        """
import torch
from torch import nn

class Positional(nn.Module):
    def __init__(self):
        super().__init__()
        self.pos = nn.Buffer(torch.randn(16, 8))
        self.plain = torch.randn(16, 8)

    def forward(self, x):
        pos = self.pos.to(device=x.device, dtype=x.dtype)
        self.pos = self.pos * 1.0
        self.plain = self.plain.to(x.dtype)
        return x + pos + self.plain
""",
        """
import torch
from torch import nn

class Counter(nn.Module):
    def __init__(self):
        super().__init__()
        self.register_buffer("scale", torch.ones(()))
        self.register_buffer("steps", torch.zeros(()))

    def forward(self, x):
        self.scale = self.scale.to(x.device)
        self.steps += 1
        return x * self.scale
""",
    ]
