"""Edits that change what the project pass's rule hooks answer — a shared wrapper's frames (CL411),
a frame entered repeatedly (CL414), first-call state read twice in one frame (CL407) —
report byte for byte what a run from scratch reports, edit after edit, through everything a cached
run keeps between processes: calls resolved and what the frames took from each reached function
(`FramesMemo.kept_frames`), the defs the hooks parsed (`text_read.ReadTrees`), the kept placement
and the summaries' pack."""
import subprocess

import pytest

import compilelint.engine as engine
from compilelint.config import Settings
from compilelint.engine import check_paths
from compilelint.report import render

WRAP = """\
import functools


def capture(func):
    @functools.wraps(func)
    def wrapper(self, *args, **kwargs):
        return func(self, *args, **kwargs)
    return wrapper
"""
MODEL = """\
import torch
from torch import nn

from wrap import capture


class Encoder(nn.Module):
    def __init__(self):
        super().__init__()
        self.proj = nn.Linear(4, 4)

    @capture
    def forward(self, x):
        return self.proj(x)


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.encoder = Encoder()

    @capture
    def forward(self, x):
        return self.encoder(x) * 2


model = torch.compile(Model())
"""
LAYERS = """\
import torch
from torch import nn


class Attention(nn.Module):
    def __init__(self, layer_idx):
        super().__init__()
        self.layer_idx = layer_idx
        self.proj = nn.Linear(4, 4)
        self.bias = nn.Parameter(torch.zeros(4))

    def forward(self, x, past_key_values, position_bias=None):
        if position_bias is None:
            position_bias = self.bias * 2
        is_updated = past_key_values.is_updated.get(self.layer_idx)
        if is_updated:
            return x, position_bias
        past_key_values.is_updated[self.layer_idx] = True
        return self.proj(x) + position_bias, position_bias


class Norm(nn.Module):
    def __init__(self):
        super().__init__()
        self.scale = None

    def forward(self, x):
        return x


class Decoder(nn.Module):
    def __init__(self):
        super().__init__()
        self.layers = nn.ModuleList([Attention(i) for i in range(2)])
        self.norm = Norm()

    def forward(self, x, past_key_values):
        position_bias = None
        for layer in self.layers:
            x, position_bias = layer(x, past_key_values, position_bias=position_bias)
        return self.norm(x)


decoder = torch.compile(Decoder())
"""

LOOP_BREAK = ("            x, position_bias = layer(",
              "            if x.sum() > 0:\n                x = x * 2\n            x, position_bias = layer(")
STATE = ("    def forward(self, x):\n        return x\n",
         "    def forward(self, x):\n        if self.scale is None:\n            self.scale = x.abs().max()\n"
         "        return x * self.scale\n")
# (file, old text, new text, codes that must be reported after the edit, codes that must not)
EDITS = [
    ("model.py", "        return self.proj(x)\n", "        print(x)\n        return self.proj(x)\n", {"CL411"}, set()),
    ("model.py", "        print(x)\n", "", set(), {"CL411"}),  # the break removed: the wrapper's frames go
    # a break in the loop: each layer a frame entered again and again, with the None it carries
    # (CL414, which names that guard; CL412's reads of the cache fail after it)
    ("layers.py", *LOOP_BREAK, {"CL414"}, set()),
    ("layers.py", *STATE, {"CL407"}, set()),  # first-call state in a reached forward
    ("layers.py", "            self.scale = x.abs().max()\n", "            self.scale = x.abs().max()\n"
     "        if self.scale is None:\n            x = x + 1\n", {"CL407"}, set()),  # read twice: one stays
    ("layers.py", LOOP_BREAK[1], LOOP_BREAK[0], set(), {"CL414"}),  # the loop's break removed
    # a function nothing reaches appended (the last pass stands), then a break: the pass after it
    # takes reach and the kept tables from the pass the memo kept, over another call graph
    ("model.py", "model = torch.compile(Model())\n",
     "model = torch.compile(Model())\n\n\ndef appended(x):\n    return x + 1\n", set(), {"CL411"}),
    ("model.py", "        return self.proj(x)\n", "        print(x)\n        return self.proj(x)\n", {"CL411"}, set()),
]


