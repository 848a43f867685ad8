"""`--output-format concise`: `path:row:col: CODE [*] message`, one line per finding, then the summary."""
from __future__ import annotations

from compilelint.hidden import hidden_suffix

from ._style import Style
from .location import where
from .summary import is_fixable, summary_lines

_STATUS_COLOR = {"confirmed": "red", "not reproduced": "yellow", "not reached": "dim", "missed": "red"}


def verification_tag(finding, style: Style) -> str:
    """` [confirmed]`, ` [not reproduced]`, ` [error: why]`…: what `compilelint verify` found, when it ran."""
    verification = finding.verification or {}
    status = verification.get("status")
    if not status:
        return ""
    reason = verification.get("message") if status == "error" else ""
    label = f"[{status}: {reason}]" if reason else f"[{status}]"
    return " " + style(label, _STATUS_COLOR.get(status, "bold"))


def finding_line(finding, *, unsafe_fixes: bool, style: Style) -> str:
    colon = style(":", "cyan")
    place = colon.join([style(finding.path, "bold")] + where(finding, with_path=False).split(":"))
    where_ = f"{place}{colon}"
    star = f" [{style('*', 'cyan')}]" if is_fixable(finding.fix, unsafe_fixes) else ""
    code = style(finding.code, "red", "bold")
    return f"{where_} {code}{star} {finding.message}{hidden_suffix(finding)}{verification_tag(finding, style)}"


def render(report, *, unsafe_fixes: bool = False, color: bool = False, **_) -> str:
    style = Style(color)
    out = [finding_line(f, unsafe_fixes=unsafe_fixes, style=style) for f in report.findings]
    if out:
        out.append("")
    out += summary_lines(report, unsafe_fixes=unsafe_fixes, style=style)
    return "\n".join(out) + "\n"
