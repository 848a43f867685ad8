"""`compilelint verify --fix`: prove each fix by running the code before and after it.

The fixes of `check` (safe ones; with `--unsafe-fixes` the unsafe ones too) are written to a
temporary copy of the code (prove.py), never to the user's files. Every target runs from the
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
"""
from __future__ import annotations

import os
import shutil
import tempfile
from dataclasses import dataclass, field
from typing import Callable, Dict, List, Optional, Sequence, Tuple

from compilelint.finding import Finding, Report
from compilelint.fix_files import _parses, applicable, apply_fixes, atomic_write, line_map
from compilelint.source import decode, encode
from compilelint.verify import match as M
from compilelint.verify.prove import Copy, TargetRun, make_copy, run_target

STATUSES = ("proven", "changed-output", "new-break", "no-effect", "not-reached", "error", "slower")
EQUAL = ("bitwise", "allclose")


@dataclass
class FixResult:
    finding: Finding
    status: str = "not-reached"
    before: int = 0  # breaks Dynamo reported at the finding, before
    after: int = 0
    outputs: List[Tuple[str, dict]] = field(default_factory=list)  # (run label, compare verdicts)
    message: str = ""
    timings: list = field(default_factory=list)  # fix_timing.Timing of the runs that reached it (eval)


@dataclass
class Proof:
    results: List[FixResult]
    breaks_before: int = 0
    breaks_after: int = 0
    error: str = ""


# ---------------------------------------------------------------- writing fixes


def write_fixes(copy: Copy, fixes: Sequence[Finding]) -> Tuple[List[Finding], Dict[str, list]]:
    """Write `fixes` into the copy (each fixed file from its original text, so earlier calls are
    undone). Returns the fixes applied and, per original file, the line map of its new text."""
    by_file: Dict[str, List[Finding]] = {}
    for f in fixes:
        by_file.setdefault(M.norm(f.path), []).append(f)
    applied, maps = [], {}
    for path, todo in by_file.items():
        source = _read(path)
        text, done = apply_fixes(source.text, todo)
        if not done or _parses(text, path) is not None:
            continue
        atomic_write(copy.to_copy(path), encode(source, text))
        applied += done
        maps[path] = line_map(source.text, text)
    return applied, maps


def restore(copy: Copy, paths) -> None:
    for path in paths:
        shutil.copyfile(path, copy.to_copy(path))


def _read(path: str):
    with open(path, "rb") as f:
        return decode(path, f.read())


# ---------------------------------------------------------------- proving


