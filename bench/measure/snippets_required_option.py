"""fixtures/precision/required_option_passed.py: a parameter without a default, given "warn" by
its one caller and handed on to the `p == "warn"` test: the data-dependent check breaks. (Its
must-not-flag twin, given 1.0, is `masked_ratio` in snippets_number_option.py: no break there.)
Run with bench/measure/run.py."""
import torch

import fixture

R = fixture.load("fixtures/precision/required_option_passed.py")
SOURCE = R.__file__
ARGS = [(torch.randn(4), torch.tensor([0.0, 1.0, 2.0, 0.0]))] * 2

CASES = {"required_warn": (lambda: R.MaskedRatio(), ARGS)}
