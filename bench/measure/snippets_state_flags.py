"""Snippets that run the code of fixtures/precision/state_flag_off.py. `default`: an
Adapter as constructed, one graph; `folded_bypassed`: the same after the user's `fold()` and
`bypass()`, whose branches then break; `warmup`: Warmup's forward turns its own flag on, so the
branch under it breaks on the second call; `refold`: one graph; `checkpointing`: the flag Stack
sets on its block from outside, on: the branch breaks. Run with bench/measure/run.py."""
import torch

import fixture

F = fixture.load("fixtures/precision/state_flag_off.py")
SOURCE = F.__file__


def _checkpointing():
    m = F.Stack()
    m.enable_checkpointing()
    return m.train()


def _folded_bypassed():
    m = F.Adapter()
    m.fold()
    m.bypass()
    return m


CASES = {"default": (lambda: F.Adapter(), [(torch.randn(2, 4),)] * 2),
         "folded_bypassed": (_folded_bypassed, [(torch.randn(2, 4),)] * 2),
         "warmup": (lambda: F.Warmup(), [(torch.randn(2, 4),)] * 2),
         "refold": (lambda: F.Refold(), [(torch.randn(2, 4),)] * 2),
         "checkpointing": (_checkpointing, [(torch.randn(2, 4),)] * 2)}

