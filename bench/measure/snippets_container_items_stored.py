"""Snippets behind fixtures/regions/container_items_stored.py (the same code, same rows): `holder`,
the Router that `add` stores into the ModuleDict breaks at its `.item()`; Spare is built and
never stored, so it never runs.
Run with bench/measure/run.py."""
import torch
from torch import nn


class Router(nn.Module):
    def forward(self, x):
        if x.max().item() > 3:
            return x
        return -x


class Spare(nn.Module):
    def forward(self, x):
        return x.nonzero()


def build(kind):
    if kind == "r":
        return Router()
    raise ValueError(kind)


def spare():
    return Spare()


class Holder(nn.Module):
    def __init__(self):
        super().__init__()
        self.routers = nn.ModuleDict()
        self.add("a", "r")
        self.spare = None

    def add(self, name, kind):
        self.routers[name] = build(kind)
        spare()

    def forward(self, x):
        for name in self.routers.keys():
            router = self.routers[name]
            x = router(x)
        return x


CASES = {"holder": (lambda: Holder(), [(torch.randn(2, 4),)] * 2)}
