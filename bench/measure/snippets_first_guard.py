"""Snippets behind the scoring of a counter's recompile (CL401) in a frame that also reads a list
growing every call (run with bench/measure/run.py; three calls each). A cache entry's recompile is
logged at its first failing guard only (with `recompiles_verbose` too): with the list read first,
every recompile names the list's length and none the counter, although the counter changes on
every call as well; with the list left out, the counter's guard fails on every call and the log
names it at the write (`self.count = n + 1`)."""
import torch
from torch import nn

X = lambda: torch.randn(2)


class Accumulator(nn.Module):
    def __init__(self, grow: bool):
        super().__init__()
        self.count = 0
        self.seen = []
        self.grow = grow

    def snapshot(self):
        return [v.clone() for v in self.seen]

    def forward(self, x):
        saved = self.snapshot()
        n = self.count
        if self.grow:
            self.seen.append(x * 2)
        self.count = n + 1
        return x + len(saved)


CASES = {
    "counter_and_growing_list": (lambda: Accumulator(True), [(X(),)] * 3),
    "counter_alone": (lambda: Accumulator(False), [(X(),)] * 3),
}
