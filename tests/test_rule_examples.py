"""Every rule's own examples are its tests: INVALID flags exactly the `# <-` lines, VALID nothing."""
import pytest

from compilelint.rule import registry

from helpers import check_source, marked_lines

CASES = [(code, "invalid", i, src) for code, r in registry().items() for i, src in enumerate(r.INVALID)]
CASES += [(code, "valid", i, src) for code, r in registry().items() for i, src in enumerate(r.VALID)]


def test_every_rule_has_examples():
    for code, rule in registry().items():
        if rule.verify_event:
            continue  # reported by `verify` only: nothing to flag statically
        assert rule.INVALID, f"{code} has no INVALID example"
        assert rule.VALID, f"{code} has no VALID example"


@pytest.mark.parametrize("code,kind,index,source", CASES, ids=[f"{c}-{k}-{i}" for c, k, i, _ in CASES])
def test_example(code, kind, index, source):
    # A rule that judges noqa comments needs the rules they name switched on.
    report = check_source(source, select=[code] if registry()[code].noqa_applies else ["ALL"])
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
        doc = rule.doc()
        for section in ("## What it does", "## Why is this bad?", "## Example", "## Use instead"):
            assert section in doc, f"{code} doc lacks {section}"
        # Ruff's "Fix safety": what a fix rewrites and what it changes, on every rule that has one
        assert ("## Fix safety" in doc) == (rule.fix != "none"), f"{code}: fix {rule.fix!r}, Fix safety section?"


@pytest.mark.parametrize("version", ["2.11", "2.13"])
def test_messages_take_gb_ids_from_the_version_table(version):
    import re

    for code, rule in registry().items():
        rendered = rule.render(rule.message, version)
        assert "{gb" not in rendered, f"{code}: {rendered}"
        if "torch 2." in rendered:
            continue  # names the version it speaks of
        mentioned = set(re.findall(r"GB\d{4}", rendered))
        assert mentioned <= set(rule.gb_ids.get(version, ())), f"{code} on {version}: {sorted(mentioned)}"


def test_torch_version_messages_and_links_agree():
    rule = registry()["CL207"]
    for version, gb in (("2.11", "GB0179"), ("2.13", "GB4198")):
        report = check_source(rule.INVALID[0], select=["CL207"], torch_version=version)
        assert report.findings
        for f in report.findings:
            assert gb in f.message and f.url.endswith(f"{gb.lower()}.html"), (version, f.message, f.url)
