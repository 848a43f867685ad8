"""Output never depends on Python's string hashing: the same file gives the same findings and
messages under any PYTHONHASHSEED (a flag read by a condition and set after it, through a
container and its item, named one or the other by a set's order before)."""
import os
import subprocess
import sys

SOURCE = """\
import torch
from torch import nn


class Workspace(nn.Module):
    def __init__(self, n):
        super().__init__()
        self.ptrs = [None] * n
        self.proj = nn.Linear(4, 4)

    def forward(self, x, r: int):
        if self.ptrs is None or self.ptrs[r] is None:
            x = x * 2
        self.ptrs[r] = 0
        return self.proj(x)
"""


def test_findings_are_the_same_under_every_hash_seed(tmp_path):
    (tmp_path / "m.py").write_text(SOURCE)
    outputs = set()
    for seed in ("1", "4", "5", "6"):  # seeds 4 and 5 named the container before
        env = dict(os.environ, PYTHONHASHSEED=seed)
        r = subprocess.run([sys.executable, "-m", "compilelint", "check", "--no-cache", "--isolated", "m.py"],
                           cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120)
        outputs.add(r.stdout)
    assert len(outputs) == 1, outputs
    assert "CL407 `self.ptrs[r]` is changed by the first call" in outputs.pop()
