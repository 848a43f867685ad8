"""Snippets behind fixtures/precision/state_flag_off.py (the same code, same rows). `default`: an
Adapter as constructed, one graph; `folded_bypassed`: the same after the user's `fold()` and
`bypass()`, whose branches then break; `warmup`: Warmup's forward turns its own flag on, so the
branch under it breaks on the second call; `refold`: one graph; `checkpointing`: the flag Stack
sets on its block from outside, on: the branch breaks. Run with bench/measure/run.py."""
import warnings

import torch
from torch import nn


class Adapter(nn.Module):
    _bypassed: bool = False
    folded: list = []

    def __init__(self, dim: int = 4):
        super().__init__()
        self.base = nn.Linear(dim, dim)
        self.delta = nn.Parameter(torch.zeros(dim, dim))
        self.folded = []

    @property
    def bypassed(self) -> bool:
        return self._bypassed

    @property
    def is_folded(self) -> bool:
        return bool(self.folded)

    def bypass(self, on: bool = True):
        self._bypassed = on

    def fold(self):
        self.base.weight.data += self.delta
        self.folded.append("delta")

    def unfold(self):
        if not self.is_folded:
            warnings.warn("nothing folded")
            return
        self.base.weight.data -= self.delta
        self.folded.clear()
        print("unfolded", self.delta.sum().item())

    def forward(self, x):
        if self.bypassed:
            if self.is_folded:
                self.unfold()
            return self.base(x)
        if self.is_folded:
            print("folded forward", x.sum().item())
            return self.base(x)
        return self.base(x) + x @ self.delta


class Warmup(nn.Module):
    def __init__(self):
        super().__init__()
        self.warm = False

    def mark(self):
        self.warm = True

    def forward(self, x):
        if self.warm:
            print("warm", x.sum().item())
        self.mark()
        return x * 2


class Refold(Adapter):
    """Its forward runs `unfold`, which empties the list, only when the list is not empty: it
    stays as construction left it (empty), so `unfold` never runs (measured: `refold`)."""

    def forward(self, x):
        if self.is_folded:
            self.unfold()
        return self.base(x) + x @ self.delta


class Checkpointed(nn.Module):
    """A flag that other code stores from outside (`Stack.enable_checkpointing` sets it on each
    block) is not decided by construction: its branch is flagged (measured: `checkpointing`)."""

    def __init__(self):
        super().__init__()
        self.checkpointing = False
        self.lin = nn.Linear(4, 4)

    def forward(self, x):
        if self.checkpointing and self.training:
            print("checkpointed", x.sum().item())
        return self.lin(x)


class Stack(nn.Module):
    def __init__(self):
        super().__init__()
        self.block = Checkpointed()

    def enable_checkpointing(self):
        for m in self.modules():
            if isinstance(m, Checkpointed):
                m.checkpointing = True

    def forward(self, x):
        return self.block(x)


def _checkpointing():
    m = Stack()
    m.enable_checkpointing()
    return m.train()


def _folded_bypassed():
    m = Adapter()
    m.fold()
    m.bypass()
    return m


CASES = {"default": (lambda: Adapter(), [(torch.randn(2, 4),)] * 2),
         "folded_bypassed": (_folded_bypassed, [(torch.randn(2, 4),)] * 2),
         "warmup": (lambda: Warmup(), [(torch.randn(2, 4),)] * 2),
         "refold": (lambda: Refold(), [(torch.randn(2, 4),)] * 2),
         "checkpointing": (_checkpointing, [(torch.randn(2, 4),)] * 2)}
