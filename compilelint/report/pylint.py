"""`--output-format pylint`: `path:row: [CODE] message`, the line format pylint-reading tools parse."""
from __future__ import annotations

from compilelint.hidden import hidden_suffix

from .location import where


def render(report, **_) -> str:
    return "".join(f"{where(f, column=False)}: [{f.code}] {f.message}{hidden_suffix(f)}\n" for f in report.findings)
