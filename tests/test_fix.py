"""`check --fix`: golden files through the real CLI, idempotence, --diff, exit codes, permissions,
atomic writes, read-only files, --add-noqa, stdin, fixes in JSON output."""
import json
import os
import stat

import pytest

from compilelint.config import Settings
from compilelint.engine import check_paths
import compilelint.fix_files as fix_apply
from compilelint.fix_files import apply_fixes, run_fixes

from fix_helpers import FIX_DIR, MODES, cases, fix_args, prepare, run_cli


def _read(path):
    with open(path, "rb") as f:
        return f.read()


@pytest.mark.slow
@pytest.mark.parametrize("mode", list(MODES))
@pytest.mark.parametrize("case", cases())
def test_golden_and_idempotent(case, mode, tmp_path):
    path = prepare(case, str(tmp_path))
    mode_before = stat.S_IMODE(os.stat(path).st_mode)
    first = run_cli(fix_args(mode, case + ".py"), str(tmp_path), case)
    assert b"internal error" not in first.stderr, first.stderr
    assert b"Traceback" not in first.stderr, first.stderr
    expected = _read(os.path.join(FIX_DIR, f"{case}.{mode}.py"))
    assert _read(path) == expected, first.stderr.decode()
    assert stat.S_IMODE(os.stat(path).st_mode) == mode_before
    second = run_cli(fix_args(mode, case + ".py"), str(tmp_path), case)
    assert _read(path) == expected, "a second --fix run changed the file"
    assert b"fixed" not in second.stdout, second.stdout
    assert sorted(os.listdir(tmp_path)) == [case + ".py"], "temporary files left behind"
    if case == "readonly" and mode == "unsafe-fixed":
        assert b"read-only" in first.stderr
    if case == "noparse" and mode == "unsafe-fixed":
        assert b"skipped: result did not re-parse" in first.stderr


@pytest.mark.slow
def test_diff_writes_nothing(tmp_path):
    path = prepare("where_branch", str(tmp_path))
    before = _read(path)
    r = run_cli(["check", "--diff", "--unsafe-fixes", "--no-cache", "--isolated", "where_branch.py"], str(tmp_path))
    assert r.returncode == 1
    assert _read(path) == before
    out = r.stdout.decode()
    assert out.startswith("--- where_branch.py\n+++ where_branch.py\n")
    assert "+        out = torch.where(x.sum() > 0, x * 2, x - 1)" in out
    # Safe fixes only: where_branch has none, so no diff and exit 0.
    r = run_cli(["check", "--diff", "--no-cache", "--isolated", "where_branch.py"], str(tmp_path))
    assert r.returncode == 0 and b"+++" not in r.stdout
    assert _read(path) == before


@pytest.mark.slow
def test_exit_non_zero_on_fix(tmp_path):
    prepare("crlf", str(tmp_path))
    r = run_cli(["check", "--fix", "--unsafe-fixes", "--no-cache", "--isolated", "crlf.py"], str(tmp_path))
    assert r.returncode == 0, r.stdout  # everything fixed, nothing remains
    prepare("crlf", str(tmp_path))
    r = run_cli(["check", "--fix", "--unsafe-fixes", "--exit-non-zero-on-fix", "--no-cache", "--isolated", "crlf.py"],
                str(tmp_path))
    assert r.returncode == 1
    assert b"2 fixed" in r.stdout


@pytest.mark.slow
def test_permissions_kept(tmp_path):
    path = prepare("guard_calls", str(tmp_path))
    os.chmod(path, 0o640)
    run_cli(fix_args("unsafe-fixed", "guard_calls.py"), str(tmp_path))
    assert _read(path) == _read(os.path.join(FIX_DIR, "guard_calls.unsafe-fixed.py"))
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o640


def test_write_is_atomic(tmp_path, monkeypatch):
    path = prepare("item_arith", str(tmp_path))
    before = _read(path)
    calls = []

    def failing_replace(src, dst):
        calls.append((src, dst))
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(fix_apply.os, "replace", failing_replace)
    settings = Settings(cache=False)
    report = check_paths([path], settings)
    outcome = run_fixes(report, settings, unsafe=True, write=True, add_noqa=False, paths=[path])
    assert calls and os.path.dirname(calls[0][0]) == os.path.dirname(os.path.realpath(path))
    assert _read(path) == before
    assert os.listdir(tmp_path) == ["item_arith.py"], "the temporary file was not cleaned up"
    assert any("not written" in m for m in outcome.messages)
    assert outcome.report.fixed == 0
    assert [f.code for f in outcome.report.findings] == ["CL101"] * 4  # nothing claimed as fixed


@pytest.mark.slow
def test_stdin(tmp_path):
    source = _read(os.path.join(FIX_DIR, "overlapping.py"))
    r = run_cli(["check", "--fix", "--unsafe-fixes", "--no-cache", "--isolated", "--stdin-filename", "overlapping.py", "-"],
                str(tmp_path), input=source)
    assert r.stdout == _read(os.path.join(FIX_DIR, "overlapping.unsafe-fixed.py"))
    assert os.listdir(tmp_path) == []


