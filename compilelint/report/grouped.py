"""`--output-format grouped`: findings under their file's name, as `ruff --output-format grouped` does.

```
model.py:
  5:5 CL201 [*] `print()` graph-breaks (GB0059): ...
  6:12 CL101 `.item()` on a tensor graph-breaks (GB0124)
```
"""
from __future__ import annotations

from itertools import groupby

from compilelint.hidden import hidden_suffix

from ._style import Style
from .concise import verification_tag
from .location import where
from .summary import is_fixable, summary_lines


def render(report, *, unsafe_fixes: bool = False, color: bool = False, **_) -> str:
    style = Style(color)
    out = []
    for path, group in groupby(report.findings, key=lambda f: f.path):
        out.append(style(path, "bold") + style(":", "cyan"))
        for f in group:
            star = f" [{style('*', 'cyan')}]" if is_fixable(f.fix, unsafe_fixes) else ""
            out.append(f"  {where(f, with_path=False)} {style(f.code, 'red', 'bold')}{star} {f.message}"
                       f"{hidden_suffix(f)}{verification_tag(f, style)}")
        out.append("")
    out += summary_lines(report, unsafe_fixes=unsafe_fixes, style=style)
    return "\n".join(out) + "\n"
