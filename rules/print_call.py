import ast

from compilelint.fix import builder
from compilelint.fix.notes import NOT_UNDER_COMPILE, explained
from compilelint.rule import Rule

# fix builders, imported when a finding asks for its fix
guard_statement = builder("guard", "guard_statement")


class PrintCall(Rule):
    """
    ## What it does
    Finds `print(...)` inside code that torch.compile traces.

    ## Why is this bad?
    Printing is a side effect Dynamo can't put in a graph: a plain `torch.compile` graph-breaks
    at every call ("Failed to trace builtin operator", GB0059) and `fullgraph=True` raises.

    ## Example
    ```python
    print("attn", x.shape)
    ```

    ## Use instead
    Guard it: `if not torch.compiler.is_compiling(): print(...)`, remove it, or let Dynamo move
    it after the graph with `torch._dynamo.config.reorderable_logging_functions = {print}`.

    ## Fix safety
    Unsafe. A statement that is only the call, on lines of its own, goes under
    `if not torch.compiler.is_compiling():` (with `import torch` added when the file has no name
    for torch). Eager runs it as before; under torch.compile it no longer runs at all, so the output
    is lost in compiled code.

    ## References
    https://meta-pytorch.github.io/compile-graph-break-site/gb/gb0059.html
    """

    code = "CL201"
    name = "print"
    triggers = ('print',)
    message = ("`print()` graph-breaks ({gb}): guard it with `if not torch.compiler.is_compiling():` "
               "or add print to torch._dynamo.config.reorderable_logging_functions")
    gb_types = ("Failed to trace builtin operator",)
    gb_ids = {"2.13": ("GB0059",), "2.11": ("GB0059",)}
    fix = "unsafe"

    def visit_Call(self, node: ast.Call):
        if self.ctx.resolve(node.func) == "builtins.print":
            self.report(node, fix=explained(guard_statement(self.ctx, node, "`print()`"), NOT_UNDER_COMPILE))

    # (before, after `--fix --unsafe-fixes`): what the fix does; tests/test_fix.py runs them.
    FIXES = [
        (
            """
from torch import nn

class Block(nn.Module):
    def forward(self, x):
        print("block", x.shape)
        return x * 2
""",
            """
import torch
from torch import nn

class Block(nn.Module):
    def forward(self, x):
        if not torch.compiler.is_compiling():
            print("block", x.shape)
        return x * 2
""",
        ),
    ]

    INVALID = [
        """
import torch
from torch import nn

class Attention(nn.Module):
    def forward(self, x):
        print("attention input", x.shape)  # <-
        return x.softmax(-1)
""",
    ]
    VALID = [
        """
import torch
from torch import nn

class Attention(nn.Module):
    def forward(self, x):
        if not torch.compiler.is_compiling():
            print("attention input", x.shape)
        return x.softmax(-1)

def report(x):
    print(x)  # not compiled
""",
    ]
