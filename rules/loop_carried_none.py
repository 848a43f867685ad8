import ast
from typing import Dict

from compilelint.project_pass import carried_none
from compilelint.project_pass import frames as F
from compilelint.finding import Region, Span
from compilelint.rule import ProjectContext, Rule


class LoopCarriedNone(Rule):
    """
    ## What it does
    Finds a parameter tested against None (`if position_bias is None: position_bias =
    self.compute_bias(...)`) in a layer that runs as a Dynamo frame entered once per iteration of
    a loop whose own frame a graph break skips, when that loop passes the layer a name it sets to
    None before the loop and rebinds inside it (the first layer computes the bias, the next ones
    reuse it: T5, switch_transformers, WavLM).

    ## Why is this bad?
    Dynamo guards the frame on the argument's identity (`position_bias is None`). The first entry
    gets None, the second a tensor: the guard fails and the frame recompiles (measured in the truth
    corpus, torch 2.11: switch_transformers `guard failed: args[2] is None`, WavLM in train
    `guard failed: kwargs['position_bias'] is None`). Inlined into one frame (no break in the loop)
    nothing recompiles.

    ## Example
    ```python
    def forward(self, hidden):
        position_bias = None
        for layer in self.layers:
            if hidden.sum() > 0:  # a break in the loop: each layer is a frame of its own
                hidden = hidden * 2
            hidden, position_bias = layer(hidden, position_bias=position_bias)
        return hidden
    ```

    ## Use instead
    Remove the graph break in the loop (then the layers inline into one frame), or compute the
    shared value before the loop and pass it to every layer.

    ## References
    https://docs.pytorch.org/docs/stable/compile/programming_model.recompilation.html
    """

    code = "CL414"
    name = "loop-carried-none"
    kind = "recompile"
    severity = "warning"
    message = ("a parameter tested against None that the loop calling this frame passes None first and a value "
               "after: the second entry fails the guard and recompiles; remove the graph break in that loop, or "
               "compute the value before it")

    @classmethod
    def function_facts(cls, fn, nodes):
        """True when the function sets a name to None before one of its loops: only such a
        function's loop can carry None into a frame (the project pass parses no other)."""
        return True if carried_none.none_before_loop(nodes) else None

    @classmethod
    def starts_none(cls, project: ProjectContext):
        """`carried_none.hits`' question, answered by these facts."""
        return lambda fid: project.facts(cls, fid) is not None

    @classmethod
    def check_project(cls, project: ProjectContext):
        reached = project.reached
        found: Dict[tuple, dict] = {}  # (path, row, col) → what to report
        for mode in F.MODES:
            fr = project.frames(mode)
            for loop, frame, name, fid, test in carried_none.hits(fr, project.trees, cls.starts_none(project)):
                key = (project.function(fid)[0].path, test.lineno, test.col_offset)
                hit = found.setdefault(key, {"modes": set(), "fid": fid, "test": test, "name": name,
                                             "loop": project.function(loop)[1].qualname, "frame": frame})
                hit["modes"].add(mode)
        for key, hit in sorted(found.items(), key=lambda kv: kv[0]):
            mode = "any" if len(hit["modes"]) == 2 else next(iter(hit["modes"]))
            summary, info = project.function(hit["fid"])
            frame = project.function(hit["frame"])[1].qualname
            test = hit["test"]
            message = (f"`{ast.unparse(test)}` guards `{frame}`, a frame entered once per iteration of the loop in "
                       f"`{hit['loop']}` (a graph break skips that frame), which passes `{hit['name']}` as None first "
                       f"and as the previous call's result after: the second entry fails the guard and recompiles; "
                       f"remove the graph break in that loop, or compute `{hit['name']}` before it")
            r = reached[hit["fid"]]
            region = Region(r.root, f"{r.reason} (in the frame of {frame})", mode)
            span = Span(test.lineno, test.col_offset + 1, test.end_lineno or test.lineno, (test.end_col_offset or 0) + 1)
            project.report(cls, summary, info.qualname, span, message, region)

    INVALID = [
        """
import torch
from torch import nn

class Attention(nn.Module):
    def __init__(self):
        super().__init__()
        self.bias = nn.Parameter(torch.zeros(4))

    def forward(self, x, position_bias=None):
        if position_bias is None:  # <-
            position_bias = self.bias * 2
        return x + position_bias, position_bias

class Layer(nn.Module):
    def __init__(self):
        super().__init__()
        self.attention = Attention()

    def forward(self, x, position_bias=None):
        return self.attention(x, position_bias=position_bias)

class Encoder(nn.Module):
    def __init__(self):
        super().__init__()
        self.layers = nn.ModuleList([Layer() for _ in range(3)])

    def forward(self, x):
        position_bias = None
        for layer in self.layers:
            if x.sum() > 0:  # a break in the loop: the frame is skipped, each layer is a frame
                x = x * 2
            x, position_bias = layer(x, position_bias=position_bias)
        return x
""",
    ]
    VALID = [
        """
import torch
from torch import nn

class Attention(nn.Module):
    def __init__(self):
        super().__init__()
        self.bias = nn.Parameter(torch.zeros(4))

    def forward(self, x, position_bias=None):
        if position_bias is None:
            position_bias = self.bias * 2
        return x + position_bias, position_bias

class Encoder(nn.Module):
    def __init__(self):
        super().__init__()
        self.layers = nn.ModuleList([Attention() for _ in range(3)])

    def forward(self, x):
        position_bias = None
        for layer in self.layers:  # nothing breaks in the loop: the layers inline into one frame
            x, position_bias = layer(x, position_bias=position_bias)
        return x

class Skipped(nn.Module):
    def __init__(self):
        super().__init__()
        self.layers = nn.ModuleList([Attention() for _ in range(3)])

    def forward(self, x):
        for layer in self.layers:
            if x.sum() > 0:
                x = x * 2
            x, _ = layer(x, position_bias=None)  # None on every entry: one guard, always true
        return x
""",
    ]
