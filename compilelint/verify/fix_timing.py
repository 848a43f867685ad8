"""Is the fixed code slower? The compiled target of the original and of the fixed copy, timed in
two children that take turns: round r of one, then round r of the other (the order alternates
from round to round), so a machine that gets busier or quieter meanwhile weighs on both alike.

Each side's rounds give a median per round; the side's time is the median of those, its spread
half their range. The fixed code is `slower` by timing.py's `slower_every_round`: every round slower
than every round of the original, by more than 5 % and 0.5 ms a call (why: there).
"""
from __future__ import annotations

import os
import shutil
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import List

from compilelint.verify.code_copy import Copy
from compilelint.verify.prove import TargetRun, run_target
from compilelint.verify.timing import half_range, median, slower_every_round

ROUNDS = 5
CALLS = 10


@dataclass
class Side:
    rounds: List[float] = field(default_factory=list)  # the median call of each round, in seconds

    @property
    def median(self) -> float:
        return median(self.rounds)

    @property
    def spread(self) -> float:
        return half_range(self.rounds)


@dataclass
class Timing:
    label: str  # the run timed: "#0 eval"
    before: Side
    after: Side
    calls: int = CALLS
    error: str = ""

    @property
    def slower(self) -> bool:
        return not self.error and slower_every_round(self.before.rounds, self.after.rounds)

    def text(self) -> str:
        if self.error:
            return f"{self.label}: not timed ({self.error})"
        b, a = self.before, self.after
        return (f"{self.label}: compiled {_ms(b.median)} ± {_ms(b.spread)} → {_ms(a.median)} ± {_ms(a.spread)} "
                f"(median of {len(b.rounds)} interleaved rounds × {self.calls} calls)")

    def as_dict(self) -> dict:
        return {"run": self.label, "before": {"median_s": self.before.median, "spread_s": self.before.spread},
                "after": {"median_s": self.after.median, "spread_s": self.after.spread},
                "rounds": len(self.before.rounds), "calls": self.calls, "slower": self.slower} \
            if not self.error else {"run": self.label, "error": self.error}


def _ms(seconds: float) -> str:
    return f"{seconds * 1e3:.3g} ms"


def time_pair(example: str, index: int, mode: str, copy: Copy, *, rounds: int = ROUNDS, calls: int = CALLS,
              timeout: float = 300.0, **kw) -> Timing:
    """Time target `index` in `mode`, the original against the copy, in interleaved rounds."""
    folder = tempfile.mkdtemp(prefix="compilelint-timing-")
    label = f"#{index} {mode}"
    try:
        plan = {"dir": folder, "rounds": rounds, "calls": calls}
        with ThreadPoolExecutor(max_workers=2) as pool:
            futures = {side: pool.submit(run_target, example, index, mode, copy=copy if side == "after" else None,
                                         timeout=timeout, time=dict(plan, side=side), **kw)
                       for side in ("before", "after")}
            error = _take_turns(folder, rounds, futures, timeout)
            if error:
                for side in futures:  # let a child still waiting for its turn finish
                    for r in range(rounds):
                        open(os.path.join(folder, f"go-{side}-{r}"), "w").close()
            runs = {side: f.result() for side, f in futures.items()}
        error = error or next((f"{side}: {run.error}" for side, run in runs.items() if run.error), "")
        return Timing(label, _side(runs["before"]), _side(runs["after"]), calls, error)
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def _take_turns(folder: str, rounds: int, futures, timeout: float) -> str:
    """Start each round of each side in turn; "" when every round ran, else why not."""
    for r in range(rounds):
        order = ("before", "after") if r % 2 == 0 else ("after", "before")
        for side in order:
            open(os.path.join(folder, f"go-{side}-{r}"), "w").close()
            done, start = os.path.join(folder, f"done-{side}-{r}"), time.monotonic()
            while not os.path.exists(done):
                if futures[side].done():
                    return f"the {side} run stopped before its round {r + 1}"
                if time.monotonic() - start > timeout:
                    return f"round {r + 1} of the {side} run took over {timeout:g}s"
                time.sleep(0.002)
    return ""


def _side(run: TargetRun) -> Side:
    return Side([median(seconds) for seconds in run.timing if seconds])
