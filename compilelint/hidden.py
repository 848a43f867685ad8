"""Breaks Dynamo does not meet today, reported with the break that hides them.

A finding whose `region.hidden_by` names an earlier break of its function that Dynamo cannot resume
after (one inside a loop, or one of a `skips_frame` rule) runs eager until that break is fixed:
Dynamo reports one break for the frame (`TORCH_LOGS=graph_breaks`, `fullgraph=True`), and so do
the reports. The hidden findings ride on the finding that hides them (`Finding.hidden`), listed in
its note, its JSON and SARIF, and its editor diagnostic; one whose hider is not reported
(suppressed, not selected) stands alone. `--fix` runs on the findings before they are folded, so
their fixes are applied, and counted in the summary.
"""
from __future__ import annotations

import copy
from dataclasses import replace
from typing import Dict, List, Tuple


def folded(report):
    """The report with its hidden findings folded (what every output shows); a copy, so what a
    command hung on the report (verify's run details) stays."""
    out = copy.copy(report)
    out.findings = fold_hidden(report.findings)
    return out


def fold_hidden(findings: List) -> List:
    """The findings, each hidden one moved onto the finding that hides it (same file and
    function, at its `hidden_by` row; through a chain, onto the first), order kept. One that
    `verify` confirmed stands alone: Dynamo did meet it."""
    at: Dict[Tuple[str, str, int], object] = {}
    for f in findings:
        at.setdefault((f.path, f.function, f.span.row), f)

    def hider(f):
        seen = set()
        if (f.verification or {}).get("status") == "confirmed":
            return f
        while f.region is not None and f.region.hidden_by and id(f) not in seen:
            seen.add(id(f))
            up = at.get((f.path, f.function, f.region.hidden_by))
            if up is None or up is f:
                break
            f = up
        return f

    riders: Dict[int, list] = {}
    kept = []
    for f in findings:
        top = hider(f)
        if top is f:
            kept.append(f)
        else:
            riders.setdefault(id(top), []).append(f)
    if not riders:
        return list(findings)
    return [replace(f, hidden=f.hidden + tuple(riders[id(f)])) if id(f) in riders else f for f in kept]


def hidden_note(finding) -> str:
    """`Dynamo runs the rest of this function eager from here; 2 more breaks in it follow once this
    is fixed: line 833 (CL106), line 835 (CL106)`, or ""."""
    if not finding.hidden:
        return ""
    n = len(finding.hidden)
    lines = ", ".join(f"line {h.span.row} ({h.code})" for h in finding.hidden)
    more = "1 more break in it follows" if n == 1 else f"{n} more breaks in it follow"
    return f"Dynamo runs the rest of this function eager from here; {more} once this is fixed: {lines}"


def hidden_suffix(finding) -> str:
    """` (hides 2 more breaks of this function: lines 833, 835)`, or "": for one-line formats."""
    if not finding.hidden:
        return ""
    n = len(finding.hidden)
    rows = ", ".join(str(h.span.row) for h in finding.hidden)
    return f" (hides {n} more break{'s' if n > 1 else ''} of this function: line{'s' if n > 1 else ''} {rows})"


def with_hidden(findings) -> List:
    """Every finding, the hidden ones included (what fix counts read)."""
    out = []
    for f in findings:
        out.append(f)
        out.extend(f.hidden)
    return out
