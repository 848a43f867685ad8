"""verify --fix, step 5 of 6 (copy → run before → apply → run after → judge → write): each fix's
verdict from the runs before and after it.

Breaks are matched to findings (match.py) in both runs, the after-runs' lines mapped back to the
original numbering (a break on a line a fix wrote is a new break); outputs count as equal when the
run that reached the fix compared bitwise or allclose, and not at all when the original's differ
from run to run. Findings that carry the same fix (both breaks of one expert loop) are judged
together. The statuses: fixproof.py's docstring.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Dict, List, Sequence, Tuple

from compilelint.finding import Finding, Report
from compilelint.verify import match as M
from compilelint.verify.fix_after import After
from compilelint.verify.fix_before import reaches
from compilelint.verify.prove import EQUAL, TargetRun, verdict_text

STATUSES = ("proven", "changed-output", "new-break", "no-effect", "not-reached", "error", "slower")


@dataclass
class FixResult:
    finding: Finding
    status: str = "not-reached"
    before: int = 0  # breaks Dynamo reported at the finding, before
    after: int = 0
    outputs: List[Tuple[str, dict]] = field(default_factory=list)  # (run label, compare verdicts)
    message: str = ""
    timings: list = field(default_factory=list)  # fix_timing.Timing of the runs that reached it (eval)


def judge(report: Report, fixes: Sequence[Finding], applied: Sequence[Finding], maps: Dict[str, list],
          before: Dict[tuple, TargetRun], after: After, files, unstable=frozenset()) -> List[FixResult]:
    """One verdict per fix of `fixes` (`applied`: those the copy holds; `maps`: their files' line
    maps), from the original's runs `before` and the copy's `after`."""
    if after.refused:
        return [FixResult(f, "error", message=after.refused) for f in fixes]
    return _judge(report, fixes, applied, maps, before, after.runs, files, unstable)


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
        groups.setdefault(fix_key(f), []).append(f)
    results = []
    for f in fixes:
        same = groups[fix_key(f)]
        r = FixResult(f, before=sum(before_counts.get(index_of[id(x)], 0) for x in same),
                      after=sum(after_counts.get(index_of[id(x)], 0) for x in same))
        reached = [k for k, run in before.items() if any(reaches(run, x) for x in same)]
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
        elif changed := [f"{label} {side}: {verdict_text(v[side])}" for label, v in r.outputs
                         for side in ("eager", "compiled")
                         if v.get(side, {}).get("equal") not in EQUAL + ("nondeterministic",)]:
            r.status, r.message = "changed-output", changed[0]  # by how much: the user judges the tolerance
        elif r.before == 0 or r.after > 0:
            r.status = "no-effect"
        else:
            r.status = "proven"
        results.append(r)
    return results


def fix_key(f: Finding) -> tuple:
    """The same edits in the same file: one fix, whichever findings carry it."""
    return (M.norm(f.path),) + tuple((e.content, e.span) for e in f.fix.edits)


def _in_edits(f: Finding, line: int) -> bool:
    return any(e.span.row <= line <= max(e.span.row, e.span.end_row) for e in f.fix.edits)
