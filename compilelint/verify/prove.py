"""Parent side of running a factory's target to prove fixes (no torch here): one isolated child
(`prove_child.py`) runs it on the original code or on a fixed copy (code_copy.py), the copy first on
PYTHONPATH, and reports what it observed: breaks, lines reached, outputs compared with a saved run.
"""
from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import Dict, List, Optional, Sequence

from compilelint.verify import proc
from compilelint.verify.code_copy import Copy
from compilelint.verify.runner import _env, run_child

# The verdicts of a child's comparison (eager, compiled) that count as equal outputs.
EQUAL = ("bitwise", "allclose", "as-accurate", "as-compiled")


def verdict_text(v: dict) -> str:
    """One comparison verdict of a child (`prove_child.compare`) in words, with its numbers."""
    eq = v.get("equal") or "not compared"
    if eq == "allclose":
        return f"allclose (max |Δ| {v['max_abs']:.3g}, rtol {v['rtol']:g}, atol {v['atol']:g})"
    if eq == "as-accurate":
        return (f"as accurate (rmse from a float64 run {v['rmse']:.3g}, at most {v['multiplier']:g}× the "
                f"original's {v['rmse_ref']:.3g} + {v['tol'] / 10:g}; max |Δ| {v['max_abs']:.3g})")
    if eq == "as-compiled":
        return (f"as compiled (max |Δ| {v['max_abs']:.3g}, at most {v['multiplier']:g}× the original's compiled "
                f"{v['compiled_max_abs']:.3g}; allclose's rtol {v['rtol']:g}, atol {v['atol']:g})")
    if eq in ("differs", "mismatch"):
        extra = f", max |Δ| {v['max_abs']:.3g}" if v.get("max_abs") is not None else ""
        tol = f", rtol {v['rtol']:g}, atol {v['atol']:g}" if v.get("rtol") is not None else ""
        return f"{eq} ({v.get('what', '')}{extra}{tol})"
    return eq + (f" ({v['zero_grads']} gradients zero instead of None)" if v.get("zero_grads") else "")


@dataclass
class TargetRun:
    """What one child observed for one (target, mode)."""

    index: int
    mode: str
    events: list = field(default_factory=list)
    reached: Dict[str, set] = field(default_factory=dict)
    compare: Optional[dict] = None
    error: str = ""
    count: Optional[int] = None
    modules: List[bool] = field(default_factory=list)  # per target: is it (a method of) a module
    timing: List[List[float]] = field(default_factory=list)  # per timed round, each call's seconds


def run_target(example: str, index: int, mode: str, *, trace_files: Sequence[str] = (), copy: Optional[Copy] = None,
               save: str = "", reference: str = "", device: str = "cpu", backend: str = "eager",
               timeout: float = 300.0, memory_limit_mb: Optional[int] = None, calls: int = 3, seed: int = 0,
               dynamo_config: Optional[dict] = None, dynamic: Optional[bool] = None,
               env_extra: Optional[Dict[str, str]] = None, time: Optional[dict] = None) -> TargetRun:
    """Run target `index` of `example` in `mode` in a child; on the copy when `copy` is given
    (the example itself is read from the copy when it lives in the copied code). `env_extra`: more
    environment for the child (a factory that reads which model to build from it). `time`: only
    time the compiled target, in rounds (fix_timing.py)."""
    mem = memory_limit_mb or proc.default_memory_limit_mb()
    env = dict(_env(), **(env_extra or {}))
    first: List[str] = []
    if copy is not None:
        first = copy.pythonpath  # before the working folder too, which `-m` and the module form put first
        env["PYTHONPATH"] = os.pathsep.join(copy.pythonpath + [env["PYTHONPATH"]])
        example = copy.example(example)
        trace_files = [copy.to_copy(f) for f in trace_files]
    spec = {"example": example, "index": index, "mode": mode, "seed": seed, "backend": backend, "device": device,
            "calls": calls, "trace_files": list(trace_files), "save": save, "reference": reference or None,
            "dynamo_config": dynamo_config or {}, "dynamic": dynamic, "path_first": first, "time": time}
    res, records = run_child("compilelint.verify.prove_child", spec, prefix="compilelint-prove-", env=env,
                             timeout=timeout, memory_limit_mb=mem)
    run = TargetRun(index=index, mode=mode)
    back = copy.to_original if copy is not None else (lambda p: p)
    for r in records:
        t = r.get("type")
        if t == "count":
            run.count = int(r["n"])
            run.modules = list(r.get("modules") or [])
        elif t == "reached":
            run.reached = {os.path.realpath(back(f)): set(v) for f, v in r["lines"].items()}
        elif t == "events":
            run.events = [_back(e, back) for e in r["events"]]
        elif t == "compare":
            run.compare = {"eager": r["eager"], "compiled": r["compiled"]}
        elif t == "timing":
            run.timing.append(list(r["seconds"]))
        elif t == "error" and not run.error:
            run.error = r["message"]
    if not any(r.get("type") == "done" for r in records) and not run.error:
        run.error = res.failure(timeout, mem) or "stopped without reporting"
    return run


def _back(event: dict, back) -> dict:
    """An event of a run on the copy, with its paths named as the original's."""
    return dict(event, file=back(event["file"]), stack=[[back(f), ln, name] for f, ln, name in event.get("stack", [])])


def breaks(events: Sequence[dict], under: str = "") -> int:
    """Graph breaks and skipped frames, each counted as often as Dynamo reported it; only those in
    files under `under` when given."""
    under = os.path.realpath(under) if under else ""
    return sum(e.get("count", 1) for e in events if e["event"] != "recompile"
               and (not under or os.path.realpath(e["file"]).startswith(under + os.sep)))
