"""Frames (compilelint/analysis/frames.py) and the recompile rules built on them: which reached
functions Dynamo runs as frames of their own, and the torch-version gate of CL411."""
import textwrap

from compilelint.analysis import frames as F
from compilelint.analysis.regions import Project, compile_roots, reach
from compilelint.engine import analyze_bytes

from helpers import check_source

MODEL = """
import torch
from torch import nn

class Layer(nn.Module):
    def forward(self, x):
        return x * 2

class Head(nn.Module):
    def forward(self, x):
        print(x)  # a break: Head.forward and Model.forward run as frames
        return x

class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.layers = nn.ModuleList([Layer(), Layer()])
        self.head = Head()

    def forward(self, x):
        for layer in self.layers:
            if self.training and x.sum() > 0:  # a train-only break in the loop: the frame is skipped
                x = x + 1
            x = layer(x)
        return self.head(x)
"""


def _frames(tmp_path, source, mode):
    path = tmp_path / "model.py"
    path.write_text(textwrap.dedent(source))
    status, summary = analyze_bytes(str(path), path.read_bytes())
    assert status == "ok", summary
    project = Project([summary])
    roots = compile_roots(project, [f"{summary.module}.Model.forward"], "compiled")
    reached, _ = reach(project, roots)
    return F.frames(project, reached, [r[0] for r in roots], mode), summary.module


def test_breaks_make_frames_of_the_path_and_a_loop_break_skips_the_frame(tmp_path):
    fr, mod = _frames(tmp_path, MODEL, "train")
    assert set(fr.why) == {f"{mod}.Model.forward", f"{mod}.Head.forward", f"{mod}.Layer.forward"}
    assert fr.repeated == {f"{mod}.Layer.forward"}  # called inside the skipped loop
    fr, mod = _frames(tmp_path, MODEL, "eval")  # no break in the loop: the layers are inlined
    assert set(fr.why) == {f"{mod}.Model.forward", f"{mod}.Head.forward"} and not fr.repeated


TRY_WRAPPER = """
import functools
import torch
import torch._dynamo
from torch import nn

def collect(func):
    @functools.wraps(func)
    def wrapper(self, *args, **kwargs):
        try:
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
"""


def test_a_wrapper_forwarding_inside_try_recompiles_on_2_11_only():
    rows = {v: {f.span.row for f in check_source(TRY_WRAPPER, select=["CL411"], torch_version=v).findings}
            for v in ("2.11", "2.13")}
    assert rows == {"2.11": {9}, "2.13": set()}


def test_settings_are_decided_by_the_config_class_defaults(tmp_path):
    """`self.layerdrop > 0.0` with `self.layerdrop = config.layerdrop`: a break under it makes frames
    only when the root's config class sets it above 0 (m2m_100's 0.05, not bart's 0.0)."""
    source = MODEL.replace("if self.training and x.sum() > 0:", "if self.training and self.layerdrop > 0.0 and x.sum() > 0:")
    source = source.replace("class Model(nn.Module):\n", "class Model(nn.Module):\n    config: Config\n")
    source = source.replace("        super().__init__()\n        self.layers", "        super().__init__()\n        self.layerdrop = config.layerdrop\n        self.layers")
    source = source.replace("def __init__(self):\n        super().__init__()\n        self.layerdrop", "def __init__(self, config):\n        super().__init__()\n        self.layerdrop")
    for default, repeated in (("0.05", True), ("0.0", False)):
        text = source.replace("class Layer(nn.Module):", f"class Config:\n    layerdrop: float = {default}\n\n\nclass Layer(nn.Module):")
        fr, mod = _frames(tmp_path, text, "train")
        assert (f"{mod}.Layer.forward" in fr.repeated) is repeated, (default, fr.why)
