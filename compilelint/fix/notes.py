"""What each older fix changes in eager behaviour, said in its message (`full` output and JSON show
it): the builders in `compilelint.fix` name the edit, these notes name its price."""
from __future__ import annotations

import dataclasses
from typing import Optional

from compilelint.finding import Fix

BOTH_BRANCHES = ("both branches are computed every time (their cost, and their errors or NaN/inf, even "
                 "on the side not taken); the result is always a tensor")
ZERO_D = ("the value stays a 0-d tensor instead of a Python number: the result's dtype follows tensor "
          "promotion, and it lives on the tensor's device")
NOT_UNDER_COMPILE = "under torch.compile the call no longer runs (eager runs it as before)"
FIXED_WIDTH = "the one-hot width is always K, also when the largest index is smaller"
BUFFER = ("the counter becomes a non-persistent buffer: a 0-d tensor that follows .to(device), is left out "
          "of state_dict, and is shared by in-place updates")


def explained(fix: Optional[Fix], note: str) -> Optional[Fix]:
    """`fix` with "Eager change: <note>" added to its message (unsafe fixes only: a safe fix changes
    nothing)."""
    if fix is None or fix.applicability != "unsafe" or "Eager change:" in fix.message:
        return fix
    return dataclasses.replace(fix, message=f"{fix.message}. Eager change: {note}")
