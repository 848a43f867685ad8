"""Snippets that run the code of fixtures/regions/installed_modules.py: the wrapper installs its
adapters into the model it is handed (`setattr` in a base helper, the class from a class-level
dict each subclass declares); calling the model runs them. `noisy`: NoisyAdapter's data-dependent
`if` breaks; `quiet`: one graph; `plain`: the wrapper that installs nothing. Run with
bench/measure/run.py."""
import torch
from torch import nn

import fixture

F = fixture.load("fixtures/regions/installed_modules.py")
SOURCE = F.__file__


def _model():
    torch.manual_seed(0)
    return nn.Sequential(nn.Linear(4, 4), nn.ReLU(), nn.Linear(4, 4))


CASES = {"noisy": (lambda: F.NoisyWrapper(_model()), [(torch.randn(2, 4),)] * 2),
         "quiet": (lambda: F.QuietWrapper(_model()), [(torch.randn(2, 4),)] * 2),
         "plain": (lambda: F.Wrapper(_model()), [(torch.randn(2, 4),)] * 2)}