class _Runs:
    """Before and after runs of every (target, mode) of an `--example` factory."""

    def __init__(self, example, files, *, device, backend, timeout, memory_limit_mb, modes, progress):
        self.example, self.files = example, sorted(files)
        self.kw = {"device": device, "backend": backend, "timeout": timeout, "memory_limit_mb": memory_limit_mb}
        self.modes, self.progress = modes, progress
        self.tmp = tempfile.mkdtemp(prefix="compilelint-fixproof-")
        self.before: Dict[Tuple[int, str], TargetRun] = {}
        self.unstable: set = set()  # (target, mode) whose original outputs differ from run to run

    def keys(self):
        return list(self.before)

    def run_before(self) -> str:
        first = run_target(self.example, 0, self.modes[0], trace_files=self.files, save=self._ref(0, self.modes[0]),
                           **self.kw)
        if first.count is None:
            return first.error or "the example factory did not run"
        self.before[(0, self.modes[0])] = first
        modules = first.modules + [False] * first.count
        todo = [(i, m) for i in range(first.count) for m in self.modes
                if (i, m) != (0, self.modes[0]) and (m != "train" or modules[i])]
        for n, (i, m) in enumerate(todo, 2):
            self._tick(n, len(todo) + 1, f"before #{i} {m}")
            self.before[(i, m)] = run_target(self.example, i, m, trace_files=self.files, save=self._ref(i, m), **self.kw)
        # The original against itself: a model that reseeds from the clock (`torch.seed()`) can't
        # prove anything about outputs.
        for n, key in enumerate(self.before, 1):
            self._tick(n, len(self.before), f"again #{key[0]} {key[1]}")
            again = run_target(self.example, key[0], key[1], reference=self._ref(*key), **self.kw)
            if any((again.compare or {}).get(side, {}).get("equal") not in EQUAL for side in ("eager", "compiled")):
                self.unstable.add(key)
        return ""

    def run_after(self, copy: Copy, keys) -> Dict[Tuple[int, str], TargetRun]:
        out = {}
        for n, (i, m) in enumerate(keys, 1):
            self._tick(n, len(keys), f"after #{i} {m}")
            ref = self._ref(i, m) if os.path.exists(self._ref(i, m)) else ""
            out[(i, m)] = run_target(self.example, i, m, trace_files=self.files, copy=copy, reference=ref, **self.kw)
        return out

    def time(self, copy: Copy, key):
        from compilelint.verify.fix_timing import time_pair

        self._tick(1, 1, f"timing #{key[0]} {key[1]}")
        return time_pair(self.example, key[0], key[1], copy, **self.kw)

    def _ref(self, i, m):
        return os.path.join(self.tmp, f"{i}-{m}.pt")

    def _tick(self, done, total, label):
        if self.progress:
            self.progress(done, total, label)

    def close(self):
        shutil.rmtree(self.tmp, ignore_errors=True)


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
    # --run: the command runs in the copy of the working folder, so `python script.py` and the
    # script's own folder on sys.path see the fixed code, not the original.
    here = [os.getcwd()] if run_cmd else []
    copy = make_copy(sorted({os.path.dirname(M.norm(f.path)) for f in fixes}) + list(paths) + here)
    try:
        if run_cmd:
            return _prove_command(report, fixes, files, copy, run_cmd, backend=backend, timeout=timeout,
                                  memory_limit_mb=memory_limit_mb, progress=progress)
        runs = _Runs(example, files, device=device, backend=backend, timeout=timeout,
                     memory_limit_mb=memory_limit_mb, modes=list(modes), progress=progress)
        try:
            error = runs.run_before()
            if error:
                return Proof([FixResult(f, "error", message=error) for f in fixes], error=error)
            keys = [k for k, r in runs.before.items() if not _not_a_module(r)]
            applied, maps = write_fixes(copy, fixes)
            after = runs.run_after(copy, keys)
            results = _judge(report, fixes, applied, maps, {k: runs.before[k] for k in keys}, after, files,
                             runs.unstable)
            _isolate(results, applied, copy, runs, keys, files, report)
            _time_proven(results, copy, runs, keys)
            before_n = sum(_breaks(runs.before[k].events) for k in keys)
            after_n = sum(_breaks(after[k].events) for k in keys)
            return Proof(results, before_n, after_n)
        finally:
            runs.close()
    finally:
        copy.remove()


def _not_a_module(run: TargetRun) -> bool:
    return run.mode == "train" and run.error.startswith("not a module")


def _breaks(events) -> int:
    return sum(e.get("count", 1) for e in events if e["event"] != "recompile")


def _targets(report: Report) -> List[M.Target]:
    from compilelint.verify.assemble import gb_types_of, kind_of_code

    return [M.Target(index=i, code=f.code, kind=kind_of_code(f.code), file=M.norm(f.path), row=f.span.row,
                     end_row=max(f.span.row, f.span.end_row), gb_types=gb_types_of(f))
            for i, f in enumerate(report.findings)]


def _events_per_finding(report: Report, events, files) -> Tuple[Dict[int, int], List[dict]]:
    """Breaks matched to each finding (by report index), and the breaks no finding explains."""
    targets = [t for t in _targets(report) if t.kind in ("break", "recompile")]
    missed = M.match(targets, events, files, M.FunctionIndex())
    counts = {t.index: sum(e.get("count", 1) for e in t.events if e["event"] != "recompile") for t in targets}
    return counts, missed


def _to_old_lines(events, maps) -> List[dict]:
    """After-run events with their lines in the original file's numbering; `written` marks a line a
    fix wrote."""
    out = []
    for e in events:
        m = maps.get(M.norm(e["file"])) if e.get("file") else None
        if m is not None and 0 < e["line"] < len(m):
            old, written = m[e["line"]]
            e = dict(e, line=old, written=written)
        out.append(e)
    return out


