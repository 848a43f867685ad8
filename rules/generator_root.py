from compilelint.finding import Region, Span
from compilelint.rule import ProjectContext, Rule


class GeneratorRoot(Rule):
    """
    ## What it does
    Finds generator functions (with `yield`) handed directly to torch.compile:
    `@torch.compile` on a generator, or `torch.compile(gen_fn)`. The project pass reports them
    at the `def` line.

    ## Why is this bad?
    Dynamo does not trace a generator frame: "Attempt to trace generator" (GB0003). With a plain
    `torch.compile` the whole function silently runs eager — 0 graphs, and even
    `error_on_graph_break(True)` stays quiet — so the compile does nothing. A generator helper
    *called and consumed* inside a compiled function (`sum(gen(x))`) is fine.

    ## Example
    ```python
    @torch.compile
    def decode(model, x, steps):
        for _ in range(steps):
            x = model(x)
            yield x
    ```

    ## Use instead
    Compile the non-generator step (`step = torch.compile(model)`) and keep the `yield` loop
    outside; or return a list instead of yielding.

    ## References
    https://meta-pytorch.github.io/compile-graph-break-site/gb/gb0003.html
    """

    code = "CL211"
    name = "generator-root"
    message = ("torch.compile on a generator function compiles nothing: Dynamo skips generator frames ({gb}) "
               "and the function runs eager; compile the step it yields from instead")
    gb_types = ("Attempt to trace generator",)
    gb_ids = {"2.13": ("GB0003",), "2.11": ("GB0003",)}

    @classmethod
    def check_project(cls, project: ProjectContext):
        """Generators handed to torch.compile directly (explicit roots), reported at the `def`."""
        for fid, via, _cudagraph, explicit, *_ in project.roots:
            entry = project.function(fid) if explicit else None
            if entry is None or not entry[1].is_generator:
                continue
            region = project.region(fid)
            if region is None:
                continue
            summary, info = entry
            project.report(cls, summary, info.qualname, Span(info.row, 1, info.row, 1), cls.message,
                           Region(region.root, f"{via}: {info.qualname}"))

    INVALID = [
        """
import torch

@torch.compile
def decode(step, x, n: int):  # <-
    for _ in range(n):
        x = step(x)
        yield x
""",
    ]
    VALID = [
        """
import torch

def _chunks(x):
    for i in range(0, x.shape[0], 2):
        yield x[i:i + 2]

@torch.compile
def total(x):
    return sum(c.sum() for c in _chunks(x))

def decode(step, x, n):
    compiled = torch.compile(step)
    for _ in range(n):
        x = compiled(x)
        yield x
""",
    ]
