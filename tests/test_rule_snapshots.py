"""Snapshots per rule, in the style of Ruff's: for each example of a rule (its `INVALID` and `VALID`
code, the rule's own fixture), what `check --select CODE` reports (`row:col: CODE [*] message`, so
INVALID examples are checked by row, column and message) and the diff each fix makes (unsafe ones
included). Stored in tests/__snapshots__/test_rule_snapshots.ambr; after an intended change,
regenerate with `python -m pytest tests/test_rule_snapshots.py --snapshot-update` and review the diff.
"""
import difflib
import textwrap

import pytest

from compilelint.edits import apply_fixes
from compilelint.rule import registry

from helpers import check_source

RULES = sorted(code for code, rule in registry().items() if rule.INVALID or rule.VALID)


def rule_output(code: str) -> str:
    rule = registry()[code]
    select = [code] if rule.noqa_applies else ["ALL"]
    parts = []
    for kind, examples in (("INVALID", rule.INVALID), ("VALID", rule.VALID)):
        for i, example in enumerate(examples):
            text = textwrap.dedent(example)
            report = check_source(text, select=select)
            assert not report.errors, report.errors
            lines = [f"## {kind}[{i}]"]
            for f in report.findings:
                if f.code != code:
                    continue
                star = " [*]" if f.fix is not None else ""
                lines.append(f"{f.span.row}:{f.span.col}: {f.code}{star} {f.message}")
                if f.fix is not None:
                    fixed, applied = apply_fixes(text, [f])
                    lines.append(f"  fix ({f.fix.applicability}): {f.fix.message}")
                    diff = difflib.unified_diff(text.splitlines(), fixed.splitlines(), "example.py", "example.py",
                                                n=1, lineterm="")
                    lines += ["  " + line for line in diff] if applied else ["  (not applicable)"]
            parts.append("\n".join(lines))
    return "\n\n".join(parts) + "\n"


@pytest.mark.parametrize("code", RULES)
def test_rule_snapshot(code, snapshot):
    assert rule_output(code) == snapshot
