"""Snippets that run the code of fixtures/regions/returned_class.py: `wrapper`, the
Fast layer the helper's returned class builds breaks at its nonzero; Unpicked never runs.
The fixture checks that Wrapper reaches Fast and not Unpicked.
Run with bench/measure/run.py."""
import torch

import fixture

F = fixture.load("fixtures/regions/returned_class.py")
SOURCE = F.__file__


CASES = {"wrapper": (lambda: F.Wrapper(), [(torch.randn(2, 4),)] * 2)}

