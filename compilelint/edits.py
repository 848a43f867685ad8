"""The one edit applier: `check --fix`, `--diff` and the `full` format's fix preview all apply
fixes here, so what `full` shows is what `--fix` writes."""
from __future__ import annotations

from typing import List, Tuple

from compilelint.file_text import FileText
from compilelint.finding import Finding


def apply_fixes(text: str, findings: List[Finding]) -> Tuple[str, List[Finding]]:
    """Apply every fix (atomically: all its edits or none) that doesn't overlap an earlier one.

    Fixes are taken in position order; an edit identical to one already taken (two fixes adding the
    same `import torch`) is shared, not a conflict. Returns the new text and the findings fixed.
    """
    ft = FileText(text)
    taken: List[Tuple[int, int, str]] = []
    applied = []

    def offsets(x):
        return [(ft.offset(e.span.row, e.span.col), ft.offset(e.span.end_row, e.span.end_col), e.content)
                for e in x.fix.edits]

    def first(x):
        edits = offsets(x)
        return (min((s for s, _, _ in edits), default=0), x.span.row, x.span.col, x.code)

    for x in sorted(findings, key=first):
        edits = [e for e in offsets(x) if e not in taken]
        if any(e[1] < e[0] for e in edits):
            continue
        if any(_conflict(e, t) for e in edits for t in taken) or any(
                _conflict(a, b) for i, a in enumerate(edits) for b in edits[i + 1:]):
            continue
        taken.extend(edits)
        applied.append(x)
    out, pos = [], 0
    for start, end, content in sorted(taken, key=lambda e: (e[0], e[1])):
        out += [text[pos:start], content]
        pos = end
    out.append(text[pos:])
    return "".join(out), applied


def _conflict(a, b) -> bool:
    (s1, e1, _), (s2, e2, _) = a, b
    return s1 == s2 or (s1 < e2 and s2 < e1)
