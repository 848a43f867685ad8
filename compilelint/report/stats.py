"""`--statistics`: how many findings each rule produced, most frequent first, like `ruff --statistics`.

```
3	CL101	[*] tensor-item
1	CL201	[ ] print
```
The third column says whether `--fix` (with `--unsafe-fixes` when given) would fix them. With
`--output-format json`: `[{"code", "name", "count", "fixable"}]`.
"""
from __future__ import annotations

import json
from collections import Counter

from ._rules import load_rules
from ._style import Style
from .summary import is_fixable


def statistics(report, unsafe_fixes: bool = False) -> list:
    rules = load_rules()
    counts = Counter(f.code for f in report.findings)
    fixable = {f.code for f in report.findings if is_fixable(f.fix, unsafe_fixes)}
    names = {}
    for f in report.findings:
        rule = rules.get(f.code)
        names.setdefault(f.code, rule.name if rule is not None and rule.name else f.name)
    rows = sorted(counts.items(), key=lambda item: (-item[1], item[0]))
    return [{"code": code, "name": names[code], "count": n, "fixable": code in fixable} for code, n in rows]


def render_statistics(report, *, color: bool = False, unsafe_fixes: bool = False, fmt: str = "text") -> str:
    rows = statistics(report, unsafe_fixes)
    if fmt in ("json", "json-lines"):
        return json.dumps(rows, indent=2) + "\n"
    if not rows:
        return ""
    style = Style(color)
    count_w = max(len(str(r["count"])) for r in rows)
    code_w = max(len(r["code"]) for r in rows)
    out = []
    for r in rows:
        marker = "[*] " if r["fixable"] else "[ ] "
        out.append(f"{style(str(r['count']).rjust(count_w), 'bold')}\t{style(r['code'].ljust(code_w), 'red', 'bold')}\t"
                   f"{marker}{r['name']}")
    return "\n".join(out) + "\n"