def _judge(report, fixes, applied, maps, before, after, files, unstable=frozenset()) -> List[FixResult]:
    index_of = {id(f): i for i, f in enumerate(report.findings)}
    ids = {id(f) for f in applied}
    before_counts: Dict[int, int] = {}
    after_counts: Dict[int, int] = {}
    before_places = set()
    for run in before.values():
        c, _ = _events_per_finding(report, run.events, files)
        for k, v in c.items():
            before_counts[k] = before_counts.get(k, 0) + v
        before_places |= {(M.norm(e["file"]), e["line"], e["gb_type"]) for e in run.events if e.get("file")}
    written_breaks = []
    for run in after.values():
        events = _to_old_lines(run.events, maps)
        c, _ = _events_per_finding(report, events, files)
        for k, v in c.items():
            after_counts[k] = after_counts.get(k, 0) + v
        written_breaks += [e for e in events if e["event"] != "recompile" and e.get("file")
                           and (M.norm(e["file"]), e["line"], e["gb_type"]) not in before_places]
    # Findings that carry the same fix (both breaks of one expert loop) are judged together.
    groups: Dict[tuple, List[Finding]] = {}
    for f in fixes:
        groups.setdefault(_fix_key(f), []).append(f)
    results = []
    for f in fixes:
        same = groups[_fix_key(f)]
        r = FixResult(f, before=sum(before_counts.get(index_of[id(x)], 0) for x in same),
                      after=sum(after_counts.get(index_of[id(x)], 0) for x in same))
        reached = [k for k, run in before.items() if any(_reached(run, x) for x in same)]
        r.outputs = [(f"#{k[0]} {k[1]}", after[k].compare or {}) for k in reached if k in after and k not in unstable]
        unknown = {"equal": "nondeterministic"}
        r.outputs += [(f"#{k[0]} {k[1]}", {"eager": unknown, "compiled": unknown}) for k in reached if k in unstable]
        failed = [after[k].error or before[k].error for k in reached if after[k].error or before[k].error]
        mine = [e for e in written_breaks if M.norm(e["file"]) == M.norm(f.path) and _in_edits(f, e["line"])]
        if id(f) not in ids:
            r.status, r.message = "error", "its edits overlap another fix's, or the result did not parse"
        elif not reached:
            r.status = "not-reached"
        elif failed:
            r.status, r.message = "error", failed[0]
        elif mine:
            r.status, r.message = "new-break", f"{mine[0]['gb_type']} at line {mine[0]['line']}"
        elif reached and all(k in unstable for k in reached):
            r.status, r.message = "error", "the original's outputs differ from run to run: not comparable"
        elif any(v.get(side, {}).get("equal") not in EQUAL + ("nondeterministic",) for _, v in r.outputs
                 for side in ("eager", "compiled")):
            r.status = "changed-output"
        elif r.before == 0 or r.after > 0:
            r.status = "no-effect"
        else:
            r.status = "proven"
        results.append(r)
    return results


def _fix_key(f: Finding) -> tuple:
    return (M.norm(f.path),) + tuple((e.content, e.span) for e in f.fix.edits)


def _reached(run: TargetRun, f: Finding) -> bool:
    lines = run.reached.get(M.norm(f.path), set())
    return any(row in lines for row in range(f.span.row, max(f.span.row, f.span.end_row) + 1))


def _in_edits(f: Finding, line: int) -> bool:
    return any(e.span.row <= line <= max(e.span.row, e.span.end_row) for e in f.fix.edits)


def _isolate(results, applied, copy, runs, keys, files, report) -> None:
    """A run that reached several fixes changed its outputs: run each of those fixes alone."""
    changed = [r for r in results if r.status == "changed-output"]
    if not changed:
        return
    shared = {}
    for r in results:
        for k in keys:
            if _reached(runs.before[k], r.finding):
                shared.setdefault(k, []).append(r)
    suspects = [r for r in changed if any(len(shared.get(k, [])) > 1 for k in keys if r in shared.get(k, []))]
    touched = {M.norm(f.path) for f in applied}
    for r in suspects:
        restore(copy, touched)
        mine, maps = write_fixes(copy, [r.finding])
        own_keys = [k for k in keys if r in shared.get(k, [])]
        after = runs.run_after(copy, own_keys)
        alone = _judge(report, [r.finding], mine, maps, {k: runs.before[k] for k in own_keys}, after, files,
                       runs.unstable)[0]
        r.status, r.after, r.outputs, r.message = alone.status, alone.after, alone.outputs, alone.message
    restore(copy, touched)


