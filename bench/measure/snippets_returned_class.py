"""Snippets behind fixtures/regions/returned_class.py (the same code, same rows): `wrapper`, the
Fast layer the helper's returned class builds breaks at its nonzero; Unpicked never runs.
The fixture checks that Wrapper reaches Fast and not Unpicked.
Run with bench/measure/run.py."""
import torch
from torch import nn


class Fast(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.lin = nn.Linear(dim, dim)

    def forward(self, x):
        return self.lin(x)[x.nonzero(as_tuple=True)]


class Unpicked(nn.Module):
    def forward(self, x):
        return x.unique()


def pick_class(kind):
    layer_cls = None
    if kind == "fast":
        layer_cls = Fast
    return layer_cls


class Wrapper(nn.Module):
    def __init__(self, kind="fast"):
        super().__init__()
        self.layer = self._make(kind)

    def _make(self, kind):
        layer_cls = pick_class(kind)
        return layer_cls(4)

    def forward(self, x):
        return self.layer(x)


CASES = {"wrapper": (lambda: Wrapper(), [(torch.randn(2, 4),)] * 2)}
