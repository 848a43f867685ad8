"""Snippets that run the code of fixtures/precision/rejected_after_call.py: floating scores (`scores`)
never take the label branch of `check_labels`: the one break is the forward's `.item()`; integer
labels (`labels_rejected`) take it, break in it, and then raise in `check_scores` (the run fails: a
misuse). Run with bench/measure/run.py (the events are read at the fixture's rows)."""
import torch

import fixture

F = fixture.load("fixtures/precision/rejected_after_call.py")
SOURCE = F.__file__
TARGET = torch.tensor([0, 1, 1, 0])

CASES = {"scores": (lambda: F.ScoreError(), [(torch.rand(4), TARGET)] * 2),
         "labels_rejected": (lambda: F.ScoreError(), [(torch.tensor([0, 1, 1, 1]), TARGET)] * 2)}
