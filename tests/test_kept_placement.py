"""An edit of what a reached function's summary says (a break added or removed, a call, a return):
the cached run reports byte for byte what a run from scratch reports (`--output-format json`, the
whole project), edit after edit; where the edit changed candidates only, the pass places only the
edited file's candidates again (`kept_placement`)."""
import subprocess

import pytest

import compilelint.kept_placement as kept_placement
from compilelint.config import Settings
from compilelint.engine import check_paths
from compilelint.report import render

NET = """\
import torch
from torch import nn

from blocks import Block
from helpers import scale


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.block = Block()
        self.proj = nn.Linear(4, 4)

    def forward(self, x):
        x = self.block(x)
        x = self.proj(x)
        return scale(x)


model = torch.compile(Net())
"""
BLOCKS = """\
import torch
from torch import nn


def count(x):
    return x.sum()


class Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.inner = nn.Linear(4, 4)

    def forward(self, x):
        y = self.inner(x)
        if y.sum() > 0:
            y = y * 2
        return y
"""
HELPERS = """\
import torch


def scale(x):
    peak = x.abs().max().item()  # noqa: CL101
    return x / peak


def quiet(x):
    return x.numpy()
"""

# (file, old text, new text, whether only candidates change: None where the last pass stands),
# applied one after another
EDITS = [
    ("blocks.py", "        return y\n", "        print(y)\n        return y\n", True),  # a new break
    ("blocks.py", "        y = self.inner(x)\n", "        y = self.inner(x)\n        n = y.sum().item()\n", True),
    ("blocks.py", "        print(y)\n", "", True),  # a break removed
    ("helpers.py", "    return x / peak\n", "    print(peak)\n    return x / peak\n", True),  # beside a noqa
    ("helpers.py", "def scale(x):\n", "def scale(x):\n    unused = 1\n", None),  # rows moved: the pass stands
    ("blocks.py", "        return y\n", "        print(y)\n        return y\n", True),  # helpers.py's kept, moved
    ("blocks.py", "        return y\n", "        return count(y)\n", False),  # a new call to another function
    ("helpers.py", "    return x / peak\n", "    return x / peak, peak\n", False),  # a changed return
    ("blocks.py", "        n = y.sum().item()\n", "", True),  # another break removed
    ("helpers.py", "    print(peak)\n", "", True),
]


def as_json(report) -> str:
    return render(report, "json")


@pytest.fixture
def repo(write_tree, monkeypatch):
    tree = write_tree({"net.py": NET, "blocks.py": BLOCKS, "helpers.py": HELPERS})
    subprocess.run(["git", "init", "-q"], cwd=str(tree), check=True)
    monkeypatch.chdir(tree)
    return tree


@pytest.fixture
def placed(monkeypatch):
    """The files each partial placement placed again."""
    out = []
    real = kept_placement.place

    def counted(project, summaries, *args, **kwargs):
        out.append(sorted(s.path for s in summaries))
        return real(project, summaries, *args, **kwargs)

    monkeypatch.setattr(kept_placement, "place", counted)
    return out


@pytest.mark.parametrize("extra", [{}, {"extend_select": ["CL900"]}])  # and noqa comments no finding used
def test_edits_of_reached_functions_report_what_a_fresh_run_does(repo, tmp_path, placed, extra):
    cache_dir = str(tmp_path / "cache")
    first = check_paths(["."], Settings(cache=True, cache_dir=cache_dir, **extra))
    assert as_json(first) == as_json(check_paths(["."], Settings(cache=False, **extra)))
    codes = []
    for path, old, new, candidates_only in EDITS:
        text = (repo / path).read_text()
        assert old in text
        (repo / path).write_text(text.replace(old, new, 1))
        del placed[:]
        cached = check_paths(["."], Settings(cache=True, cache_dir=cache_dir, **extra))
        scratch = check_paths(["."], Settings(cache=False, **extra))
        assert as_json(cached) == as_json(scratch), (path, new)
        assert placed == ([[path]] if candidates_only else []), (path, new)  # None: no pass ran
        codes.append(sorted((f.path, f.code) for f in cached.findings))
    # the edits changed findings, in the edited file and through reach
    assert ("blocks.py", "CL201") in codes[0] and ("blocks.py", "CL201") not in codes[2]
    assert ("helpers.py", "CL201") in codes[3] and ("helpers.py", "CL201") not in codes[-1]
    assert len({tuple(c) for c in codes}) > 3
