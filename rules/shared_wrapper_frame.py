import ast
from collections import Counter
from typing import Dict, List, Optional

from compilelint.project_pass import frames as F
from compilelint.project_pass.trees import Trees
from compilelint.finding import Region, Span
from compilelint.rule import ProjectContext, Rule
from compilelint.torch_version import holds


def _inner_wrapper(fn: Optional[ast.AST]) -> Optional[ast.FunctionDef]:
    """The function a decorator returns in place of the method: its innermost nested `def` taking
    `*args` (`def wrapper(self, *args, **kwargs)`)."""
    if fn is None:
        return None
    inner = [n for n in ast.walk(fn) if isinstance(n, ast.FunctionDef) and n is not fn and n.args.vararg]
    return max(inner, key=lambda n: n.lineno) if inner else None


def _installed(fn: Optional[ast.AST], method: str) -> Optional[ast.FunctionDef]:
    """`cls.forward = forward_with_checkpointing` in `__init_subclass__`: the nested def installed
    as `method` of every subclass."""
    if fn is None:
        return None
    nested = {n.name: n for n in ast.walk(fn) if isinstance(n, ast.FunctionDef) and n is not fn}
    for node in ast.walk(fn):
        if isinstance(node, ast.Assign) and isinstance(node.value, ast.Name) and node.value.id in nested:
            for t in node.targets:
                if isinstance(t, ast.Attribute) and t.attr == method:
                    return nested[node.value.id]
    return None


def _forwards_in_block(wrapper: ast.FunctionDef) -> bool:
    """The wrapper calls the wrapped function inside a `try` or `with` block."""
    name = wrapper.args.vararg.arg
    for block in ast.walk(wrapper):
        if isinstance(block, (ast.Try, ast.With)):
            for node in ast.walk(block):
                if isinstance(node, ast.Call) and any(isinstance(a, ast.Starred) and isinstance(a.value, ast.Name)
                                                      and a.value.id == name for a in node.args):
                    return True
    return False


# A break below a `try`/`with` block resumes after it (torch 2.11), or skips the frame (2.13).
RESUMES = "break-inside-try-block-resumes"


def shared_code(project: ProjectContext, fid: str, torch_version: str, trees: Trees):
    """(file summary, outer function, wrapper def, how) when the code Dynamo compiles for method
    `fid` is a wrapper function that other methods share, else None.

    Stacked decorators: the innermost wrapper (transformers 5.23 on torch 2.11: the recompiles are
    in `@capture_outputs`' wrapper under `@merge_with_config_defaults`, never in the outer one).
    From torch 2.13 a break below a `try`/`with` block skips the frame instead of resuming
    ("Failed to handle graph break gracefully. Skipping the function"), so a wrapper forwarding
    inside one is never compiled and never recompiles (measured)."""
    summary, info = project.function(fid)
    for d in reversed(info.decorators):
        dec = project.canonical(d.split("#", 1)[0])
        if project.function(dec) is not None:
            s, f = project.function(dec)
            node = trees.function(s.path, f.row)
            inner = trees.derived(node, "inner_wrapper", _inner_wrapper) if node is not None else None
            if inner is not None and not (_forwards_in_block(inner) and not holds(RESUMES, torch_version)):
                return s, f, inner, f"@{dec.rsplit('.', 1)[-1]}"
    if "." not in info.qualname:
        return None
    owner, method = info.qualname.rsplit(".", 1)
    for cls in project.mro(f"{summary.module}.{owner}"):
        hook = project.function(f"{cls}.__init_subclass__")
        if hook is not None:
            node = trees.function(hook[0].path, hook[1].row)
            inner = trees.derived(node, f"installed {method}", lambda n: _installed(n, method)) \
                if node is not None else None
            if inner is not None and not (_forwards_in_block(inner) and not holds(RESUMES, torch_version)):
                return hook[0], hook[1], inner, f"{cls.rsplit('.', 1)[-1]}.__init_subclass__"
    return None


