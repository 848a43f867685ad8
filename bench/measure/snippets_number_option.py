"""Snippets that run the code of fixtures/precision/number_option_vs_string.py (`number_*`) and its
`_passed` twin (`passed_warn`). A `float` option, at its default or given 1.0 by the user, never
reaches the `fallback == "warn"` check: the one break is the forward's own `.item()`. The twin's
option given "warn" reaches it: the data-dependent `torch.any` breaks first. Run with
bench/measure/run.py (the events are read at the fixture's rows)."""
import torch

import fixture

F = fixture.load("fixtures/precision/number_option_vs_string.py")
P = fixture.load("fixtures/precision/number_option_vs_string_passed.py")
SOURCE = F.__file__
ARGS = [(torch.randn(4), torch.tensor([0.0, 1.0, 2.0, 0.0]))] * 2

CASES = {"number_default": (lambda: F.RatioScore(), ARGS),
         "number_user_given": (lambda: F.RatioScore(fallback=1.0), ARGS)}
