"""fixtures/precision/rejected_after_call_passed.py: a caller that accepts integer labels; the
label branch of `check_labels` runs and breaks (`torch.unique`, the `torch.any` test). Run with
bench/measure/run.py."""
import torch

import fixture

P = fixture.load("fixtures/precision/rejected_after_call_passed.py")
SOURCE = P.__file__
TARGET = torch.tensor([0, 1, 1, 0])

CASES = {"labels": (lambda: P.LabelError(), [(torch.tensor([0, 1, 1, 1]), TARGET)] * 2)}