def _forwarding_call(wrapper: ast.FunctionDef) -> Optional[ast.Call]:
    """The line passing `*args` on (`return forward(self, *args, **kwargs)`), where Dynamo's guard
    on the number of positional arguments points; the `def` line when there is none."""
    name = wrapper.args.vararg.arg
    for node in ast.walk(wrapper):
        if isinstance(node, ast.Call) and any(isinstance(a, ast.Starred) and isinstance(a.value, ast.Name)
                                              and a.value.id == name for a in node.args):
            return node
    return None


class SharedWrapperFrame(Rule):
    """
    ## What it does
    Finds one wrapper function that is the `forward` of several module classes (a decorator's inner
    `def wrapper(self, *args, **kwargs)`, or a method installed by `__init_subclass__`, such as
    transformers' `@capture_outputs`, `@can_return_tuple` and `GradientCheckpointingLayer`) when
    two or more of those classes run as Dynamo frames of their own in one compiled model: the
    compiled root, code on the path to a graph break, or code called from a frame that a break
    inside a loop skips.

    ## Why is this bad?
    Dynamo caches compiled code per code object, and every class shares the wrapper's code. Its
    guards hold `type(self)` (`___check_type_id(self, ...)`) and the number of positional
    arguments (`len(args) == 2`), so each further class entering it as a frame fails them and
    recompiles (8 at most, then the wrapper runs eager everywhere). Measured on torch 2.13,
    backend eager: a decorator shared by a model's and its encoder's `forward` recompiles once
    when the encoder graph-breaks, and never when nothing breaks (all inlined into one frame);
    an `__init_subclass__` wrapper over two layer classes called with 2 and 3 positional
    arguments fails `len(args) == 2` at the line forwarding `*args` (transformers 5.23: m2m_100,
    nllb-moe, seamless_m4t in train, torch 2.11 and 2.13). A wrapper forwarding inside a
    `try`/`with` block recompiles on torch 2.11 (`capture_outputs`), while torch 2.13 skips its
    frame instead (never compiled, no recompile; measured): `torch-version` decides.

    ## Example
    ```python
    def capture(func):
        @functools.wraps(func)
        def wrapper(self, *args, **kwargs):
            return func(self, *args, **kwargs)
        return wrapper

    class Encoder(nn.Module):
        @capture
        def forward(self, x):
            torch._dynamo.graph_break()
            return self.proj(x)

    class Model(nn.Module):
        @capture
        def forward(self, x):
            return self.encoder(x)
    ```

    ## Use instead
    Remove the graph breaks below the wrapper (then it is inlined into one frame), or give each
    class its own wrapper code; raising `torch._dynamo.config.recompile_limit` only hides it.

    ## References
    https://docs.pytorch.org/docs/stable/compile/programming_model.recompilation.html
    """

    code = "CL411"
    name = "shared-wrapper-frame"
    kind = "recompile"
    severity = "warning"
    message = ("one wrapper is the forward of several classes that run as frames of their own: each class "
               "after the first fails the wrapper's guards and recompiles; remove the graph breaks below it, "
               "or give each class its own wrapper")

    @classmethod
    def check_project(cls, project: ProjectContext):
        # wrapper → mode → (root, frames entering it, positional counts at their call sites, why)
        found: Dict[tuple, Dict[str, tuple]] = {}
        places = {}
        shared_of: Dict[str, Optional[tuple]] = {}  # fid → its shared_code (the same in either mode)

        def shared_by(fid: str) -> Optional[tuple]:
            if fid not in shared_of:
                shared_of[fid] = shared_code(project, fid, project.torch_version, project.trees)
            return shared_of[fid]

        for mode in F.MODES:
            fr = project.frames(mode)
            entering = Counter((s[0].path, s[2].lineno) for s in map(shared_by, fr.why) if s is not None)
            if not entering or max(entering.values()) < 2:
                continue  # no wrapper is entered by two frames: no model has a pair (the usual case)
            # only a wrapper that two frames enter can pair them: the others' frames are left out
            twice = {fid for fid in fr.why if shared_by(fid) is not None
                     and entering[shared_by(fid)[0].path, shared_by(fid)[2].lineno] > 1}
            for root, members in F.components_holding(fr, twice):
                groups: Dict[tuple, List[str]] = {}
                for fid in members:
                    shared = shared_by(fid)
                    if shared is not None:
                        key = (shared[0].path, shared[2].lineno)
                        places[key] = shared
                        groups.setdefault(key, []).append(fid)
                for key, fids in groups.items():
                    if mode in found.get(key, {}) or not any(not F.exclusive(fr, a, b, project.trees)
                                                             for i, a in enumerate(fids) for b in fids[i + 1:]):
                        continue  # fewer than two classes that can meet in one model
                    counts = {F.positional_count(fr, caller, call, project.trees) for fid in fids
                              for caller, call in fr.callers.get(fid, ())} - {None}
                    why = [f"{project.function(f)[1].qualname} {fr.why[f]}" for f in fids]
                    found.setdefault(key, {})[mode] = (root, fids, counts, why)
        for key, by_mode in found.items():
            summary, outer, wrapper, how = places[key]
            mode = "any" if len(by_mode) == 2 else next(iter(by_mode))
            root, fids, counts, why = by_mode.get("eval") or by_mode["train"]
            names = [project.function(f)[1].qualname.rsplit(".", 1)[0] for f in fids]
            shown = ", ".join(names[:3]) + (f" and {len(names) - 3} more" if len(names) > 3 else "")
            call = _forwarding_call(wrapper)
            if len(counts) > 1 and call is not None:  # Dynamo checks the `args` guard before `self`'s
                at = call  # the call passing *args on, where that guard points
                guard = f"len(args) (called with {' and '.join(map(str, sorted(counts)))} positional arguments)"
            else:
                at = wrapper  # the frame itself: its `def` line, the whole function
                guard = "type(self)"
            message = (f"`{wrapper.name}` ({how}) is the forward of {shown}, which run as frames of their own "
                       f"(graph breaks below them): Dynamo guards its code on {guard}, so each class after the "
                       f"first recompiles (8 at most, then eager); remove the graph breaks below it, or give "
                       f"each class its own wrapper")
            region = Region(project.display(root), "; ".join(why), mode)
            span = Span(at.lineno, at.col_offset + 1, at.end_lineno or at.lineno, (at.end_col_offset or 0) + 1)
            project.report(cls, summary, outer.qualname, span, message, region)

    INVALID = [
        """
import functools
import torch
import torch._dynamo
from torch import nn

def capture(func):
    @functools.wraps(func)
    def wrapper(self, *args, **kwargs):  # <-
        return func(self, *args, **kwargs)
    return wrapper

class Encoder(nn.Module):
    def __init__(self):
        super().__init__()
        self.proj = nn.Linear(4, 4)

    @capture
    def forward(self, x):
        torch._dynamo.graph_break()
        return self.proj(x)

class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.encoder = Encoder()

    @capture
    def forward(self, x):
        return self.encoder(x) * 2
""",
        """
import functools
import torch
from torch import nn

class CheckpointingLayer(nn.Module):
    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        forward = cls.forward

        @functools.wraps(forward)
        def forward_with_checkpointing(self, *args, **kwargs):
            return forward(self, *args, **kwargs)  # <-

        cls.forward = forward_with_checkpointing

class EncoderLayer(CheckpointingLayer):
    def forward(self, x, mask):
        return x * 2

class DecoderLayer(CheckpointingLayer):
    def forward(self, x, mask, memory):
        return x + memory

class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.encoder = nn.ModuleList([EncoderLayer(), EncoderLayer()])
        self.decoder = nn.ModuleList([DecoderLayer(), DecoderLayer()])

    def forward(self, x):
        h = x
        for encoder_layer in self.encoder:
            if h.sum() > 0:  # a break inside the loop: the frame is skipped, each layer is a frame
                h = h + 1
            h = encoder_layer(h, None)
        for decoder_layer in self.decoder:
            x = decoder_layer(x, None, h)
        return x
""",
            """
import functools
import torch
import torch._dynamo
from torch import nn

def plain(fn):
    @functools.wraps(fn)
    def inner(*args, **kwargs):  # <-
        return fn(*args, **kwargs)
    return inner

def at_most_one(*flags):
    return sum(map(int, flags)) <= 1

class SinePos(nn.Module):
    @plain
    def forward(self, t):
        return t.sin()

class CosinePos(nn.Module):
    @plain
    def forward(self, t):
        return t.cos()

class Stack(nn.Module):
    def __init__(self, sine=False, cosine=False):
        super().__init__()
        assert sine or cosine  # both may be on: each class enters `inner` (torch 2.13: recompiles)
        self.sine = SinePos() if sine else None
        self.cosine = CosinePos() if cosine else None
        self.layers = nn.ModuleList([nn.Linear(4, 4) for _ in range(2)])

    def forward(self, x):
        pos = torch.arange(x.shape[-1]).float()
        if self.sine is not None:
            x = x + self.sine(pos)
        if self.cosine is not None:
            x = x + self.cosine(pos)
        for layer in self.layers:
            torch._dynamo.graph_break()  # a break in the loop: the frame is skipped, its calls are frames
            x = layer(x)
        return x
""",
    ]
    VALID = [
        """
import functools
import torch
from torch import nn

def capture(func):
    @functools.wraps(func)
    def wrapper(self, *args, **kwargs):
        return func(self, *args, **kwargs)
    return wrapper

class Encoder(nn.Module):
    def __init__(self):
        super().__init__()
        self.proj = nn.Linear(4, 4)

    @capture
    def forward(self, x):  # nothing breaks: one frame, the wrappers are inlined
        return self.proj(x)

class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.encoder = Encoder()

    @capture
    def forward(self, x):
        return self.encoder(x) * 2

class Other(nn.Module):
    def __init__(self):
        super().__init__()
        self.proj = nn.Linear(4, 4)

    @capture
    def forward(self, x):  # the only class of its model using the wrapper
        torch._dynamo.graph_break()
        return self.proj(x)
""",
        """
import functools
import torch
import torch._dynamo
from torch import nn

def collect(func):
    @functools.wraps(func)
    def wrapper(self, *args, **kwargs):
        try:  # torch 2.13: a break below a try block skips this frame, it is never compiled
            return func(self, *args, **kwargs)
        finally:
            pass
    return wrapper

class Encoder(nn.Module):
    @collect
    def forward(self, x):
        torch._dynamo.graph_break()
        return x * 2

class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.encoder = Encoder()

    @collect
    def forward(self, x):
        return self.encoder(x) * 2
""",
            """
import functools
import torch
import torch._dynamo
from torch import nn

def plain(fn):
    @functools.wraps(fn)
    def inner(*args, **kwargs):
        return fn(*args, **kwargs)
    return inner

def at_most_one(*flags):
    return sum(map(int, flags)) <= 1

class SinePos(nn.Module):
    @plain
    def forward(self, t):
        return t.sin()

class CosinePos(nn.Module):
    @plain
    def forward(self, t):
        return t.cos()

class Stack(nn.Module):
    def __init__(self, sine=False, cosine=False):
        super().__init__()
        assert at_most_one(sine, cosine)  # never both: one class enters `inner` (torch 2.13: no recompile)
        self.sine = SinePos() if sine else None
        self.cosine = CosinePos() if cosine else None
        self.layers = nn.ModuleList([nn.Linear(4, 4) for _ in range(2)])

    def forward(self, x):
        pos = torch.arange(x.shape[-1]).float()
        if self.sine is not None:
            x = x + self.sine(pos)
        if self.cosine is not None:
            x = x + self.cosine(pos)
        for layer in self.layers:
            torch._dynamo.graph_break()  # a break in the loop: the frame is skipped, its calls are frames
            x = layer(x)
        return x
""",
    ]
