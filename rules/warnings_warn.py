import ast

from compilelint.fix import builder
from compilelint.fix.notes import NOT_UNDER_COMPILE, explained
from compilelint.rule import Rule

# fix builders, imported when a finding asks for its fix
guard_statement = builder("guard", "guard_statement")

WARN_FUNCTIONS = frozenset({"warnings.warn", "warnings.warn_explicit"})


class WarningsWarn(Rule):
    """
    ## What it does
    Finds `warnings.warn(...)` inside compiled code.

    ## Why is this bad?
    `warnings.warn` is a C function Dynamo does not trace: every call graph-breaks
    ("Attempted to call function marked as skipped", GB0007) and `fullgraph=True` raises, even
    when the warning filter would drop it.

    ## Example
    ```python
    if self.use_legacy_rope:
        warnings.warn("legacy rope is deprecated")
    ```

    ## Use instead
    Warn once at construction time (`__init__`), guard the call with
    `if not torch.compiler.is_compiling():`, or let Dynamo move it after the graph:
    `torch._dynamo.config.reorderable_logging_functions = {warnings.warn}`
    (`ignore_logging_functions` drops it).

    ## Fix safety
    Unsafe. A statement that is only the call, on lines of its own, goes under
    `if not torch.compiler.is_compiling():` (with `import torch` added when the file has no name
    for torch). Eager runs it as before; under torch.compile it no longer runs at all, so the warning
    is lost in compiled code.

    ## References
    https://meta-pytorch.github.io/compile-graph-break-site/gb/gb0007.html
    """

    code = "CL203"
    name = "warnings-warn"
    triggers = ('warn',)
    message = ("`warnings.warn()` graph-breaks ({gb}): warn in __init__, guard it with "
               "`if not torch.compiler.is_compiling():`, or add warnings.warn to "
               "torch._dynamo.config.reorderable_logging_functions")
    gb_types = ("Attempted to call function marked as skipped",)
    gb_ids = {"2.13": ("GB0007",), "2.11": ("GB0007",)}
    fix = "unsafe"

    def visit_Call(self, node: ast.Call):
        if self.ctx.resolve(node.func) in WARN_FUNCTIONS:
            self.report(node, fix=explained(guard_statement(self.ctx, node, "`warnings.warn()`"), NOT_UNDER_COMPILE))

    # (before, after `--fix --unsafe-fixes`): what the fix does; tests/test_fix.py runs them.
    FIXES = [
        (
            """
import warnings
import torch
from torch import nn

class Block(nn.Module):
    def forward(self, x):
        warnings.warn("deprecated path")
        return x * 2
""",
            """
import warnings
import torch
from torch import nn

class Block(nn.Module):
    def forward(self, x):
        if not torch.compiler.is_compiling():
            warnings.warn("deprecated path")
        return x * 2
""",
        ),
    ]

    INVALID = [
        """
import warnings
from warnings import warn as _warn
import torch
from torch import nn

class Rotary(nn.Module):
    def forward(self, x):
        if x.shape[-1] % 2:
            warnings.warn("odd head dim, padding")  # <-
        _warn("legacy path", DeprecationWarning)  # <-
        return x
""",
    ]
    VALID = [
        """
import warnings
import torch
from torch import nn

class Rotary(nn.Module):
    def __init__(self, dim):
        super().__init__()
        if dim % 2:
            warnings.warn("odd head dim, padding")  # __init__ is not compiled
        self.dim = dim

    def forward(self, x):
        if not torch.compiler.is_compiling():
            warnings.warn("eager only")
        return x

def warn(msg):  # a local helper that happens to be called warn
    return msg

class Other(nn.Module):
    def forward(self, x):
        warn("fine")
        return x
""",
    ]
