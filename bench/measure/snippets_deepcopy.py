"""Snippets behind CL207 (deepcopy) and its torch-version gate (run with bench/measure/run.py; two
calls each): what `copy.deepcopy` copies decides whether torch 2.13 breaks. torch 2.11 breaks on
every deepcopy ("copy.deepcopy()", GB0179: the truth probe copy_deepcopy_tensor and the config
deepcopy in the truth corpus)."""
import copy

import torch
from torch import nn

X = lambda: torch.randn(2, 4)


class Settings:
    """A plain configuration object: numbers, flags, a dict of numbers."""

    def __init__(self):
        self.hidden = 4
        self.is_encoder_decoder = True
        self.extra = {"eps": 1e-5, "dims": [1, 2]}


class Holder:
    """A plain object with a tensor attribute."""

    def __init__(self):
        self.t = torch.ones(4)


class M(nn.Module):
    def __init__(self, copy_of):
        super().__init__()
        self.lin = nn.Linear(4, 4)
        self.settings = Settings()
        self.holder = Holder()
        self.copy_of = copy_of

    def forward(self, x):
        return self.copy_of(self, x)


def _settings(self, x):
    c = copy.deepcopy(self.settings)
    return x * c.hidden


def _literal(self, x):
    c = copy.deepcopy({"eps": 1.0, "dims": [1, 2]})
    return x * c["eps"]


def _tensor(self, x):
    return copy.deepcopy(x) + 1


def _module(self, x):
    return copy.deepcopy(self.lin)(x)


def _list_of_tensors(self, x):
    return copy.deepcopy([x, x])[0] + 1


def _object_holding_a_tensor(self, x):
    return x + copy.deepcopy(self.holder).t


CASES = {name: (lambda f=f: M(f), [(X(),)] * 2) for name, f in {
    "config_object": _settings, "literal": _literal, "tensor": _tensor, "module": _module,
    "list_of_tensors": _list_of_tensors, "object_holding_a_tensor": _object_holding_a_tensor}.items()}
