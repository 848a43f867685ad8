"""Snippets that run the code of fixtures/precision/optional_import.py: an import of a missing
module in a helper's `try` breaks ("Import failure", GB0069); an import that succeeds does not.
Run with run.py."""
import torch

import fixture

F = fixture.load("fixtures/precision/optional_import.py")
SOURCE = F.__file__

CASES = {"picker": (F.Picker, [(torch.randn(3),)] * 2),
         "cached": (F.Cached, [(torch.randn(3),)] * 2),
         "plain": (F.Plain, [(torch.randn(3),)] * 2),
         "guarded": (F.Guarded, [(torch.randn(3),)] * 2)}
