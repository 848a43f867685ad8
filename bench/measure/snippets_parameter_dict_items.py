"""Snippets behind fixtures/regions/parameter_dict_items.py (the same code, same rows): `train`, the
test on the ParameterDict's item breaks; `eval`, the one on the ParameterList's. Run with run.py."""

import torch
from torch import nn


class Scaled(nn.Module):
    def __init__(self, names=("a", "b")):
        super().__init__()
        self.scales = nn.ParameterDict({n: nn.Parameter(torch.ones(4)) for n in names})
        self.shifts = nn.ParameterList([nn.Parameter(torch.zeros(4)) for _ in names])
        self.kinds = {n: "mul" for n in names}

    def forward(self, x):
        for i, name in enumerate(self.scales.keys()):
            scale = self.scales[name]
            if self.training and scale[0].isinf().any():
                raise RuntimeError("scale overflow")
            if self.shifts[i].sum() > 0:
                x = x + self.shifts[i]
            if self.kinds[name]:
                x = x * scale
        return x


def _train():
    m = Scaled()
    m.train()
    return m


CASES = {"train": (_train, [(torch.randn(2, 4),)] * 2),
         "eval": (lambda: Scaled().eval(), [(torch.randn(2, 4),)] * 2)}
