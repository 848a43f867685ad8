"""verify --fix's verdicts as text (one line a fix, its runs' output comparisons and timings) and
in the machine formats (JSON, SARIF and every report format, each finding with its `fix_proof`)."""
from __future__ import annotations

import os
from typing import Optional

from compilelint.finding import Report
from compilelint.verify.fix_judge import STATUSES, FixResult
from compilelint.verify.prove import verdict_text


def proof_dict(r: FixResult) -> dict:
    """One fix's verdict as data (JSON's `fix_proof`, SARIF's `properties.fix_proof`)."""
    return {"status": r.status, "breaks": [r.before, r.after], "message": r.message,
            "outputs": [{"run": label, "eager": v.get("eager"), "compiled": v.get("compiled")} for label, v in r.outputs],
            "timing": [t.as_dict() for t in r.timings]}


def render_as(proof, fmt: str, torch_version: str) -> str:
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


def render(proof, cwd: Optional[str] = None) -> str:
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
            lines.append(f"    {label}: eager {verdict_text(v.get('eager') or {})}; "
                         f"compiled {verdict_text(v.get('compiled') or {})}")
        lines += [f"    {t.text()}" for t in r.timings if not (r.status == "slower" and t.text() == r.message)]
        lines.append(f"    fix ({f.fix.applicability}): {f.fix.message}")
    counts = {s: sum(r.status == s for r in proof.results) for s in STATUSES}
    lines.append("verify --fix: " + ", ".join(f"{n} {s}" for s, n in counts.items())
                 + f"; breaks {proof.breaks_before} → {proof.breaks_after}")
    return "\n".join(lines) + "\n"
