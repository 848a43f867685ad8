"""Files that could not be checked, reported as findings in every output format (Ruff does the same
with E902 and invalid-syntax), so that JSON, SARIF or GitHub readers see them and `--exit-zero`
applies to them like to any finding:

- `CL001` `io-error`: the file can't be read as source (missing, a link leading nowhere, permission
  denied, a folder that can't be listed, binary, not valid in its encoding).
- `CL002` `syntax-error`: the file does not parse (at the row and column Python reports).

They are not rules: no selection, noqa or per-file-ignores turns them off, since a file that was
not checked can't be said to be clean. compilelint's own bugs ("internal error") stay errors.
"""
from __future__ import annotations

import re
from typing import List, Tuple

from compilelint.finding import FileError, Finding, Report, Span

IO_ERROR = ("CL001", "io-error")
SYNTAX_ERROR = ("CL002", "syntax-error")
CODES = {code: name for code, name in (IO_ERROR, SYNTAX_ERROR)}
_SYNTAX = ("syntax error", "cannot parse", "too deeply nested")
_WHERE = re.compile(r"^syntax error at line (\d+)(?:, column (\d+))?")


def as_finding(error: FileError) -> Finding:
    (code, name), row, col = IO_ERROR, 1, 1
    if error.message.startswith(_SYNTAX):
        code, name = SYNTAX_ERROR
        m = _WHERE.match(error.message)
        if m:
            row, col = int(m.group(1)), int(m.group(2) or 1)
    return Finding(code=code, name=name, message=error.message, path=error.path, span=Span(row, col, row, col),
                   function="", noqa_row=row)


def with_file_findings(report: Report) -> Tuple[Report, List[FileError]]:
    """The report with every unreadable or unparsable file as a finding (internal errors stay
    errors), and the errors so converted."""
    converted = [e for e in report.errors if not e.message.startswith("internal error")]
    if not converted:
        return report, []
    findings = sorted(list(report.findings) + [as_finding(e) for e in converted], key=lambda f: f.sort_key)
    remaining = [e for e in report.errors if e not in converted]
    out = Report(findings=findings, errors=remaining, files_checked=report.files_checked, fixed=report.fixed)
    for name, value in vars(report).items():  # what verify attached (its run's summary)
        if not hasattr(out, name):
            setattr(out, name, value)
    return out, converted
