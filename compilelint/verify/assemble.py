"""Turn what the runs observed into a verdict per finding, plus findings for what no rule predicted.

Precedence, per finding: confirmed (an event matched it in any run) > not-reproduced (a run that
compiled cleanly executed its line) > error (the run that reached it, or its function's run, failed;
or nothing could run at all) > not-reached.
"""
from __future__ import annotations

import os
from dataclasses import replace
from typing import Callable, Dict, List, Tuple

from compilelint.finding import Report
from compilelint.verify import match as M
from compilelint.verify.missed import display_path, missed_finding
from compilelint.verify.runner import Outcome, Run


def assemble(report: Report, outcome: Outcome, *, files: set, backend: str, device: str,
             kind_of: Callable[[str], str], gb_types_of: Callable[[object], Tuple[str, ...]]) -> Report:
    cwd = os.getcwd()
    index = M.FunctionIndex()
    common = {"torch": outcome.torch, "device": outcome.device or device, "backend": backend}
    targets = [M.Target(index=i, code=f.code, kind=kind_of(f.code), file=M.norm(f.path), row=f.span.row,
                        end_row=max(f.span.row, f.span.end_row), gb_types=gb_types_of(f), col=f.span.col,
                        end_col=f.span.end_col)
               for i, f in enumerate(report.findings)]
    checkable = [t for t in targets if t.kind in ("break", "recompile")]

    missed: Dict[tuple, dict] = {}
    for run in outcome.runs:
        for ev in M.match(checkable, run.events, files, index):
            missed.setdefault((ev["event"], ev["file"], ev["line"], ev["gb_type"]), ev)

    findings = []
    for f, t in zip(report.findings, targets):
        findings.append(f.with_(verification=_verdict(f, t, outcome, index, common)))
    for ev in missed.values():
        fn = index.innermost(ev["file"], ev["line"])
        verification = dict(common, status="missed", gb_type=ev["gb_type"], event=ev["event"],
                            observed=f"{display_path(ev['file'], cwd)}:{ev['line']}", fullgraph="not-run",
                            message="")
        findings.append(missed_finding(ev, function=fn.qualname if fn else "", verification=verification, cwd=cwd))
    findings.sort(key=lambda x: x.sort_key)
    return replace(report, findings=findings)


def _verdict(f, t: M.Target, outcome: Outcome, index: M.FunctionIndex, common: dict) -> dict:
    v = dict(common, status="not-reached", gb_type="", observed="", event="", fullgraph="not-run", message="")
    if t.kind == "usage":
        v["status"] = "static-only"
        return v
    runs_here = [r for r in outcome.runs if _touches(r, t, index)]
    v["fullgraph"] = next((r.fullgraph for r in runs_here if r.fullgraph != "not-run"), "not-run")
    if t.events:
        ev = t.events[0]
        path = f.path if ev["file"] == t.file else display_path(ev["file"], os.getcwd())
        v.update(status="confirmed", gb_type=ev["gb_type"], event=ev["event"], observed=f"{path}:{ev['line']}")
        return v
    if any(not r.error and (M.reached(t, r.reached or {}, r.columns) or (r.reach_unknown and _in_entry(r, t, index)))
           for r in outcome.runs):
        v["status"] = "not-reproduced"
        return v
    # A run that failed where it entered the finding's function (a target raising in eager before
    # the line) is why the line was not reached: say so, with the reason.
    failed = [r for r in outcome.runs if r.error and (r in runs_here or _in_entry(r, t, index))]
    if failed or outcome.error:
        v.update(status="error", message=failed[0].error if failed else outcome.error)
    return v


def _in_entry(run: Run, t: M.Target, index: M.FunctionIndex) -> bool:
    return bool(run.entry) and M.same_function(index, M.norm(run.entry[0]), int(run.entry[1]), t)


def _touches(run: Run, t: M.Target, index: M.FunctionIndex) -> bool:
    """Did this run execute the finding's line, or (when it died before saying) enter its function?"""
    if run.reached is not None and M.reached(t, run.reached, run.columns):
        return True
    return (run.reached is None or run.reach_unknown) and _in_entry(run, t, index)


def kind_of_code(code: str) -> str:
    """The rule's kind from the registry; before a rule exists, its code family decides (CL4xx
    recompiles, CL5xx usage, the rest breaks)."""
    rule = _rule(code)
    if rule is not None:
        return rule.kind
    return {"CL4": "recompile", "CL5": "usage"}.get(code[:3], "break")


def gb_types_of(finding) -> Tuple[str, ...]:
    """The gb_type titles and the registry ids, of every measured torch version, the rule predicts."""
    rule = _rule(finding.code)
    titles = tuple(getattr(rule, "gb_types", ()) or ()) if rule is not None else ()
    ids = tuple(i for per_version in (getattr(rule, "gb_ids", None) or {}).values() for i in per_version)
    return titles + ids + ((finding.gb_type,) if finding.gb_type else ())


_RULES: List[dict] = []


def _rule(code: str):
    if not _RULES:
        try:
            from compilelint.rule import registry

            _RULES.append(registry())
        except Exception:  # the rules package is not importable (yet): fall back to code families
            _RULES.append({})
    return _RULES[0].get(code)
