import ast

from compilelint.fix import builder
from compilelint.fix.notes import NOT_UNDER_COMPILE, explained
from compilelint.rule import Rule

# fix builders, imported when a finding asks for its fix
guard_statement = builder("guard", "guard_statement")

DEBUGGER_CALLS = frozenset({
    "builtins.breakpoint", "pdb.set_trace", "pdb.post_mortem", "pdb.pm", "ipdb.set_trace",
    "ipdb.post_mortem", "pudb.set_trace", "IPython.embed", "debugpy.breakpoint",
})
DEBUGGER_CLASSES = frozenset({"pdb.Pdb", "ipdb.Pdb"})


class Debugger(Rule):
    """
    ## What it does
    Finds `breakpoint()`, `pdb.set_trace()`, `ipdb.set_trace()`, `pdb.Pdb().set_trace()` and
    similar debugger entry points inside compiled code.

    ## Why is this bad?
    Dynamo cannot trace into a debugger: `breakpoint()` graph-breaks ("Failed to trace builtin
    operator", GB0059), `pdb.set_trace()` too ("Attempted to call function marked as skipped",
    GB0007). The breakpoint is never hit as written: it stops in the graph-break machinery, not
    in your frame, and the tensors there are fake while tracing.

    ## Example
    ```python
    def forward(self, x):
        breakpoint()
        return self.proj(x)
    ```

    ## Use instead
    Debug the function in eager: decorate it with `@torch.compiler.disable` while debugging, run
    everything eagerly with `torch.compiler.set_stance("force_eager")`, or start vLLM with
    `--enforce-eager`. Remove the call before compiling.

    ## Fix safety
    Unsafe. A statement that is only the call, on lines of its own, goes under
    `if not torch.compiler.is_compiling():` (with `import torch` added when the file has no name
    for torch). Eager runs it as before; under torch.compile it no longer runs at all, so the stop in the debugger
    is lost in compiled code.

    ## References
    https://meta-pytorch.github.io/compile-graph-break-site/gb/gb0059.html
    """

    code = "CL204"
    name = "debugger"
    triggers = ('breakpoint', 'set_trace')
    message = ("a debugger breakpoint in compiled code graph-breaks and is never hit as written: debug with "
               "@torch.compiler.disable on the function, torch.compiler.set_stance(\"force_eager\"), "
               "or vLLM --enforce-eager")
    gb_types = ("Failed to trace builtin operator", "Attempted to call function marked as skipped")
    gb_ids = {"2.13": ("GB0059", "GB0007"), "2.11": ("GB0059", "GB0007")}
    fix = "unsafe"  # guarded by `if not torch.compiler.is_compiling():`

    def visit_Call(self, node: ast.Call):
        func = node.func
        name = self.ctx.resolve(func)
        if name in DEBUGGER_CALLS:
            self.report(node, fix=explained(guard_statement(self.ctx, node, "the breakpoint"), NOT_UNDER_COMPILE))
        elif isinstance(func, ast.Attribute) and func.attr == "set_trace" and isinstance(func.value, ast.Call) \
                and self.ctx.resolve(func.value.func) in DEBUGGER_CLASSES:
            self.report(node, fix=explained(guard_statement(self.ctx, node, "the breakpoint"), NOT_UNDER_COMPILE))

    # (before, after `--fix --unsafe-fixes`): what the fix does; tests/test_fix.py runs them.
    FIXES = [
        (
            """
import torch
from torch import nn

class Block(nn.Module):
    def forward(self, x):
        breakpoint()
        return x * 2
""",
            """
import torch
from torch import nn

class Block(nn.Module):
    def forward(self, x):
        if not torch.compiler.is_compiling():
            breakpoint()
        return x * 2
""",
        ),
    ]

    INVALID = [
        """
import pdb
import torch
from torch import nn

class Block(nn.Module):
    def forward(self, x):
        breakpoint()  # <-
        pdb.set_trace()  # <-
        pdb.Pdb().set_trace()  # <-
        import ipdb
        ipdb.set_trace()  # <-
        return x * 2
""",
    ]
    VALID = [
        """
import pdb
import torch
from torch import nn

class Block(nn.Module):
    def forward(self, x):
        if not torch.compiler.is_compiling():
            breakpoint()
        return x * 2

@torch.compiler.disable
def inspect(x):
    pdb.set_trace()  # disabled functions run in eager
    return x

def set_trace():
    return None

class Other(nn.Module):
    def forward(self, x):
        set_trace()  # a local helper, not the debugger
        return x
""",
    ]
