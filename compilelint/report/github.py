"""`--output-format github`: GitHub Actions workflow commands, shown as annotations on the pull request.

`::error title=compilelint (CL101),file=model.py,line=3,col=12,endLine=3,endColumn=20::CL101 message`
"""
from __future__ import annotations

from compilelint.hidden import hidden_suffix

from .location import cell_of


def escape_data(text: str) -> str:
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def escape_property(text: str) -> str:
    return escape_data(text).replace(":", "%3A").replace(",", "%2C")


def finding_line(finding) -> str:
    span = finding.span
    cell, row, end_row = cell_of(finding)
    props = {
        "title": f"compilelint ({finding.code})" + (f" cell {cell}" if cell else ""),
        "file": finding.path,
        "line": row,
        "col": span.col,
        "endLine": end_row,
        "endColumn": span.end_col,
    }
    command = {"warning": "warning", "info": "notice"}.get(finding.severity, "error")
    joined = ",".join(f"{key}={escape_property(str(value))}" for key, value in props.items())
    return f"::{command} {joined}::{escape_data(f'{finding.code} {finding.message}{hidden_suffix(finding)}')}"


def error_line(error) -> str:
    return f"::error title=compilelint,file={escape_property(error.path)}::{escape_data(error.message)}"


def render(report, **_) -> str:
    lines = [finding_line(f) for f in report.findings] + [error_line(e) for e in report.errors]
    return "".join(line + "\n" for line in lines)
