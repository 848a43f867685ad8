import ast

from compilelint.finding import Span
from compilelint.rule import ProjectContext, Rule

GRAPH_BREAK = frozenset({"torch._dynamo.graph_break", "torch._dynamo.decorators.graph_break"})


class ExplicitBreak(Rule):
    """
    ## What it does
    Finds explicit graph breaks inside compiled code: `torch._dynamo.graph_break()`, and calls
    to functions decorated with `@torch.compiler.disable` / `@torch._dynamo.disable` (the
    project pass finds those, across files).

    ## Why is this bad?
    Both always split the graph: "Call to `torch._dynamo.graph_break()`" (GB0025) and
    "Skip calling `torch.compiler.disable()`d function" (GB0098). `fullgraph=True` raises. They
    are often left over from debugging, or wrap code that has since become traceable.

    ## Example
    ```python
    @torch.compiler.disable
    def log_stats(x): ...

    def forward(self, x):
        log_stats(x)
        torch._dynamo.graph_break()
        return self.proj(x)
    ```

    ## Use instead
    Remove the call; move disabled helpers out of the compiled region (call them around the
    compiled model), or drop `@torch.compiler.disable` once the function traces.

    ## References
    https://meta-pytorch.github.io/compile-graph-break-site/gb/gb0025.html
    """

    code = "CL210"
    name = "explicit-break"
    triggers = ('graph_break',)
    message = ("`torch._dynamo.graph_break()` always splits the graph ({gb}): remove it, or move the code "
               "around it out of the compiled region")
    gb_types = ("Call to `torch._dynamo.graph_break()`", "Skip calling `torch.compiler.disable()`d function")
    gb_ids = {"2.13": ("GB0025", "GB0098"), "2.11": ("GB0025", "GB0098")}

    def visit_Call(self, node: ast.Call):
        if self.ctx.resolve(node.func) in GRAPH_BREAK:
            self.report(node)

    @classmethod
    def check_project(cls, project: ProjectContext):
        """Calls into `@torch.compiler.disable` functions: which function is disabled is known only
        across files, so the project pass finds these."""
        for d in project.disabled_calls:
            region = project.region(f"{d.summary.module}.{d.function.qualname}")
            if region is None or project.dead(d.call.guards):
                continue
            message = (f"`{d.callee}` is decorated with torch.compiler.disable: calling it from compiled "
                       f"code always graph-breaks ({{gb1}}); move the call out of the compiled region, or "
                       f"drop the decorator if the function is traceable")
            span = Span(d.call.row, d.call.col, d.call.row, d.call.col + len(d.call.label))
            project.report(cls, d.summary, d.function.qualname, span, message, region)

    INVALID = [
        """
import torch
import torch._dynamo
from torch import nn

@torch.compiler.disable
def log_stats(x):
    return x.mean().item()

class Block(nn.Module):
    def forward(self, x):
        log_stats(x)  # <-
        torch._dynamo.graph_break()  # <-
        return x * 2
""",
    ]
    VALID = [
        """
import torch
from torch import nn

@torch.compiler.disable
def log_stats(x):
    return x.mean().item()

class Block(nn.Module):
    def forward(self, x):
        if not torch.compiler.is_compiling():
            log_stats(x)
        return x * 2

def run(model, x):
    y = model(x)
    log_stats(y)  # outside the compiled region
    return y
""",
    ]
