"""verify --fix, step 2 of 6 (copy → run before → apply → run after → judge → write): run the
original code and keep what each run observed, the yardstick of every fix.

`--example`: every (target, mode) of the factory in its own child, outputs saved for the "after"
runs to compare with; then each again, to find a model whose outputs differ from run to run (one
that reseeds from the clock can't prove anything about outputs). `--run`: the user's command once,
each wrapped call a run.
"""
from __future__ import annotations

import os
import shutil
import tempfile
from dataclasses import dataclass, field
from typing import Callable, Dict, List, Optional, Sequence, Tuple

from compilelint.finding import Finding, Report
from compilelint.verify import match as M
from compilelint.verify.prove import EQUAL, TargetRun, breaks, run_target

Key = Tuple[int, str]  # (target, mode), or (wrapped call, "call") with --run


@dataclass
class Before:
    runs: Dict[Key, TargetRun]  # the runs that count (a train run of a target that is no module does not)
    breaks: int = 0
    error: str = ""  # --example: the factory did not run (nothing to prove); --run: how the command failed
    unstable: set = field(default_factory=set)  # keys whose original outputs differ from run to run
    command: str = ""  # --run: how the command ended
    roots: Dict[str, List[str]] = field(default_factory=dict)  # --run: file → the functions wrapped
    saved: str = ""  # --example: the folder of the saved outputs

    def reference(self, key: Key) -> str:
        """The saved outputs of the original's run `key`, or "" when it saved none."""
        path = _saved(self.saved, key)
        return path if self.saved and os.path.exists(path) else ""

    def reaching(self, finding: Finding) -> List[Key]:
        """The runs that executed a line of `finding`."""
        return [k for k, run in self.runs.items() if reaches(run, finding)]

    def close(self) -> None:
        if self.saved:
            shutil.rmtree(self.saved, ignore_errors=True)


def run_before(report: Report, files: Sequence[str], *, example: Optional[str], run_cmd: Optional[Sequence[str]],
               modes: Sequence[str], progress: Optional[Callable[[int, int, str], None]], **kw) -> Before:
    """The original's runs. `kw`: device, backend, timeout, memory_limit_mb."""
    if run_cmd:
        return _command_before(report, files, run_cmd, progress, **kw)
    return _example_before(example, sorted(files), list(modes), progress, **kw)


def _example_before(example, files, modes, progress, **kw) -> Before:
    before = Before({}, saved=tempfile.mkdtemp(prefix="compilelint-fixproof-"))
    try:
        _example_runs(before, example, files, modes, progress, **kw)
    except BaseException:
        before.close()
        raise
    return before


def _example_runs(before: Before, example, files, modes, progress, **kw) -> None:
    saved, runs = before.saved, before.runs
    first = run_target(example, 0, modes[0], trace_files=files, save=_saved(saved, (0, modes[0])), **kw)
    if first.count is None:
        before.error = first.error or "the example factory did not run"
        return
    runs[(0, modes[0])] = first
    modules = first.modules + [False] * first.count
    todo = [(i, m) for i in range(first.count) for m in modes
            if (i, m) != (0, modes[0]) and (m != "train" or modules[i])]
    for n, (i, m) in enumerate(todo, 2):
        _tick(progress, n, len(todo) + 1, f"before #{i} {m}")
        runs[(i, m)] = run_target(example, i, m, trace_files=files, save=_saved(saved, (i, m)), **kw)
    # The original against itself: a model that reseeds from the clock (`torch.seed()`) can't
    # prove anything about outputs.
    for n, key in enumerate(runs, 1):
        _tick(progress, n, len(runs), f"again #{key[0]} {key[1]}")
        again = run_target(example, key[0], key[1], reference=_saved(saved, key), **kw)
        if any((again.compare or {}).get(side, {}).get("equal") not in EQUAL for side in ("eager", "compiled")):
            before.unstable.add(key)
    before.runs = {k: r for k, r in runs.items() if not (r.mode == "train" and r.error.startswith("not a module"))}
    before.breaks = sum(breaks(r.events) for r in before.runs.values())


def _command_before(report, files, run_cmd, progress, *, device, backend, timeout, memory_limit_mb) -> Before:
    from compilelint.verify import _roots, proc, runner
    from compilelint.verify.assemble import kind_of_code

    roots = _roots(report, kind_of_code)
    outcome = runner.run_command(list(run_cmd), roots, sorted(files), backend=backend, timeout=timeout,
                                 memory_limit_mb=memory_limit_mb or proc.default_memory_limit_mb(), progress=progress)
    runs = {(n, "call"): TargetRun(index=n, mode="call", events=run.events, reached=run.reached or {}, error=run.error)
            for n, run in enumerate(outcome.runs)}
    return Before(runs, breaks=sum(breaks(r.events) for r in outcome.runs), error=outcome.error,
                  command=outcome.command, roots=roots)


def reaches(run: TargetRun, f: Finding) -> bool:
    """The run executed a line of the finding."""
    lines = run.reached.get(M.norm(f.path), set())
    return any(row in lines for row in range(f.span.row, max(f.span.row, f.span.end_row) + 1))


def _saved(folder: str, key: Key) -> str:
    return os.path.join(folder, f"{key[0]}-{key[1]}.pt")


def _tick(progress, done, total, label):
    if progress:
        progress(done, total, label)
