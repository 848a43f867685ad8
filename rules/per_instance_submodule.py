import ast
from typing import Dict, List, Optional, Set

from compilelint.analysis import frames as F
from compilelint.finding import Region, Span
from compilelint.rule import ProjectContext, Rule


def _first_read(fn: ast.AST, attr: str) -> Optional[ast.Attribute]:
    reads = [n for n in ast.walk(fn) if isinstance(n, ast.Attribute) and n.attr == attr and
             isinstance(n.value, ast.Name) and n.value.id == "self" and isinstance(n.ctx, ast.Load)]
    return min(reads, key=lambda n: (n.lineno, n.col_offset)) if reads else None


def _alternatives(graph, cls: str) -> Dict[str, List[str]]:
    """Submodule attributes of `cls` assigned two or more module classes (`self.downsample =
    Downsample(...)` in one branch, `nn.Identity()` in the other)."""
    out: Dict[str, List[str]] = {}
    for c in reversed(graph.mro(cls)):
        entry = graph.classes.get(c)
        if entry is None:
            continue
        for attr, classes in entry[1].submodules.items():
            kinds = sorted({graph.canonical(k) for k in classes if k.rsplit(".", 1)[-1] not in CONTAINERS})
            if len(kinds) > 1:
                out[attr] = kinds
            else:
                out.pop(attr, None)
    return out


CONTAINERS = ("Sequential", "ModuleList", "ModuleDict")


def _container_call(graph, fid: str, call) -> bool:
    """The call goes to a submodule attribute holding an nn.Sequential / ModuleList / ModuleDict."""
    summary, info = graph.functions[fid]
    if call.kind not in ("self", "attr") or "." not in info.qualname:
        return False
    for c in graph.mro(f"{summary.module}.{info.qualname.rsplit('.', 1)[0]}"):
        entry = graph.classes.get(c)
        if entry and call.target in entry[1].submodules:
            return any(name.rsplit(".", 1)[-1] in CONTAINERS for name in entry[1].submodules[call.target])
    return False


def per_instance(graph, fr, torch_version: str) -> Set[str]:
    """Frames several instances of one class enter: called per item in the loop of a skipped frame
    (`for stage in self.stages: stage(x)`), and, before torch 2.13, the members of an nn.Sequential
    / ModuleList call (`self.stages(x)`) when a member breaks: the container's own loop is skipped,
    each member is compiled as a frame (torch 2.11, timm's sequencer); torch 2.13 runs those members
    eager instead (measured: no recompile)."""
    out = {callee for callee in fr.repeated for caller, call in fr.callers.get(callee, ())
           if caller in fr.skipped and call.label.endswith("]")}
    if torch_version >= "2.13":
        return out
    on_path = {f for f, why in fr.why.items() if why.startswith("graph-breaks") or why == "calls code that graph-breaks"}
    for fid in list(fr.why):
        for callee, call in fr.edges.get(fid, ()):
            if callee in on_path and _container_call(graph, fid, call):
                out.add(callee)
    return out


