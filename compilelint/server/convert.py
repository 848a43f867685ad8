"""Findings, fixes and rules as LSP values.

Positions: findings count 1-based rows and 1-based character (code point) columns; LSP counts from 0
and, by default, in UTF-16 units. `Lines` does that conversion through pygls' codec for the
client's negotiated encoding, over the text the findings were computed from.
"""
from __future__ import annotations

import re
from typing import List, Optional, Sequence

from lsprotocol import types as lsp
from pygls.workspace.position_codec import PositionCodec, ServerTextPosition

from compilelint.finding import Finding, Fix, Span
from compilelint.hidden import hidden_note
from compilelint.source import lines_with_ends

SOURCE = "compilelint"
SEVERITY = {"error": lsp.DiagnosticSeverity.Error, "warning": lsp.DiagnosticSeverity.Warning}
# analyze_bytes' messages for a file that does not parse: "syntax error at line 12: ..."
_ERROR_LINE = re.compile(r"\bat line (\d+)\b")


class Lines:
    def __init__(self, text: str, codec: PositionCodec):
        self.lines: Sequence[str] = lines_with_ends(text)  # rows split as `ast` splits them
        self.codec = codec

    def position(self, row: int, col: int) -> lsp.Position:
        return self.codec.position_to_client_units(self.lines, ServerTextPosition(line=row - 1, character=col - 1))

    def range(self, span: Span) -> lsp.Range:
        return lsp.Range(start=self.position(span.row, span.col), end=self.position(span.end_row, span.end_col))


def diagnostic(finding: Finding, lines: Lines, root: Optional[lsp.Location], uri: str = "") -> lsp.Diagnostic:
    """Severity from the finding (rules that only recompile are warnings); the reach path, from the
    compiled root to the function the finding is in, as related information at that root; the path
    condition (`only when x.ndim == 3`), when there is one, as the message's second line; the
    breaks it hides (compilelint.hidden) as related information at their lines, and a line saying so."""
    related = []
    if finding.region is not None and root is not None:
        related.append(lsp.DiagnosticRelatedInformation(location=root, message=f"reached via {finding.region.reason}"))
    if uri:
        related += [lsp.DiagnosticRelatedInformation(location=lsp.Location(uri=uri, range=lines.range(h.span)),
                                                     message=f"{h.code} {h.message} (once this one is fixed)")
                    for h in finding.hidden]
    region_note = finding.region.note() if finding.region is not None else ""
    note = "\n".join(x for x in (region_note, hidden_note(finding)) if x)
    return lsp.Diagnostic(
        range=lines.range(finding.span),
        message=f"{finding.message}\n{note}" if note else finding.message,
        severity=SEVERITY.get(finding.severity, lsp.DiagnosticSeverity.Error),
        code=finding.code,
        code_description=lsp.CodeDescription(href=finding.url) if finding.url else None,
        source=SOURCE,
        related_information=related or None,
    )


def error_diagnostic(message: str) -> lsp.Diagnostic:
    """A file that cannot be analysed (a syntax error mid-edit): one diagnostic on the line named."""
    match = _ERROR_LINE.search(message)
    row = int(match.group(1)) - 1 if match else 0
    where = lsp.Range(start=lsp.Position(line=row, character=0), end=lsp.Position(line=row + 1, character=0))
    return lsp.Diagnostic(range=where, message=message, severity=lsp.DiagnosticSeverity.Error, source=SOURCE)


def code_action(finding: Finding, fix: Fix, uri: str, lines: Lines,
                diagnostic_: lsp.Diagnostic) -> lsp.CodeAction:
    """A quick fix titled by the fix's short title (editors cut long ones; the edit shows the rest);
    safe ones are preferred, unsafe ones say so in their title (they change what the code does
    outside torch.compile, which `check` applies only under `--unsafe-fixes`)."""
    safe = fix.applicability == "safe"
    edits = [lsp.TextEdit(range=lines.range(e.span), new_text=e.content) for e in fix.edits]
    return lsp.CodeAction(
        title=action_title(finding, fix), kind=lsp.CodeActionKind.QuickFix, diagnostics=[diagnostic_], is_preferred=safe,
        edit=lsp.WorkspaceEdit(changes={uri: edits}),
    )


def action_title(finding: Finding, fix: Fix) -> str:
    """`Pass `num_classes=8` (CL303)`, `Skip `print()` under torch.compile (CL201, unsafe)`."""
    return f"{fix.title or fix.message} ({finding.code}{'' if fix.applicability == 'safe' else ', unsafe'})"


def fix_note(finding: Finding) -> str:
    """The fix in full for the hover: `**Fix** (CL303, unsafe): Pass ... Eager change: ...`."""
    fix = finding.fix
    return f"**Fix** ({finding.code}{'' if fix.applicability == 'safe' else ', unsafe'}): {fix.message}"


def contains(span: Span, row: int, col: int) -> bool:
    """Whether the 1-based (row, col) lies in `span` (its end included: the cursor just after it)."""
    return (span.row, span.col) <= (row, col) <= (span.end_row, span.end_col)


def overlaps(span: Span, start: tuple, end: tuple) -> bool:
    return (span.row, span.col) <= end and start <= (span.end_row, span.end_col)


def hover(rule_pages: List[str]) -> lsp.Hover:
    return lsp.Hover(contents=lsp.MarkupContent(kind=lsp.MarkupKind.Markdown, value="\n\n---\n\n".join(rule_pages)))