def as_json(report) -> str:
    return render(report, "json")


@pytest.fixture
def repo(write_tree, monkeypatch):
    tree = write_tree({"wrap.py": WRAP, "model.py": MODEL, "layers.py": LAYERS})
    subprocess.run(["git", "init", "-q"], cwd=str(tree), check=True)
    monkeypatch.chdir(tree)
    return tree


def test_edits_that_change_the_hooks_answers_report_what_a_fresh_run_does(repo, tmp_path, monkeypatch):
    reach_made = []  # the cached runs that asked for roots and reach (not taken from the kept pass)
    real = engine.roots_and_reach
    monkeypatch.setattr(engine, "roots_and_reach", lambda *a, **k: reach_made.append(1) or real(*a, **k))
    cache_dir = str(tmp_path / "cache")
    settings = dict(extend_select=["CL407", "CL411", "CL412", "CL414"])
    first = check_paths(["."], Settings(cache=True, cache_dir=cache_dir, **settings))
    assert as_json(first) == as_json(check_paths(["."], Settings(cache=False, **settings)))
    before = {f.code for f in first.findings}
    assert not before & {"CL411", "CL412", "CL414"}
    for path, old, new, present, absent in EDITS:
        text = (repo / path).read_text()
        assert old in text, (path, old)
        (repo / path).write_text(text.replace(old, new, 1))
        del reach_made[:]
        cached = check_paths(["."], Settings(cache=True, cache_dir=cache_dir, **settings))
        made = bool(reach_made)
        scratch = check_paths(["."], Settings(cache=False, **settings))
        assert as_json(cached) == as_json(scratch), (path, new)
        codes = {f.code for f in cached.findings}
        assert present <= codes and not absent & codes, (path, new, sorted(codes))
    assert not made  # the last break, after the appended function: reach is the kept pass's


NESTED = """\
import torch
from torch import nn


class First(nn.Module):
    def __init__(self):
        super().__init__()
        self.cache = None

    def forward(self, x):
        if self.cache is None:
            self.cache = x.abs().max()
        return x * self.cache


class Second(First):
    def forward(self, x):
        if self.cache is None:
            self.cache = x.abs().max()
        return x + self.cache


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.first = First()
        self.second = Second()

    def forward(self, x):
        return self.second(
            self.first(x))


model = torch.compile(Model())
"""


def test_calls_joined_on_one_line_order_the_first_call_state_again(write_tree, monkeypatch, tmp_path):
    """`execution_order` sorts a function's calls by row: joining two calls on one line leaves the
    call graph as it was (its key holds no row) and may change which of two reads of one state
    comes first (CL407 names that one). The order kept between processes is kept per function by
    its file's content, so the pass after the edit orders that function's calls again."""
    tree = write_tree({"model.py": NESTED})
    subprocess.run(["git", "init", "-q"], cwd=str(tree), check=True)
    monkeypatch.chdir(tree)
    cache_dir = str(tmp_path / "cache")
    settings = dict(extend_select=["CL407"])

    def reads(report):
        return [(f.function, f.span.row) for f in report.findings if f.code == "CL407"]

    first = check_paths(["."], Settings(cache=True, cache_dir=cache_dir, **settings))
    assert as_json(first) == as_json(check_paths(["."], Settings(cache=False, **settings)))
    text = NESTED.replace("self.second(\n            self.first(x))", "self.second(self.first(x))")
    (tree / "model.py").write_text(text)
    cached = check_paths(["."], Settings(cache=True, cache_dir=cache_dir, **settings))
    scratch = check_paths(["."], Settings(cache=False, **settings))
    assert as_json(cached) == as_json(scratch)
    assert [f for f, _ in reads(first)] != [f for f, _ in reads(scratch)]  # the edit moved the first read
