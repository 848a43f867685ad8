"""What Ruff users expect of the command line (issue 16, point 9): configuration files and inline
overrides, the `--show-*` flags, `--fix-only`, `fixable`/`unfixable`, `version`, `rule --all`, the
grouped/gitlab/pylint formats, the `--add-noqa` count, `--statistics` as a table and as JSON."""
import json
import re

import pytest

from test_layout import COMPILED_PRINT, PRINT_ROW, run

# A fixable print (unsafe fix: a guard) and an `.item()` in a return, which has no fix.
MIXED = COMPILED_PRINT.replace("    return x", "    return x.sum().item()")


@pytest.fixture
def tree(write_tree):
    return write_tree({"m.py": MIXED, "pyproject.toml": "[tool.compilelint]\n"})


def findings(text):
    return [line for line in text.splitlines() if re.match(r"^\S+:\d+:\d+: CL", line)]


def test_config_key_value_overrides_a_setting(tree):
    r = run(tree, "check", ".", "--config", "ignore = ['CL201']")
    assert [line.split(" ")[1] for line in findings(r.stdout)] == ["CL101"], r.stdout + r.stderr
    r = run(tree, "check", ".", "--config", "not toml at all")
    assert r.returncode == 2 and "--config" in r.stderr and "Traceback" not in r.stderr


def test_config_file_named_explicitly_may_be_a_compilelint_toml(tree):
    (tree / "strict.toml").write_text('select = ["CL1"]\n')
    r = run(tree, "check", ".", "--config", "strict.toml")
    assert [line.split(" ")[1] for line in findings(r.stdout)] == ["CL101"], r.stdout + r.stderr


def test_show_settings_prints_the_resolved_settings_and_their_file(tree):
    (tree / "pyproject.toml").write_text('[tool.compilelint]\nignore = ["CL201"]\n')
    r = run(tree, "check", "m.py", "--show-settings")
    assert r.returncode == 0, r.stderr
    assert "Resolved settings for: m.py" in r.stdout
    assert f"Settings path: {tree / 'pyproject.toml'}" in r.stdout
    assert 'ignore = ["CL201"]' in r.stdout
    assert "CL101" not in findings(r.stdout)


def test_show_files_lists_what_would_be_checked(tree):
    (tree / "sub").mkdir()
    (tree / "sub" / "n.py").write_text("x = 1\n")
    (tree / "notes.txt").write_text("not python\n")
    r = run(tree, "check", ".", "--show-files")
    assert r.returncode == 0, r.stderr
    assert r.stdout.splitlines() == [str(tree / "m.py"), str(tree / "sub" / "n.py")]


def test_fix_only_applies_fixes_and_reports_nothing_else(tree):
    r = run(tree, "check", ".", "--fix-only", "--unsafe-fixes")
    assert r.returncode == 0, r.stdout + r.stderr
    assert not findings(r.stdout)
    assert "Fixed 1 error." in r.stdout
    assert "is_compiling()" in (tree / "m.py").read_text()


def test_show_fixes_lists_what_was_fixed(tree):
    r = run(tree, "check", ".", "--fix", "--unsafe-fixes", "--show-fixes")
    assert "Fixed 1 error:" in r.stdout, r.stdout
    assert "- m.py:" in r.stdout and "1 × CL201 (print)" in r.stdout
    assert "m.py:7:12: CL101" in r.stdout  # in the fixed file


def test_unfixable_keeps_a_rule_from_being_fixed(tree):
    (tree / "pyproject.toml").write_text('[tool.compilelint]\nunfixable = ["CL2"]\n')
    before = (tree / "m.py").read_text()
    r = run(tree, "check", ".", "--fix", "--unsafe-fixes")
    assert (tree / "m.py").read_text() == before
    assert f"m.py:{PRINT_ROW} " in r.stdout and "[*]" not in r.stdout, r.stdout
    (tree / "pyproject.toml").write_text('[tool.compilelint]\nfixable = ["CL101"]\n')
    run(tree, "check", ".", "--fix", "--unsafe-fixes")
    assert (tree / "m.py").read_text() == before


def test_version_subcommand_and_short_flag(tree):
    for args in (["version"], ["-V"], ["--version"]):
        r = run(tree, *args)
        assert r.returncode == 0 and r.stdout.startswith("compilelint 0."), (args, r.stdout, r.stderr)


def test_rule_all_prints_every_rule(tree):
    r = run(tree, "rule", "--all")
    assert r.returncode == 0, r.stderr
    assert "# print (CL201)" in r.stdout and "# tensor-item (CL101)" in r.stdout


@pytest.mark.parametrize("fmt,expected", [
    ("grouped", ["m.py:", "  5:5 CL201", "  6:12 CL101"]),
    ("pylint", ["m.py:5: [CL201] ", "m.py:6: [CL101] "]),
])
def test_grouped_and_pylint_formats(tree, fmt, expected):
    r = run(tree, "check", ".", "--output-format", fmt)
    assert r.returncode == 1, r.stderr
    lines = r.stdout.splitlines()
    for want in expected:
        assert any(line.startswith(want) for line in lines), (want, r.stdout)


def test_gitlab_format_is_a_code_quality_report(tree):
    r = run(tree, "check", ".", "--output-format", "gitlab")
    rows = json.loads(r.stdout)
    assert {row["check_name"] for row in rows} == {"CL201", "CL101"}
    row = next(row for row in rows if row["check_name"] == "CL201")
    assert row["location"] == {"path": "m.py", "positions": {"begin": {"line": 5, "column": 5},
                                                             "end": {"line": 5, "column": 13}}}
    assert row["severity"] == "major" and len(row["fingerprint"]) >= 16 and row["description"].startswith("CL201")
    assert len({r["fingerprint"] for r in rows}) == 2


def test_add_noqa_says_how_many_directives_it_added(tree):
    r = run(tree, "check", ".", "--add-noqa")
    assert "Added 2 noqa directives." in r.stderr, r.stderr
    assert r.returncode == 0


def test_statistics_has_a_fixable_column_and_a_json_form(tree):
    r = run(tree, "check", ".", "--statistics")
    assert r.stdout.splitlines() == ["1\tCL101\t[ ] tensor-item", "1\tCL201\t[ ] print"], r.stdout
    r = run(tree, "check", ".", "--statistics", "--unsafe-fixes")
    assert "1\tCL201\t[*] print" in r.stdout.splitlines()
    r = run(tree, "check", ".", "--statistics", "--output-format", "json")
    assert json.loads(r.stdout) == [
        {"code": "CL101", "name": "tensor-item", "count": 1, "fixable": False},
        {"code": "CL201", "name": "print", "count": 1, "fixable": False},
    ]


def test_rules_table_says_unsafe_for_fixes_that_need_unsafe_fixes(tree):
    r = run(tree, "rules")
    rows = {line.split()[0]: line for line in r.stdout.splitlines()[1:]}
    for code in ("CL101", "CL201", "CL401"):  # every fix they make is unsafe
        assert rows[code].split()[2] == "unsafe", rows[code]
    assert rows["CL104"].split()[2] == "safe/unsafe", rows["CL104"]  # `assert a and b` split: safe
    # CL106: @torch.compiler.disable on a NumPy planner is safe, assume_constant_result is not
    assert rows["CL106"].split()[2] == "safe/unsafe", rows["CL106"]
    assert rows["CL103"].split()[2] == "safe", rows["CL103"]  # @torch.compiler.disable keeps eager
    assert "sometimes" not in r.stdout
