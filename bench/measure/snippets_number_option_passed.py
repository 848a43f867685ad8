"""The `_passed` twin of snippets_number_option.py: fixtures/precision/number_option_vs_string_passed.py
with its `Union[float, str]` option given "warn" by the user: the data-dependent check breaks
(and the warning under it). Run with bench/measure/run.py."""
import torch

import fixture

P = fixture.load("fixtures/precision/number_option_vs_string_passed.py")
SOURCE = P.__file__
ARGS = [(torch.randn(4), torch.tensor([0.0, 1.0, 2.0, 0.0]))] * 2

CASES = {"passed_warn": (lambda: P.RatioScore(fallback="warn"), ARGS),
         "passed_default": (lambda: P.RatioScore(), ARGS)}