def _time_proven(results, copy, runs, keys) -> None:
    """Time every eval run that reached a proven fix, the proven fixes applied; a run that got
    slower times each of its fixes alone, so `slower` names the fix that costs the time."""
    proven = [r for r in results if r.status == "proven"]
    if not proven:
        return
    touched = {M.norm(r.finding.path) for r in proven}
    for key in keys:
        mine = [r for r in proven if key[1] != "train" and _reached(runs.before[key], r.finding)]
        if not mine:
            continue
        restore(copy, touched)
        write_fixes(copy, [r.finding for r in proven])
        timing = runs.time(copy, key)
        if not timing.slower or len(mine) == 1:
            for r in mine:
                _timed(r, timing)
            continue
        for r in mine:
            restore(copy, touched)
            write_fixes(copy, [r.finding])
            _timed(r, runs.time(copy, key))
    restore(copy, touched)


def _timed(r: FixResult, timing) -> None:
    r.timings.append(timing)
    if timing.slower:
        r.status, r.message = "slower", timing.text()


# ---------------------------------------------------------------- --run


def _prove_command(report, fixes, files, copy, run_cmd, *, backend, timeout, memory_limit_mb, progress) -> Proof:
    from compilelint.verify import _roots, proc, runner
    from compilelint.verify.assemble import kind_of_code

    mem = memory_limit_mb or proc.default_memory_limit_mb()
    roots = _roots(report, kind_of_code)
    before = runner.run_command(list(run_cmd), roots, sorted(files), backend=backend, timeout=timeout,
                                memory_limit_mb=mem, progress=progress)

    def judged(subset):
        applied, maps = write_fixes(copy, subset)
        after = runner.run_command(list(run_cmd), {copy.to_copy(k): v for k, v in roots.items()},
                                   [copy.to_copy(f) for f in sorted(files)], backend=backend, timeout=timeout,
                                   memory_limit_mb=mem, progress=progress, pythonpath=copy.pythonpath,
                                   cwd=copy.to_copy(os.getcwd()))
        restore(copy, {M.norm(f.path) for f in applied})
        if before.runs and not after.runs:
            why = "no wrapped call ran from the fixed copy (the command imports the code from elsewhere)"
            return [FixResult(f, "error", message=why) for f in subset], after
        return _command_results(report, subset, applied, maps, before, after, copy, files), after

    results, after = judged(fixes)
    if len(fixes) > 1 and any(r.status == "changed-output" for r in results):
        # The command fails with all of them: run it once per fix to name the one(s) to blame.
        results = [judged([f])[0][0] for f in fixes]
    return Proof(results, sum(_breaks(r.events) for r in before.runs),
                 sum(_breaks(r.events) for r in after.runs), error=before.error)


def _command_results(report, fixes, applied, maps, before, after, copy, files) -> List[FixResult]:
    same = {"equal": "bitwise" if before.command == after.command and not after.error else "differs",
            "what": f"the command {before.command} before, {after.command} after", "max_abs": None}
    as_runs = {}
    for n, run in enumerate(before.runs):
        t = TargetRun(index=n, mode="call", events=run.events, reached=run.reached or {}, error=run.error)
        as_runs[(n, "call")] = t
    after_runs = {}
    events_after = [dict(e, file=copy.to_original(e["file"]),
                         stack=[[copy.to_original(f), ln, nm] for f, ln, nm in e.get("stack", [])])
                    for run in after.runs for e in run.events]
    # The command's calls need not line up one to one: all after-events count against every call.
    for k in as_runs:
        after_runs[k] = TargetRun(index=k[0], mode="call", events=events_after if k == (0, "call") else [],
                                  compare={"eager": same, "compiled": same}, error=after.error)
    return _judge(report, fixes, applied, maps, as_runs, after_runs, files)


# ---------------------------------------------------------------- writing proven fixes


