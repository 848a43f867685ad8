"""Snippets that run the code of fixtures/regions/parameter_dict_items.py: `train`, the
test on the ParameterDict's item breaks; `eval`, the one on the ParameterList's. Run with run.py."""
import torch

import fixture

F = fixture.load("fixtures/regions/parameter_dict_items.py")
SOURCE = F.__file__


def _train():
    m = F.Scaled()
    m.train()
    return m


CASES = {"train": (_train, [(torch.randn(2, 4),)] * 2),
         "eval": (lambda: F.Scaled().eval(), [(torch.randn(2, 4),)] * 2)}

