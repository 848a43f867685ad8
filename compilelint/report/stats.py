"""`--statistics`: how many findings each rule produced, most frequent first, like `ruff --statistics`.

```
3	CL101	[*] tensor-item
1	CL201	[ ] print-call
```
"""
from __future__ import annotations

from collections import Counter

from ._rules import load_rules
from ._style import Style
from .summary import is_fixable


def render_statistics(report, *, color: bool = False, unsafe_fixes: bool = False) -> str:
    style, rules = Style(color), load_rules()
    counts = Counter(f.code for f in report.findings)
    if not counts:
        return ""
    fixable = {f.code for f in report.findings if is_fixable(f.fix, unsafe_fixes)}
    names = {}
    for f in report.findings:
        rule = rules.get(f.code)
        names.setdefault(f.code, rule.name if rule is not None and rule.name else f.name)
    rows = sorted(counts.items(), key=lambda item: (-item[1], item[0]))
    count_w = max(len(str(n)) for _, n in rows)
    code_w = max(len(code) for code, _ in rows)
    out = []
    for code, n in rows:
        marker = ("[*] " if code in fixable else "[ ] ") if fixable else ""
        out.append(f"{style(f'{n:>{count_w}}', 'bold')}\t{style(f'{code:<{code_w}}', 'red', 'bold')}\t"
                   f"{marker}{names[code]}")
    return "\n".join(out) + "\n"
