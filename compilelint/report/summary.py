"""The closing lines of the text formats, worded as Ruff words them."""
from __future__ import annotations

from typing import List

from compilelint.hidden import with_hidden

from ._style import Style


def is_fixable(fix, unsafe_fixes: bool) -> bool:
    """Whether `--fix` would apply this fix: safe ones always, unsafe ones with `--unsafe-fixes`."""
    return fix is not None and (fix.applicability == "safe" or unsafe_fixes)


def _s(n: int, plural: str = "s") -> str:
    return "" if n == 1 else plural


def summary_lines(report, *, unsafe_fixes: bool = False, style: Style = Style()) -> List[str]:
    remaining, fixed = len(report.findings), report.fixed
    if remaining == 0 and fixed == 0:
        if report.errors:  # nothing found, but not everything could be checked
            n = len(report.errors)
            return [f"No findings; {n} file{_s(n)} could not be checked."]
        return [style("All checks passed!", "green", "bold")]
    shown = getattr(report, "would_fix", 0)  # --diff: fixed in the diff, not in the file
    if fixed or shown:
        total = fixed + shown + remaining
        done = f"{fixed} fixed" if fixed else f"{shown} fixed by the diff above"
        out = [f"Found {total} error{_s(total)} ({done}, {remaining} remaining)."]
    else:
        out = [f"Found {remaining} error{_s(remaining)}."]
    fixes = [f.fix for f in with_hidden(report.findings) if f.fix is not None]  # --fix applies those too
    applicable = sum(is_fixable(fix, unsafe_fixes) for fix in fixes)
    hidden = len(fixes) - applicable
    star = f"[{style('*', 'cyan')}]"
    hint = f"{hidden} hidden fix{_s(hidden, 'es')} can be enabled with the `--unsafe-fixes` option"
    if hidden and applicable:
        out.append(f"{star} {applicable} fixable with the `--fix` option ({hint}).")
    elif hidden:
        out.append(f"No {'other ' if shown else ''}fixes available ({hint}).")
    elif applicable:
        out.append(f"{star} {applicable} fixable with the `--fix` option.")
    return out
