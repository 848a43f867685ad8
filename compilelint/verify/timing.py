"""Latency statistics for `verify --cost` and `verify --fix`: interleaved repeats, medians, spreads,
and when two versions differ measurably. Pure Python (no torch): the child hands in one timer per
version (--cost), or the rounds of two children taking turns (--fix, fix_timing.py).

Why interleave: the same work can vary by 1.5x between two processes, or drift within one (clocks,
other tenants, allocator state). Timing every version once per round, in an order rotated from
round to round (A B C, B C A, C A B, ...), exposes all of them to the same drift, so a difference
between their medians is theirs. A difference is *measurable* only when the two interquartile
ranges do not overlap; otherwise it is "no measurable difference", never a speed-up or slowdown.
"""
from __future__ import annotations

import statistics
import time
from dataclasses import asdict, dataclass
from typing import Callable, Dict, List, Optional, Sequence

FASTER, SLOWER, SAME = "faster", "slower", "no measurable difference"


def quantile(values: Sequence[float], q: float) -> float:
    """The q-quantile (0..1) with linear interpolation between the two nearest ranks."""
    if not values:
        raise ValueError("no values")
    s = sorted(values)
    pos = q * (len(s) - 1)
    lo = int(pos)
    hi = min(lo + 1, len(s) - 1)
    return s[lo] + (s[hi] - s[lo]) * (pos - lo)


@dataclass(frozen=True)
class Summary:
    """Seconds per call: the median and the spread of the repeats."""

    n: int
    median: float
    q1: float
    q3: float
    min: float
    max: float

    def as_dict(self) -> dict:
        return asdict(self)


def summarize(samples: Sequence[float]) -> Summary:
    return Summary(n=len(samples), median=quantile(samples, 0.5), q1=quantile(samples, 0.25),
                   q3=quantile(samples, 0.75), min=min(samples), max=max(samples))


def compare(before: Summary, after: Summary) -> dict:
    """What going from `before` to `after` does: `verdict` (faster, slower, or no measurable
    difference when the interquartile ranges overlap), `saving` (seconds per call, before − after,
    medians) and `speedup` (before / after, medians)."""
    if after.q3 < before.q1:
        verdict = FASTER
    elif after.q1 > before.q3:
        verdict = SLOWER
    else:
        verdict = SAME
    speedup = before.median / after.median if after.median > 0 else float("inf")
    return {"verdict": verdict, "saving": before.median - after.median, "speedup": speedup}


# verify --fix's `slower`, on a few rounds a side (fix_timing.py): the fixed code's fastest round is
# slower than the original's slowest (beyond both spreads: with 5 rounds a side, noise alone does
# that once in 252 tries), and its median exceeds the original's by more than 5 % (a floor for rounds
# that happen to agree closely) and by more than 0.5 ms a call: the two sides run in two processes,
# which on a loaded machine differ by ~0.1 ms a call whatever they run (a fix measured 0.314 -> 0.421
# ms and 0.282 -> 0.343 ms on sub-millisecond CPU models, every round apart), so a smaller difference
# is not the fix's.
FLOOR = 1.05
ABSOLUTE_FLOOR_S = 5e-4  # 0.5 ms a call


def median(values: Sequence[float]) -> float:
    """The middle value (the mean of the two middle ones for an even count)."""
    return statistics.median(values)


def half_range(values: Sequence[float]) -> float:
    """Half the distance from the smallest value to the largest: the spread of a few rounds."""
    return (max(values) - min(values)) / 2


def slower_every_round(before: Sequence[float], after: Sequence[float]) -> bool:
    """verify --fix's verdict on two sides' round medians (seconds a call): `after` is slower."""
    if not before or not after:
        return False
    b, a = median(before), median(after)
    return min(after) > max(before) and a > b * FLOOR and a - b > ABSOLUTE_FLOOR_S


def order(names: Sequence[str], round_index: int) -> List[str]:
    """The order of one round: every version once, rotated by the round number."""
    k = round_index % len(names) if names else 0
    return list(names[k:]) + list(names[:k])


@dataclass
class Measured:
    samples: Dict[str, List[float]]
    rounds: int
    stable: bool  # the medians stopped moving before a limit ended the repeats
    seconds: float


def interleaved(timers: Dict[str, Callable[[], float]], *, min_rounds: int = 10, max_rounds: int = 400,
                budget_s: float = 30.0, min_s: float = 0.0, tolerance: float = 0.01, check_every: int = 5,
                clock: Callable[[], float] = time.monotonic,
                between: Optional[Callable[[str], None]] = None) -> Measured:
    """Call every timer once per round in `order`, until each median has moved less than
    `tolerance` (relative) over the last `check_every` rounds, at least `min_rounds` rounds and
    `min_s` seconds, at most `max_rounds` rounds or `budget_s` seconds. A timer returns the seconds
    of one call it made."""
    names = list(timers)
    samples: Dict[str, List[float]] = {n: [] for n in names}
    start = clock()
    previous: Optional[Dict[str, float]] = None
    rounds, stable = 0, False
    while rounds < max_rounds:
        for name in order(names, rounds):
            if between is not None:
                between(name)
            samples[name].append(timers[name]())
        rounds += 1
        if rounds >= min_rounds and rounds % check_every == 0 and clock() - start >= min_s:
            now = {n: quantile(samples[n], 0.5) for n in names}
            if previous is not None and all(_moved(previous[n], now[n]) < tolerance for n in names):
                stable = True
                break
            previous = now
        if clock() - start > budget_s and rounds >= min(min_rounds, max_rounds):
            break
    return Measured(samples, rounds, stable, clock() - start)


def _moved(old: float, new: float) -> float:
    return abs(new - old) / old if old > 0 else (0.0 if new == old else float("inf"))
