"""Every rule's own examples are its tests: INVALID flags exactly the `# <-` lines, VALID nothing."""
import pytest

from compilelint.rule import registry

from helpers import check_source, marked_lines

CASES = [(code, "invalid", i, src) for code, r in registry().items() for i, src in enumerate(r.INVALID)]
CASES += [(code, "valid", i, src) for code, r in registry().items() for i, src in enumerate(r.VALID)]


def test_every_rule_has_examples():
    for code, rule in registry().items():
        if code in ("CL900",):
            continue
        assert rule.INVALID, f"{code} has no INVALID example"
        assert rule.VALID, f"{code} has no VALID example"


@pytest.mark.parametrize("code,kind,index,source", CASES, ids=[f"{c}-{k}-{i}" for c, k, i, _ in CASES])
def test_example(code, kind, index, source):
    report = check_source(source, select=[code])
    assert not report.errors, report.errors
    flagged = {f.span.row for f in report.findings if f.code == code}
    if kind == "invalid":
        assert flagged == marked_lines(source), f"{code} flagged {sorted(flagged)}"
    else:
        assert flagged == set(), f"{code} flagged lines {sorted(flagged)} of a VALID example"


def test_rule_metadata():
    for code, rule in registry().items():
        assert rule.name and rule.name == rule.name.lower() and " " not in rule.name
        assert rule.message
        assert rule.fix in ("none", "safe", "unsafe", "sometimes")
        assert rule.kind in ("break", "recompile", "usage")
        assert rule.url().startswith("https://")
        if code != "CL900":
            doc = rule.doc()
            for section in ("## What it does", "## Why is this bad?", "## Example", "## Use instead"):
                assert section in doc, f"{code} doc lacks {section}"
