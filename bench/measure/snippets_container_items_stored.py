"""Snippets that run the code of fixtures/regions/container_items_stored.py: `holder`,
the Router that `add` stores into the ModuleDict breaks at its `.item()`; Spare is built and
never stored, so it never runs.
Run with bench/measure/run.py."""
import torch

import fixture

F = fixture.load("fixtures/regions/container_items_stored.py")
SOURCE = F.__file__


CASES = {"holder": (lambda: F.Holder(), [(torch.randn(2, 4),)] * 2)}

