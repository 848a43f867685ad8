"""verify --fix, step 4 of 6 (copy → run before → apply → run after → judge → write): run the fixed
copy as the original ran, and compare.

`--example`: each (target, mode) again in its own child, the copy first on its path (a module
example such as `mypkg.examples:make` imports `mypkg` from the copy, not from the working folder; a
file example is read from the copy), its outputs compared with the original's saved ones; and, for
the fixes proven so far, the compiled target timed against the original's (fix_timing.py). `--run`:
the user's command once more, in the copy of the working folder; its outputs count as equal when it
ends the same way. Every path of what the runs report is named as the original's.
"""
from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Callable, Dict, Optional, Sequence

from compilelint.verify.code_copy import Copy
from compilelint.verify.fix_before import Before, Key
from compilelint.verify.prove import TargetRun, breaks, run_target


@dataclass
class After:
    runs: Dict[Key, TargetRun]  # with `compare`: outputs against the original's
    breaks: int = 0
    refused: str = ""  # why no fix can be judged from these runs


def run_after(before: Before, copy: Copy, keys: Sequence[Key], files: Sequence[str], *, example: Optional[str],
              run_cmd: Optional[Sequence[str]], progress: Optional[Callable[[int, int, str], None]], **kw) -> After:
    """The copy's runs for `keys` (the original's runs to compare with). `kw`: device, backend,
    timeout, memory_limit_mb."""
    if run_cmd:
        return _command_after(before, copy, files, run_cmd, progress, **kw)
    runs = {}
    for n, (i, m) in enumerate(keys, 1):
        if progress:
            progress(n, len(keys), f"after #{i} {m}")
        runs[(i, m)] = run_target(example, i, m, trace_files=sorted(files), copy=copy,
                                  reference=before.reference((i, m)), **kw)
    return After(runs, breaks=sum(breaks(r.events) for r in runs.values()))


def time_after(example: str, key: Key, copy: Copy, progress, **kw):
    """The compiled target `key` of the original and of the copy, timed in turns (fix_timing.Timing)."""
    from compilelint.verify.fix_timing import time_pair

    if progress:
        progress(1, 1, f"timing #{key[0]} {key[1]}")
    return time_pair(example, key[0], key[1], copy, **kw)


def _command_after(before: Before, copy: Copy, files, run_cmd, progress, *, device, backend, timeout,
                   memory_limit_mb) -> After:
    from compilelint.verify import proc, runner

    outcome = runner.run_command(list(run_cmd), {copy.to_copy(k): v for k, v in before.roots.items()},
                                 [copy.to_copy(f) for f in sorted(files)], backend=backend, timeout=timeout,
                                 memory_limit_mb=memory_limit_mb or proc.default_memory_limit_mb(), progress=progress,
                                 pythonpath=copy.pythonpath, cwd=copy.to_copy(os.getcwd()))
    total = sum(breaks(r.events) for r in outcome.runs)
    if before.runs and not outcome.runs:
        return After({}, total, "no wrapped call ran from the fixed copy (the command imports the code from elsewhere)")
    same = {"equal": "bitwise" if before.command == outcome.command and not outcome.error else "differs",
            "what": f"the command {before.command} before, {outcome.command} after", "max_abs": None}
    events = [dict(e, file=copy.to_original(e["file"]),
                   stack=[[copy.to_original(f), ln, nm] for f, ln, nm in e.get("stack", [])])
              for run in outcome.runs for e in run.events]
    # The command's calls need not line up one to one: all after-events count against every call.
    runs = {k: TargetRun(index=k[0], mode="call", events=events if k == (0, "call") else [],
                         compare={"eager": same, "compiled": same}, error=outcome.error) for k in before.runs}
    return After(runs, total)
