"""`compilelint verify`: prove each finding of `check` by running the code under torch.compile.

Inputs come from the user: `example="file.py:factory"` (the factory returns `(callable, args,
kwargs)` or an iterable of them; each triple is a *target*, run in its own subprocess), or
`run_cmd=[...]` (the user's command, e.g. pytest, run once with the flagged compiled-region roots
wrapped on import). The parent process never imports torch or user code.

Every finding gets `verification = {"status", "gb_type", "observed", "event", "fullgraph",
"torch", "device", "backend", "message"}`. Statuses:

- `confirmed`      Dynamo reported an event of the finding's kind (graph break or skipped frame for
                   a break rule, recompile for a recompile rule) in its function, at or after its
                   line (`observed` says where, `gb_type` what). Breaks are counted in default mode:
                   `fullgraph=True` captures `.item()`, `nonzero`, masks... so `fullgraph` is only
                   recorded (`"ok"`, `"raises: <gb_type>"`, `"not-run"`), never used to decide.
- `not-reproduced` the finding's line ran and compiled, and Dynamo reported nothing matching.
- `not-reached`    no run executed the finding's line (the example or the tests do not cover it).
- `error`          the run that reached it failed: the code raises in eager too, torch.compile
                   itself failed, or the target crashed, hung or exited (`message`, one line).
- `static-only`    a usage rule (kind "usage"): nothing to observe at run time.
- `missed`         on the extra findings CL901 (graph break), CL902 (recompile) and CL903 (frame
                   skipped): Dynamo did it and no rule predicted it.
"""
from __future__ import annotations

import os
from typing import Callable, Iterable, List, Optional, Sequence

from compilelint.finding import Report

STATUSES = ("confirmed", "not-reproduced", "not-reached", "error", "static-only", "missed")

__all__ = ["run_verify", "verify_report", "summarize", "VerifyUsageError", "STATUSES"]


class VerifyUsageError(ValueError):
    """Bad verify arguments (one line, meant for the user)."""


def run_verify(paths: Sequence[str], *, settings, example: Optional[str] = None,
               run_cmd: Optional[Sequence[str]] = None, device: str = "auto", backend: str = "eager",
               timeout: float = 120.0, progress: Optional[Callable[[int, int, str], None]] = None,
               jobs: Optional[int] = None, memory_limit_mb: Optional[int] = None) -> Report:
    """Check `paths`, then verify every finding (see the module docstring)."""
    _validate(example, run_cmd, device, backend)
    from compilelint.engine import check_paths

    report = check_paths(list(paths), settings)
    return verify_report(report, paths, example=example, run_cmd=run_cmd, device=device, backend=backend,
                         timeout=timeout, progress=progress, jobs=jobs, memory_limit_mb=memory_limit_mb)


def verify_report(report: Report, paths: Sequence[str], *, example: Optional[str] = None,
                  run_cmd: Optional[Sequence[str]] = None, device: str = "auto", backend: str = "eager",
                  timeout: float = 120.0, progress: Optional[Callable[[int, int, str], None]] = None,
                  jobs: Optional[int] = None, memory_limit_mb: Optional[int] = None) -> Report:
    """Verify the findings of an existing report (`paths` bound where unpredicted events count)."""
    from compilelint.verify import proc, runner
    from compilelint.verify.assemble import assemble, gb_types_of, kind_of_code
    from compilelint.verify.match import norm

    _validate(example, run_cmd, device, backend)
    files = {norm(f) for f in _python_files(paths)} | {norm(f.path) for f in report.findings}
    trace_files = sorted({norm(f.path) for f in report.findings} | files)
    column_rows: dict = {}  # the findings' rows: where the tracer records instruction columns
    for f in report.findings:
        column_rows.setdefault(norm(f.path), set()).update(range(f.span.row, max(f.span.row, f.span.end_row) + 1))
    column_rows = {path: sorted(rows) for path, rows in column_rows.items()}
    mem = memory_limit_mb or proc.default_memory_limit_mb()
    if example:
        outcome = runner.run_example(example, trace_files, device=device, backend=backend, timeout=timeout,
                                     memory_limit_mb=mem, jobs=jobs or min(2, os.cpu_count() or 1),
                                     progress=progress, column_rows=column_rows)
    else:
        roots = _roots(report, kind_of_code)
        outcome = runner.run_command(list(run_cmd), roots, trace_files, backend=backend, timeout=timeout,
                                     memory_limit_mb=mem, progress=progress, column_rows=column_rows)
    out = assemble(report, outcome, files=files, backend=backend, device=device, kind_of=kind_of_code,
                   gb_types_of=gb_types_of)
    out.verify = {"command": outcome.command, "error": outcome.error, "torch": outcome.torch,
                  "device": outcome.device or device, "backend": backend,
                  # every run that failed (a target raising in eager, a crash): reported even when
                  # no finding is in the function where it failed
                  "failures": [f"{r.label}: {r.error}" for r in outcome.runs if r.error],
                  "output_tail": outcome.output_tail}
    return out


def summarize(report: Report) -> dict:
    """Counts per status, plus how a `--run` command ended (`command`) when there was one."""
    counts = {s: 0 for s in STATUSES}
    for f in report.findings:
        status = (f.verification or {}).get("status")
        if status in counts:
            counts[status] += 1
    meta = getattr(report, "verify", None) or {}
    if meta.get("command"):
        counts["command"] = meta["command"]
    return counts


def torch_missing() -> str:
    """A one-line message when torch cannot be imported by the runs, else "" (found without
    importing it: the parent process never imports torch)."""
    import importlib.util

    try:
        found = importlib.util.find_spec("torch") is not None
    except (ImportError, ValueError):
        found = False
    if found:
        return ""
    return ('verify runs your code under torch.compile, and torch cannot be imported here: '
            'install torch (python -m pip install torch), or the verify extra in a clone: python -m pip install -e ".[verify]"')


def _validate(example, run_cmd, device, backend):
    if bool(example) == bool(run_cmd):
        raise VerifyUsageError("verify needs exactly one of --example MOD:FACTORY or --run CMD / -- CMD")
    if example and ":" not in example:
        raise VerifyUsageError(f"--example must look like MODULE_OR_FILE:FACTORY, got {example!r}")
    if not (device in ("auto", "cpu", "cuda") or device.startswith("cuda:")):
        raise VerifyUsageError(f"unknown device {device!r} (auto, cpu, cuda, cuda:N)")
    if not backend:
        raise VerifyUsageError("--backend must not be empty")


def _roots(report: Report, kind_of) -> dict:
    """abs file → qualnames to wrap: each finding's compiled-region root, else its own function."""
    from compilelint.verify.match import norm

    roots: dict = {}
    for f in report.findings:
        if kind_of(f.code) == "usage":
            continue
        root = f.region.root if f.region is not None else ""
        path, sep, qual = root.rpartition(":")
        if not sep or not qual:
            path, qual = f.path, f.function
        if qual:
            names = roots.setdefault(norm(path), [])
            if qual not in names:
                names.append(qual)
    return roots


def _python_files(paths: Iterable[str]) -> List[str]:
    skip = {"__pycache__", "node_modules", "site-packages"}
    out = []
    for p in paths:
        if os.path.isdir(p):
            for dirpath, dirnames, filenames in os.walk(p):
                dirnames[:] = sorted(d for d in dirnames if not d.startswith(".") and d not in skip)
                out.extend(os.path.join(dirpath, n) for n in sorted(filenames) if n.endswith(".py"))
        elif p.endswith(".py") and os.path.isfile(p):
            out.append(p)
    return out