def write_proven(results: Sequence[FixResult]) -> List[str]:
    """Write the proven fixes to the user's files; the paths written."""
    by_file: Dict[str, List[Finding]] = {}
    for r in results:
        if r.status == "proven":
            by_file.setdefault(r.finding.path, []).append(r.finding)
    written = []
    for path, todo in by_file.items():
        source = _read(path)
        text, done = apply_fixes(source.text, todo)
        if done and _parses(text, path) is None:
            atomic_write(path, encode(source, text))
            written.append(path)
    return written


# ---------------------------------------------------------------- text


def _verdict(v: dict) -> str:
    eq = v.get("equal") or "not compared"
    if eq == "allclose":
        return f"allclose (max |Δ| {v['max_abs']:.3g}, rtol {v['rtol']:g}, atol {v['atol']:g})"
    if eq in ("differs", "mismatch"):
        extra = f", max |Δ| {v['max_abs']:.3g}" if v.get("max_abs") is not None else ""
        tol = f", rtol {v['rtol']:g}, atol {v['atol']:g}" if v.get("rtol") is not None else ""
        return f"{eq} ({v.get('what', '')}{extra}{tol})"
    return eq + (f" ({v['zero_grads']} gradients zero instead of None)" if v.get("zero_grads") else "")


def proof_dict(r: FixResult) -> dict:
    """One fix's verdict as data (JSON's `fix_proof`, SARIF's `properties.fix_proof`)."""
    return {"status": r.status, "breaks": [r.before, r.after], "message": r.message,
            "outputs": [{"run": label, "eager": v.get("eager"), "compiled": v.get("compiled")} for label, v in r.outputs],
            "timing": [t.as_dict() for t in r.timings]}


def render_as(proof: Proof, fmt: str, torch_version: str) -> str:
    """The verdicts in a machine format: `json` (an object: the fixes' findings, each with its
    `fix_proof`, and the breaks of every run before and after), or any report format (SARIF...),
    where each finding carries its `fix_proof` as a property."""
    import json

    from compilelint.report import render as render_report
    from compilelint.report.json_output import finding_dicts
    from compilelint.report.sarif import sarif_log

    ordered = sorted(proof.results, key=lambda x: x.finding.sort_key)
    report = Report(findings=[r.finding for r in ordered])
    if fmt == "json":
        fixes = [dict(d, fix_proof=proof_dict(r)) for d, r in zip(finding_dicts(report, torch_version), ordered)]
        data = {"fixes": fixes, "breaks_before": proof.breaks_before, "breaks_after": proof.breaks_after,
                "error": proof.error}
        return json.dumps(data, indent=2, ensure_ascii=False, default=str) + "\n"
    if fmt == "sarif":
        log = sarif_log(report, torch_version)
        for result, r in zip(log["runs"][0]["results"], ordered):
            result.setdefault("properties", {})["fix_proof"] = proof_dict(r)
        return json.dumps(log, indent=2, ensure_ascii=False, default=str) + "\n"
    report = Report(findings=[r.finding.with_(verification=dict(proof_dict(r), status=r.status)) for r in ordered])
    return render_report(report, fmt, torch_version=torch_version)


def render(proof: Proof, cwd: Optional[str] = None) -> str:
    cwd = cwd or os.getcwd()
    lines = []
    for r in sorted(proof.results, key=lambda x: x.finding.sort_key):
        f = r.finding
        path = os.path.relpath(f.path, cwd) if os.path.isabs(f.path) else f.path
        head = f"{path}:{f.span.row}:{f.span.col}: {f.code} {r.status}: {r.before} breaks → {r.after}"
        if r.message:
            head += f"; {r.message}"
        lines.append(head)
        for label, v in r.outputs:
            lines.append(f"    {label}: eager {_verdict(v.get('eager') or {})}; "
                         f"compiled {_verdict(v.get('compiled') or {})}")
        lines += [f"    {t.text()}" for t in r.timings if not (r.status == "slower" and t.text() == r.message)]
        lines.append(f"    fix ({f.fix.applicability}): {f.fix.message}")
    counts = {s: sum(r.status == s for r in proof.results) for s in STATUSES}
    lines.append("verify --fix: " + ", ".join(f"{n} {s}" for s, n in counts.items())
                 + f"; breaks {proof.breaks_before} → {proof.breaks_after}")
    return "\n".join(lines) + "\n"
