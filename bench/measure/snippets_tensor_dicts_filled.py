"""Snippets that run the code of fixtures/regions/tensor_dicts_filled.py: items of a dict filled
only with tensors are tensors (`Indexed`: the mask index breaks; `Checked`: the test breaks);
`Mixed` reads only the string items. Run with run.py."""
import torch

import fixture

F = fixture.load("fixtures/regions/tensor_dicts_filled.py")
SOURCE = F.__file__

CASES = {"indexed": (F.Indexed, [(torch.randn(3),)] * 2),
         "checked": (F.Checked, [(torch.randn(3),)] * 2),
         "mixed": (F.Mixed, [(torch.randn(3),)] * 2)}
