"""`--output-format gitlab`: a GitLab Code Quality report (a JSON list), shown on merge requests.

Each finding: `description`, `check_name` (the code), a `fingerprint` that stays the same while the
finding does (code, file, function, message: not the row, so an edit above does not make it "new"),
`severity` and `location.positions` (1-based lines and columns).
"""
from __future__ import annotations

import hashlib
import json
from collections import Counter

from compilelint.hidden import hidden_suffix

from .location import cell_of

_SEVERITY = {"error": "major", "warning": "minor"}


def _fingerprint(finding, nth: int) -> str:
    key = "\0".join((finding.code, finding.path, finding.function, finding.message, str(nth)))
    return hashlib.sha256(key.encode("utf-8", "surrogateescape")).hexdigest()[:32]


def render(report, **_) -> str:
    rows, seen = [], Counter()
    for f in report.findings:
        identity = (f.code, f.path, f.function, f.message)
        seen[identity] += 1
        cell, row, end_row = cell_of(f)
        description = f"{f.code} {f.message}{hidden_suffix(f)}" + (f" (cell {cell})" if cell else "")
        rows.append({
            "description": description,
            "check_name": f.code,
            "fingerprint": _fingerprint(f, seen[identity]),
            "severity": _SEVERITY.get(f.severity, "major"),
            "location": {"path": f.path, "positions": {"begin": {"line": row, "column": f.span.col},
                                                       "end": {"line": end_row, "column": f.span.end_col}}},
        })
    return json.dumps(rows, indent=2, ensure_ascii=False) + "\n"
