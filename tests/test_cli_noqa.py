"""Suppression comments through the CLI: `# noqa`, `# noqa: CODES`, `# compilelint: noqa[: CODES]`,
`--ignore-noqa`, unused directives (CL900) and `--add-noqa`."""
import subprocess
import sys

import pytest

pytestmark = pytest.mark.slow  # end to end (CLI subprocesses, Dynamo runs, fuzzing): seconds a test

HEAD = "import torch\n\n@torch.compile\ndef f(x):\n"


def source(print_line="    print(x)", item_line="    return x.sum().item()", top=""):
    return top + HEAD + print_line + "\n" + item_line + "\n"


def codes(tmp_path, text, *args):
    (tmp_path / "m.py").write_text(text)
    r = subprocess.run([sys.executable, "-m", "compilelint", "check", "--no-cache", "-q", *args, "m.py"],
                       cwd=str(tmp_path), capture_output=True, text=True, timeout=120)
    assert r.returncode in (0, 1), r.stderr
    found = [(int(line.split(":")[1]), line.split()[1]) for line in r.stdout.splitlines()]
    assert r.returncode == (1 if found else 0)
    return found


BOTH = [(5, "CL201"), (6, "CL101")]


def test_no_suppression(tmp_path):
    assert codes(tmp_path, source()) == BOTH


@pytest.mark.parametrize("comment", ["# noqa", "#noqa", "# noqa: CL101", "# noqa: CL101,CL104", "# noqa:CL104, CL101",
                                     "# noqa: CL1", "# type: ignore  # noqa: CL101"])
def test_line_noqa_suppresses(tmp_path, comment):
    assert codes(tmp_path, source(item_line="    return x.sum().item()  " + comment)) == [(5, "CL201")]


@pytest.mark.parametrize("comment", ["# noqa: CL201", "# noqa: CL104", "# noqa: E501", "# no qa"])
def test_line_noqa_for_another_code_does_not(tmp_path, comment):
    assert codes(tmp_path, source(item_line="    return x.sum().item()  " + comment)) == BOTH


def test_upper_case_noqa(tmp_path):
    assert codes(tmp_path, source(item_line="    return x.sum().item()  # NOQA: CL101")) == [(5, "CL201")]


def test_file_level_noqa(tmp_path):
    assert codes(tmp_path, source(top="# compilelint: noqa\n")) == []
    assert codes(tmp_path, source(top="# compilelint: noqa: CL2\n")) == [(7, "CL101")]
    assert codes(tmp_path, source(top="# compilelint: noqa: CL101, CL201\n")) == []
    # `# noqa` alone on a line is a line directive (Ruff), not a file-level one
    assert codes(tmp_path, source(top="# noqa\n")) == [(6, "CL201"), (7, "CL101")]


def test_ignore_noqa(tmp_path):
    text = source(top="# compilelint: noqa: CL2\n", item_line="    return x.sum().item()  # noqa: CL101")
    assert codes(tmp_path, text) == []
    assert codes(tmp_path, text, "--ignore-noqa") == [(6, "CL201"), (7, "CL101")]


def test_unused_noqa_is_reported_with_cl900(tmp_path):
    text = source(print_line="    print(x)  # noqa: CL201", item_line="    return x.sum().item()  # noqa: CL104")
    assert codes(tmp_path, text) == [(6, "CL101")]  # off by default
    # sorted by column: the directive's finding sits at column 1
    assert codes(tmp_path, text, "--extend-select", "CL900") == [(6, "CL900"), (6, "CL101")]
    (tmp_path / "m.py").write_text(text)
    r = subprocess.run([sys.executable, "-m", "compilelint", "check", "--no-cache", "--extend-select", "CL900", "m.py"],
                       cwd=str(tmp_path), capture_output=True, text=True, timeout=120)
    assert "m.py:6:1: CL900 Unused `noqa` directive (unused: `CL104`)" in r.stdout
    # a directive that suppresses something is used; a non-CL code belongs to another linter
    used = source(print_line="    print(x)  # noqa: CL201, E501")
    assert codes(tmp_path, used, "--extend-select", "CL900") == [(6, "CL101")]
    # CL900 obeys selection like a rule
    assert codes(tmp_path, text, "--extend-select", "CL900", "--ignore", "CL900") == [(6, "CL101")]
    assert codes(tmp_path, text, "--select", "CL1,CL9", "--ignore", "CL9") == [(6, "CL101")]


def test_noqa_row_in_json(tmp_path):
    import json

    (tmp_path / "m.py").write_text(source())
    r = subprocess.run([sys.executable, "-m", "compilelint", "check", "--no-cache", "--output-format", "json", "m.py"],
                       cwd=str(tmp_path), capture_output=True, text=True, timeout=120)
    assert [d["noqa_row"] for d in json.loads(r.stdout)] == [5, 6]


def test_add_noqa_adopts_legacy_code(tmp_path):
    (tmp_path / "m.py").write_text(source())
    r = subprocess.run([sys.executable, "-m", "compilelint", "check", "--no-cache", "--add-noqa", "m.py"],
                       cwd=str(tmp_path), capture_output=True, text=True, timeout=120)
    assert r.returncode in (0, 1), r.stderr
    text = (tmp_path / "m.py").read_text()
    assert "# noqa: CL201" in text.splitlines()[4] and "# noqa: CL101" in text.splitlines()[5]
    assert codes(tmp_path, text) == []
    assert codes(tmp_path, text, "--extend-select", "CL900") == []  # every added directive is used
