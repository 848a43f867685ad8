"""`--output-format full`: each finding with a code frame, carets under the span, help, note and fix diff.

```
CL101 [*] `.item()` on a tensor breaks the graph
 --> model.py:3:12
  |
2 | def f(x):
3 |     return x.item()
  |            ^^^^^^^^
4 |
  |
help: Keep the value as a tensor.
```
"""
from __future__ import annotations

import difflib
from typing import List, Optional

from compilelint.edits import apply_fixes
from compilelint.hidden import hidden_note

from . import _text
from ._rules import help_text, load_rules
from ._style import Style
from .concise import verification_tag
from .location import where
from .summary import is_fixable, summary_lines


def _window(span, src: List[str]):
    """The rows shown: the span's, plus one line of context each side."""
    return max(1, span.row - 1), min(len(src), max(span.end_row, span.row) + 1)


def _frame(finding, src: List[str], style: Style) -> List[str]:
    span = finding.span
    if not 1 <= span.row <= len(src):
        return []
    first, last = _window(span, src)
    w = len(str(last))
    bar = style(f"{' ' * w} |", "blue")
    out = [bar]
    for n in range(first, last + 1):
        line = src[n - 1]
        out.append(f"{style(f'{n:>{w}} |', 'blue')} {line}".rstrip())
        if n == span.row:
            start = min(span.col - 1, len(line))
            stop = span.end_col - 1 if span.end_row == span.row else len(line)
            carets = "^" * max(1, _text.width(line[start:max(stop, start)]))
            out.append(f"{bar} {_text.pad_to(line[:start])}{style(carets, 'red', 'bold')}")
    out.append(bar)
    return out


def _fix(finding, source: Optional[str], unsafe_fixes: bool, style: Style, title: str) -> List[str]:
    fix = finding.fix
    applicability = fix.applicability
    if not is_fixable(fix, unsafe_fixes):
        applicability += ", enable with `--unsafe-fixes`"
    out = [f"{style('fix', 'bold', 'cyan')} ({applicability})" + (f": {title}" if title else "")]
    if source is None:
        for e in fix.edits:
            s = e.span
            out.append(f"  replace {s.row}:{s.col}-{s.end_row}:{s.end_col} with {e.content!r}")
        return out
    before, after = _text.lines(source), _text.lines(apply_fixes(source, [finding])[0])
    diff = difflib.unified_diff(before, after, finding.path, finding.path, n=1, lineterm="")
    return out + ["  " + style(line, *_diff_style(line)) for line in diff]


def _diff_style(line: str):
    if line.startswith(("---", "+++")):
        return ("bold",)
    return {"+": ("green",), "-": ("red",), "@": ("cyan",)}.get(line[:1], ())


def finding_block(finding, *, rule, source, unsafe_fixes: bool, style: Style) -> List[str]:
    star = f" [{style('*', 'cyan')}]" if is_fixable(finding.fix, unsafe_fixes) else ""
    out = [f"{style(finding.code, 'red', 'bold')}{star} {finding.message}{verification_tag(finding, style)}"]
    src = _text.lines(source) if source is not None else []
    frame = _frame(finding, src, style)
    gutter = len(str(_window(finding.span, src)[1])) if frame else 1  # the arrow lines up with the bars
    out.append(f"{' ' * gutter}{style('-->', 'blue')} {where(finding)}")
    out += frame
    advice = help_text(finding, rule)
    if advice:
        out.append(f"{style('help', 'bold', 'cyan')}: {advice}")
    if finding.region is not None:
        out.append(f"  = note: reached from {finding.region.root} via {finding.region.reason}")
        if finding.region.note():
            out.append(f"  = note: {finding.region.note()}")
    if finding.hidden:
        out.append(f"  = note: {hidden_note(finding)}")
    if finding.fix is not None:
        title = "" if advice == finding.fix.message else finding.fix.message  # said once is enough
        out += _fix(finding, source, unsafe_fixes, style, title)
    return out


def render(report, *, sources=None, unsafe_fixes: bool = False, color: bool = False, **_) -> str:
    style, rules, out, texts = Style(color), load_rules(), [], {}
    for finding in report.findings:
        if finding.path not in texts:  # read each file once, however many findings it has
            texts[finding.path] = _text.read_source(finding.path, sources)
        source = texts[finding.path]
        out += finding_block(finding, rule=rules.get(finding.code), source=source,
                             unsafe_fixes=unsafe_fixes, style=style)
        out.append("")
    out += summary_lines(report, unsafe_fixes=unsafe_fixes, style=style)
    return "\n".join(out) + "\n"
