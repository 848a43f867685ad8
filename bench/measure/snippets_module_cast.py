"""Snippets behind CL218 (module-conversion): submodules converted in forward, bare and under the
dtype test of its fix (run with bench/measure/run.py; two calls each, grad enabled). `_same`: the
module already has the dtype (a no-op conversion); `_other`: it is built in float64 and converted
to float32 on the first call."""
import torch
from torch import nn

X = lambda: torch.randn(4, 8)


def _module(convert, weights=torch.float32, inner=None):
    class M(nn.Module):
        def __init__(self):
            super().__init__()
            self.m = (inner() if inner else nn.Linear(8, 8)).to(weights)
            self.dtype = torch.float32

        def forward(self, x):
            convert(self)
            return self.m(x)

    return M


def _rebind(self):
    self.m = self.m.to(self.dtype)


def _in_place(self):
    self.m.to(self.dtype)


def _float(self):
    self.m.float()


def _guarded_weight(self):
    if self.m.weight.dtype != self.dtype:
        self.m = self.m.to(self.dtype)


def _guarded_next(self):
    if next(self.m.parameters()).dtype != self.dtype:
        self.m = self.m.to(self.dtype)


def _to_device(self):
    self.m = self.m.to(torch.device("cpu"))


def _stack():
    return nn.Sequential(nn.Linear(8, 8), nn.BatchNorm1d(8))


CASES = {
    "rebind_same": (lambda: _module(_rebind)(), [(X(),)] * 2),
    "rebind_other": (lambda: _module(_rebind, torch.float64)(), [(X(),)] * 2),
    "in_place_same": (lambda: _module(_in_place)(), [(X(),)] * 2),
    "in_place_other": (lambda: _module(_in_place, torch.float64)(), [(X(),)] * 2),
    "float_same": (lambda: _module(_float)(), [(X(),)] * 2),
    "float_other": (lambda: _module(_float, torch.float64)(), [(X(),)] * 2),
    "to_device_same": (lambda: _module(_to_device)(), [(X(),)] * 2),
    "sequential_rebind_same": (lambda: _module(_rebind, inner=_stack)(), [(X(),)] * 2),
    "sequential_rebind_other": (lambda: _module(_rebind, torch.float64, _stack)(), [(X(),)] * 2),
    "guarded_weight_same": (lambda: _module(_guarded_weight)(), [(X(),)] * 2),
    "guarded_weight_other": (lambda: _module(_guarded_weight, torch.float64)(), [(X(),)] * 2),
    "guarded_next_same": (lambda: _module(_guarded_next, inner=_stack)(), [(X(),)] * 2),
    "guarded_next_other": (lambda: _module(_guarded_next, torch.float64, _stack)(), [(X(),)] * 2),
}
