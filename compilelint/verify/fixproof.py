"""`compilelint verify --fix`: prove each fix by running the code before and after it.

The fixes of `check` (safe ones; with `--unsafe-fixes` the unsafe ones too) are written to a
temporary copy of the code, never to the user's files. Every target runs from the
original and from the copy, seeded the same, on the same inputs; `--example` targets that are
modules run in eval and in train mode (train adds the parameters' gradients to what is compared).
Per fix:

- `proven`          its finding had a break before, none after; no new break in the lines it wrote;
                    every output and gradient of the runs that reached it equal (bitwise, or within
                    torch.testing's default tolerances, which are printed); and the compiled code
                    no slower (fix_timing.py: interleaved rounds, eval runs; with `--example` only);
- `slower`          all of that, but the compiled code with the fix is slower than without it,
                    every round of it slower than every round without it (the medians and
                    spreads are printed);
- `changed-output`  a run that reached it computes something else (eager or compiled);
- `new-break`       Dynamo breaks in the lines it wrote;
- `no-effect`       its finding still breaks, or never broke in these runs;
- `not-reached`     no run executed its line;
- `error`           the runs failed (the message says how), or every run that reached it computes
                    something else each time even without the fix (a model that reseeds from the
                    clock): each original run is repeated once to find those, marked nondeterministic.

When a run that reached several fixes changed its outputs, each of those fixes is run again on its
own, so the verdict names the fix that changed them. `--proven-only` then writes the proven fixes,
and only them, to the user's files. With `--run` the user's command stands in for the comparison:
outputs count as equal when it ends the same way before and after.

One module a step, each entered from here, in this order: code_copy.py (copy) → fix_before.py
(run before) → fix_apply.py (apply) → fix_after.py (run after) → fix_judge.py (judge) →
fix_write.py (write, called by the command with `--proven-only`). Isolating a fix and timing the
proven ones are more rounds of apply → run after → judge on other sets of fixes.
"""
from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Callable, List, Optional, Sequence

from compilelint.finding import Report
from compilelint.fix_files import applicable
from compilelint.verify import match as M
from compilelint.verify.code_copy import make_copy
from compilelint.verify.fix_after import run_after, time_after
from compilelint.verify.fix_apply import FixedCopy
from compilelint.verify.fix_before import Before, run_before
from compilelint.verify.fix_judge import FixResult, judge


@dataclass
class Proof:
    results: List[FixResult]
    breaks_before: int = 0
    breaks_after: int = 0
    error: str = ""


def prove_fixes(report: Report, paths: Sequence[str], *, example: Optional[str] = None,
                run_cmd: Optional[Sequence[str]] = None, unsafe: bool = False, device: str = "cpu",
                backend: str = "eager", timeout: float = 300.0, memory_limit_mb: Optional[int] = None,
                modes: Sequence[str] = ("eval", "train"),
                progress: Optional[Callable[[int, int, str], None]] = None) -> Proof:
    from compilelint.verify import _python_files

    fixes = [f for f in report.findings if applicable(f.fix, unsafe)]
    if not fixes:
        return Proof([])
    files = {M.norm(f) for f in _python_files(paths)} | {M.norm(f.path) for f in report.findings}
    kw = {"device": device, "backend": backend, "timeout": timeout, "memory_limit_mb": memory_limit_mb}
    # --run: the command runs in the copy of the working folder, so `python script.py` and the
    # script's own folder on sys.path see the fixed code, not the original.
    here = [os.getcwd()] if run_cmd else []
    copy = make_copy(sorted({os.path.dirname(M.norm(f.path)) for f in fixes}) + list(paths) + here)
    before = None
    try:
        before = run_before(report, files, example=example, run_cmd=run_cmd, modes=modes, progress=progress, **kw)
        if example and before.error:
            return Proof([FixResult(f, "error", message=before.error) for f in fixes], error=before.error)
        fixed = FixedCopy(copy)

        def trial(subset, keys) -> tuple:
            """apply → run after → judge, for the fixes `subset` on the original's runs `keys`."""
            applied, maps = fixed.hold(subset)
            after = run_after(before, copy, keys, files, example=example, run_cmd=run_cmd, progress=progress, **kw)
            return judge(report, subset, applied, maps, {k: before.runs[k] for k in keys}, after, files,
                         before.unstable), after

        results, after = trial(fixes, list(before.runs))
        if run_cmd:
            if len(fixes) > 1 and any(r.status == "changed-output" for r in results):
                # The command fails with all of them: run it once per fix to name the one(s) to blame.
                results = [trial([f], list(before.runs))[0][0] for f in fixes]
        else:
            _isolate(results, before, trial)
            _time_proven(results, before, fixed, lambda key: time_after(example, key, copy, progress, **kw))
        return Proof(results, before.breaks, after.breaks, error=before.error)
    finally:
        if before is not None:
            before.close()
        copy.remove()


def _isolate(results: List[FixResult], before: Before, trial) -> None:
    """A run that reached several fixes changed its outputs: run each of those fixes alone."""
    changed = [r for r in results if r.status == "changed-output"]
    if not changed:
        return
    shared = {}
    for r in results:
        for k in before.reaching(r.finding):
            shared.setdefault(k, []).append(r)
    suspects = [r for r in changed if any(len(shared.get(k, [])) > 1 for k in before.runs if r in shared.get(k, []))]
    for r in suspects:
        alone = trial([r.finding], [k for k in before.runs if r in shared.get(k, [])])[0][0]
        r.status, r.after, r.outputs, r.message = alone.status, alone.after, alone.outputs, alone.message


def _time_proven(results: List[FixResult], before: Before, fixed: FixedCopy, time) -> None:
    """Time every eval run that reached a proven fix, the proven fixes applied; a run that got
    slower times each of its fixes alone, so `slower` names the fix that costs the time."""
    proven = [r for r in results if r.status == "proven"]
    for key in before.runs:
        mine = [r for r in proven if key[1] != "train" and key in before.reaching(r.finding)]
        if not mine:
            continue
        fixed.hold([r.finding for r in proven])
        timing = time(key)
        if not timing.slower or len(mine) == 1:
            for r in mine:
                _timed(r, timing)
            continue
        for r in mine:
            fixed.hold([r.finding])
            _timed(r, time(key))


def _timed(r: FixResult, timing) -> None:
    r.timings.append(timing)
    if timing.slower:
        r.status, r.message = "slower", timing.text()