@pytest.mark.slow
def test_json_carries_fixes_without_fix(tmp_path):
    prepare("item_arith", str(tmp_path))
    r = run_cli(["check", "--output-format", "json", "--no-cache", "--isolated", "item_arith.py"], str(tmp_path))
    data = json.loads(r.stdout)
    fixes = [d["fix"] for d in data if d["code"] == "CL101"]
    assert fixes[0]["applicability"] == "unsafe"
    assert fixes[0]["edits"] == [{"content": ".detach()", "location": {"row": 7, "column": 18},
                                  "end_location": {"row": 7, "column": 25}}]
    assert fixes[-1] is None  # `s = t.item()`: no fix offered


NOQA_SOURCE = '''import torch
from torch import nn


class M(nn.Module):
    def forward(self, x):
        print(x)
        y = x.sum().item() + 1  # noqa: CL999
        s = f"""{x.sum().item()}
        """
        if x.sum() > 0: print("both")
        return y
'''


@pytest.mark.slow
def test_add_noqa(tmp_path):
    path = tmp_path / "m.py"
    path.write_text(NOQA_SOURCE)
    r = run_cli(["check", "--add-noqa", "--no-cache", "--isolated", "m.py"], str(tmp_path))
    text = path.read_text()
    assert "        print(x)  # noqa: CL201\n" in text
    assert "# noqa: CL999, CL101\n" in text
    assert "        if x.sum() > 0: print(\"both\")  # noqa: CL104, CL201\n" in text
    assert 's = f"""{x.sum().item()}\n' in text  # inside a multi-line string: left alone, reported
    assert b"ends inside a string" in r.stderr
    again = run_cli(["check", "--no-cache", "--isolated", "m.py"], str(tmp_path))
    assert again.stdout.count(b"CL") == 1  # only the finding we could not noqa


def test_overlapping_fixes_take_rounds():
    # Two fixes whose edits overlap: the first (by position) goes in, the other waits.
    from compilelint.finding import Edit, Finding, Fix, Span

    def finding(col, end, content):
        return Finding("CL999", "x", "m", "p.py", Span(1, col, 1, end), "",
                       fix=Fix("safe", "m", (Edit(content, Span(1, col, 1, end)),)))

    a, b, c = finding(1, 4, "X"), finding(3, 6, "Y"), finding(6, 7, "Z")
    text, applied = apply_fixes("abcdefg\n", [b, c, a])
    assert text == "XdeZg\n" and applied == [a, c]


def test_shared_import_edit_is_not_a_conflict():
    from compilelint.finding import Edit, Finding, Fix, Span

    imp = Edit("import torch\n", Span(1, 1, 1, 1))
    f1 = Finding("CL201", "x", "m", "p.py", Span(2, 1, 2, 2), "",
                 fix=Fix("safe", "m", (imp, Edit("A", Span(2, 1, 2, 2)))))
    f2 = Finding("CL201", "x", "m", "p.py", Span(3, 1, 3, 2), "",
                 fix=Fix("safe", "m", (imp, Edit("B", Span(3, 1, 3, 2)))))
    text, applied = apply_fixes("x = 1\na\nb\n", [f1, f2])
    assert text == "import torch\nx = 1\nA\nB\n" and applied == [f1, f2]


def test_rule_fix_examples():
    """Each fixing rule's FIXES examples: (before, after with --unsafe-fixes)."""
    import tempfile
    import textwrap

    from compilelint.rule import registry

    seen = 0
    for code, rule in registry().items():
        for before, after in getattr(rule, "FIXES", []):
            seen += 1
            with tempfile.TemporaryDirectory() as tmp:
                path = os.path.join(tmp, "example.py")
                with open(path, "w") as f:
                    f.write(textwrap.dedent(before).lstrip("\n"))
                settings = Settings(cache=False, select=[code])
                report = check_paths([path], settings)
                run_fixes(report, settings, unsafe=True, write=True, add_noqa=False, paths=[path])
                with open(path) as f:
                    assert f.read() == textwrap.dedent(after).lstrip("\n"), code
    assert seen >= 8


def test_split_assert_keeps_crlf(tmp_path):
    path = tmp_path / "crlf_assert.py"
    path.write_bytes(b'import torch\r\n\r\n@torch.compile\r\ndef f(x, y):\r\n'
                     b'    assert x.sum() > 0 and y.sum() > 0, "bad"\r\n    return x\r\n')
    settings = Settings(cache=False, select=["CL104"])
    run_fixes(check_paths([str(path)], settings), settings, unsafe=False, write=True, add_noqa=False,
              paths=[str(path)])
    assert path.read_bytes() == (b'import torch\r\n\r\n@torch.compile\r\ndef f(x, y):\r\n'
                                 b'    assert x.sum() > 0, "bad"\r\n    assert y.sum() > 0, "bad"\r\n    return x\r\n')