class PerInstanceSubmodule(Rule):
    """
    ## What it does
    Finds a submodule attribute that holds different module classes in different instances
    (`self.downsample = Downsample(...) if downsample else nn.Identity()`) read by a `forward`
    that several instances enter as Dynamo frames of their own: the members of an
    `nn.Sequential` / `nn.ModuleList` whose loop graph-breaks (a break inside a member skips the
    container's frame, so each member is compiled as a frame).

    ## Why is this bad?
    The frame's code is shared by every instance, and its guards hold the submodule's type
    (`___check_type_id(self._modules['downsample'], ...)`): the first instance with the other
    class fails it and recompiles. timm 1.0.31 on torch 2.11: `Sequencer2dStage.forward` (its
    LSTM blocks break) recompiles at `x = self.downsample(x)` in eval and train. torch 2.13 runs
    the members of a skipped `nn.Sequential` eager instead (measured: no recompile), so there only
    instances called from a loop of your own code are reported: `torch-version` decides.

    ## Example
    ```python
    class Stage(nn.Module):
        def __init__(self, downsample):
            super().__init__()
            self.downsample = Downsample() if downsample else nn.Identity()
            self.rnn = nn.LSTM(8, 8)

        def forward(self, x):
            x = self.downsample(x)
            return self.rnn(x)[0]
    ```

    ## Use instead
    Remove the graph break inside the members (then the container is inlined into one frame), or
    give every instance the same submodule class (a pass-through layer of the same class).

    ## References
    https://docs.pytorch.org/docs/stable/compile/programming_model.recompilation.html
    """

    code = "CL413"
    name = "per-instance-submodule"
    kind = "recompile"
    severity = "warning"
    message = ("this submodule has a different class in other instances, and every instance enters this forward "
               "as a frame of its own: the next instance fails the type guard and recompiles; remove the graph break "
               "below, or use one submodule class for every instance")

    @classmethod
    def check_project(cls, project: ProjectContext):
        graph, reached = project.graph, project.reached
        roots = [r[0] for r in project.roots]
        hits: Dict[tuple, dict] = {}
        for mode in F.MODES:
            fr = F.frames(graph, reached, roots, mode)
            for fid in sorted(per_instance(graph, fr, project.torch_version)):
                summary, info = graph.functions[fid]
                if "." not in info.qualname:
                    continue
                alternatives = _alternatives(graph, f"{summary.module}.{info.qualname.rsplit('.', 1)[0]}")
                node = F.function_node(summary.path, info.row) if alternatives else None
                reads = [(r, attr) for attr in alternatives for r in [_first_read(node, attr)] if r is not None] \
                    if node is not None else []
                if not reads:
                    continue
                read, attr = min(reads, key=lambda ra: (ra[0].lineno, ra[0].col_offset))
                hit = hits.setdefault((summary.path, read.lineno), {"modes": set(), "summary": summary, "fid": fid,
                                                                    "read": read, "attr": attr,
                                                                    "kinds": alternatives[attr]})
                hit["modes"].add(mode)
        for _, hit in sorted(hits.items(), key=lambda kv: kv[0]):
            mode = "any" if len(hit["modes"]) == 2 else next(iter(hit["modes"]))
            read, fid = hit["read"], hit["fid"]
            kinds = " or ".join(k.rsplit(".", 1)[-1] for k in hit["kinds"])
            message = (f"`self.{hit['attr']}` is a {kinds} depending on the instance, and every instance enters "
                       f"`{graph.functions[fid][1].qualname}` as a frame of its own (a graph break below it): the next "
                       f"instance fails the type guard and recompiles; remove the graph break below, or use one "
                       f"submodule class for every instance")
            r = reached[fid]
            span = Span(read.lineno, read.col_offset + 1, read.end_lineno or read.lineno, (read.end_col_offset or 0) + 1)
            project.report(cls, hit["summary"], graph.functions[fid][1].qualname, span, message,
                           Region(r.root, r.reason, mode))

    INVALID = [
        """
import torch
from torch import nn

class Downsample(nn.Module):
    def forward(self, x):
        return x[..., ::2]

class Stage(nn.Module):
    def __init__(self, downsample):
        super().__init__()
        self.downsample = Downsample() if downsample else nn.Identity()
        self.proj = nn.Linear(8, 8)

    def forward(self, x):
        x = self.downsample(x)  # <-
        return self.proj(x)

class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.stages = nn.ModuleList([Stage(downsample=i > 0) for i in range(3)])

    def forward(self, x):
        for stage in self.stages:
            if x.sum() > 0:  # a break in the loop: the frame is skipped, each stage is a frame
                x = x * 2
            x = stage(x)
        return x
""",
    ]
    VALID = [
        """
import torch
from torch import nn

class Downsample(nn.Module):
    def forward(self, x):
        return x[..., ::2]

class Stage(nn.Module):
    def __init__(self, downsample):
        super().__init__()
        self.downsample = Downsample() if downsample else nn.Identity()
        self.proj = nn.Linear(8, 8)

    def forward(self, x):  # nothing breaks: the stages are inlined into one frame
        x = self.downsample(x)
        return self.proj(x)

class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.stages = nn.ModuleList([Stage(downsample=i > 0) for i in range(3)])

    def forward(self, x):
        for stage in self.stages:
            x = stage(x)
        return x
""",
        """
import torch
from torch import nn

class Downsample(nn.Module):
    def forward(self, x):
        return x[..., ::2]

class Stage(nn.Module):
    def __init__(self, downsample):
        super().__init__()
        self.downsample = Downsample() if downsample else nn.Identity()
        self.rnn = nn.LSTM(8, 8)

    def forward(self, x):  # torch 2.13 runs the members of a skipped nn.Sequential eager: no recompile
        x = self.downsample(x)
        return self.rnn(x)[0]

class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.stages = nn.Sequential(*[Stage(downsample=i > 0) for i in range(3)])

    def forward(self, x):
        return self.stages(x)
""",
    ]
