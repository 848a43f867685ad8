"""Snippets behind fixtures/regions/installed_modules.py (the same code): the wrapper installs its
adapters into the model it is handed (`setattr` in a base helper, the class from a class-level
dict each subclass declares); calling the model runs them. `noisy`: NoisyAdapter's data-dependent
`if` breaks; `quiet`: one graph; `plain`: the wrapper that installs nothing. Run with
bench/measure/run.py."""
import torch
from torch import nn


class NoisyAdapter(nn.Module):
    def __init__(self, base: nn.Module):
        super().__init__()
        self.base = base
        self.scale = nn.Parameter(torch.ones(base.out_features))

    def forward(self, x):
        out = self.base(x)
        if (x > 0).any():
            out = out * self.scale
        return out


class QuietAdapter(nn.Module):
    def __init__(self, base: nn.Module):
        super().__init__()
        self.base = base
        self.scale = nn.Parameter(torch.ones(base.out_features))

    def forward(self, x):
        return self.base(x) * self.scale


class Wrapper(nn.Module):
    adapters = {}  # the layer kind each subclass adapts → its adapter class

    def __init__(self, model: nn.Module):
        super().__init__()
        self.model = model
        self.inject()

    def inject(self):
        for name, child in list(self.model.named_children()):
            new = self._build(child)
            if new is not None:
                self._swap(self.model, name, new)

    @classmethod
    def _build(cls, child):
        for kind, adapter_cls in cls.adapters.items():
            if isinstance(child, kind):
                chosen = adapter_cls
                return chosen(child)
        return None

    def _swap(self, parent, name, new):
        setattr(parent, name, new)

    def forward(self, x):
        return self.model(x)


class NoisyWrapper(Wrapper):
    adapters = {nn.Linear: NoisyAdapter}


class QuietWrapper(Wrapper):
    adapters = {nn.Linear: QuietAdapter}


def _model():
    torch.manual_seed(0)
    return nn.Sequential(nn.Linear(4, 4), nn.ReLU(), nn.Linear(4, 4))


CASES = {"noisy": (lambda: NoisyWrapper(_model()), [(torch.randn(2, 4),)] * 2),
         "quiet": (lambda: QuietWrapper(_model()), [(torch.randn(2, 4),)] * 2),
         "plain": (lambda: Wrapper(_model()), [(torch.randn(2, 4),)] * 2)}
