"""`--output-format json`: Ruff's JSON objects (code, name, message, filename, location…) plus ours.

Ours: `gb_type` (Dynamo's title for the break), `region` (how the function is reached from a compiled
root), `severity`, and `verification` (only once `compilelint verify` has run).
"""
from __future__ import annotations

import json

from compilelint.rule import DEFAULT_TORCH_VERSION

from ._rules import load_rules, rule_url
from .location import cell_of


def _location(row: int, col: int) -> dict:
    return {"row": row, "column": col}


def _fix(fix):
    if fix is None:
        return None
    edits = [
        {
            "content": e.content,
            "location": _location(e.span.row, e.span.col),
            "end_location": _location(e.span.end_row, e.span.end_col),
        }
        for e in fix.edits
    ]
    return {"applicability": fix.applicability, "message": fix.message, "edits": edits}


def finding_dict(finding, rule=None, torch_version: str = DEFAULT_TORCH_VERSION) -> dict:
    span, region = finding.span, finding.region
    cell, row, end_row = cell_of(finding)
    out = {
        "code": finding.code,
        "name": finding.name or (rule.name if rule is not None else ""),
        "message": finding.message,
        "filename": finding.path,
        "location": _location(row, span.col),
        "end_location": _location(end_row, span.end_col),
        "fix": _fix(finding.fix),
        "url": rule_url(finding, rule, torch_version),
        "noqa_row": finding.noqa_row,
        "gb_type": finding.gb_type,
        "region": None if region is None else {"root": region.root, "reason": region.reason, "mode": region.mode,
                                               "condition": region.condition},
        "severity": finding.severity,
    }
    if region is not None and region.hidden_by:  # behind a frame-skipping break at that row
        out["region"]["hidden_by"] = region.hidden_by
    if finding.hidden:  # the findings it hides, each whole (compilelint.hidden)
        rules = load_rules()
        out["hidden"] = [finding_dict(h, rules.get(h.code), torch_version) for h in finding.hidden]
    if finding.verification is not None:
        out["verification"] = finding.verification
    if cell:  # a notebook: rows are counted inside this cell (Ruff's `cell`)
        out["cell"] = cell
    return out


def finding_dicts(report, torch_version: str = DEFAULT_TORCH_VERSION):
    rules = load_rules()
    return [finding_dict(f, rules.get(f.code), torch_version) for f in report.findings]


def render(report, *, torch_version: str = DEFAULT_TORCH_VERSION, **_) -> str:
    return json.dumps(finding_dicts(report, torch_version), indent=2, ensure_ascii=False, default=str) + "\n"
