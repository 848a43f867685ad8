"""Never crash, never lose a line: bad input gets one line naming the file, the other files are
still checked, the exit status is 2 when the run is incomplete, and there is never a traceback
(only `--debug` prints one, and only for compilelint's own bugs).

The bad files are generated at test time (nothing binary or 5 MB is committed). Unreadable files:
the tests run as root, where `chmod 000` stops nothing, so those tests drop CAP_DAC_OVERRIDE and
CAP_DAC_READ_SEARCH with `setpriv` (skipped with a reason when it is missing or not permitted).
"""
import os
import re
import shutil
import subprocess
import sys
import time

import pytest

from compilelint.config import Settings
from compilelint.engine import check_paths
from compilelint.source import SourceFile, decode

from conftest import FIXTURES, ROOT

pytestmark = pytest.mark.slow  # end to end (CLI subprocesses, Dynamo runs, fuzzing): seconds a test

COMPILED_PRINT = "import torch\n\n@torch.compile\ndef f(x):\n    print(x)\n    return x\n"
ERROR_LINE = re.compile(r"^compilelint: error: (?P<path>.+?): (?P<why>.+)$")


def _env(**extra):
    env = {k: v for k, v in os.environ.items()
           if k not in ("NO_COLOR", "FORCE_COLOR", "COMPILELINT_OUTPUT_FORMAT", "COMPILELINT_DEBUG")}
    env.update(NO_COLOR="1", **extra)
    return env


def cli(args, cwd=None, input=None, timeout=120, prefix=(), cache_dir=None):
    cache = ["--cache-dir", str(cache_dir)] if cache_dir else ["--no-cache"]
    cmd = list(prefix) + [sys.executable, "-m", "compilelint", "check", *cache, "--isolated", *args]
    return subprocess.run(cmd, cwd=cwd or ROOT, capture_output=True, input=input, timeout=timeout, env=_env())


def error_lines(stderr: bytes):
    """{path: message} of the per-file error lines; asserts there is nothing else on stderr."""
    out = {}
    text = stderr.decode("utf-8", "replace")
    assert "Traceback" not in text, text
    for line in text.splitlines():
        m = ERROR_LINE.match(line)
        assert m, f"not a one-line file error: {line!r}\n{text}"
        assert m["path"] not in out, f"two errors for {m['path']}: {text}"
        out[m["path"]] = m["why"]
    return out


# ----- the bad-input zoo -----------------------------------------------------------------------------
def _deep_ifs(n):
    return "".join(" " * i + "if x:\n" for i in range(n)) + " " * n + "pass\n"


BAD_FILES = {
    # name: (bytes, a regex the one-line message must match)
    "syntax.py": (b"def f(:\n    pass\n", r"syntax error at line 1"),
    "python2.py": (b'print "hello"\nexec "x = 1"\n', r"syntax error at line 1, column \d+: Missing parentheses"),
    "pep695_type.py": (b"x = 1\ntype Vector = list[float]\n", r"syntax error at line 2.*Python 3\.12\+ syntax"),
    "pep695_def.py": (b"def first[T](xs: list[T]) -> T:\n    return xs[0]\n", r"line 1.*Python 3\.12\+ syntax"),
    "pep695_class.py": (b"class Box[T]:\n    item: T\n", r"line 1.*Python 3\.12\+ syntax"),
    "latin1_no_cookie.py": (b'x = "caf\xe9"\n', r"encoding"),
    "utf8_cookie_bad_bytes.py": (b'# -*- coding: utf-8 -*-\nx = "caf\xe9"\n', r"not valid utf-8"),
    "unknown_cookie.py": (b"# coding: klingon\nx = 1\n", r"unknown encoding: klingon"),
    "bom_and_latin1_cookie.py": (b"\xef\xbb\xbf# coding: latin-1\nx = 1\n", r"encoding"),
    "binary.py": (bytes(range(256)) * 40, r"binary file"),
    "nul_late.py": (b"x = 1\n" * 2000 + b"y = '\0'\n", r"null bytes|cannot parse|syntax error"),
    "parens1000.py": (b"x = " + b"(" * 1000 + b"1" + b")" * 1000 + b"\n", r"nested parentheses|too deeply nested"),
    "ifs1000.py": (_deep_ifs(1000).encode(), r"indentation|too deeply nested"),
    "sum100k.py": (b"x = " + b" + ".join([b"a"] * 100_000) + b"\n", r"too deeply nested"),
}
GOOD_FILES = {
    # name: (bytes, the rows CL201 (print) must be reported at)
    "empty.py": (b"", []),
    "only_comment.py": (b"# nothing here", []),
    "no_final_newline.py": (COMPILED_PRINT.rstrip("\n").encode(), [5]),
    "bom.py": (b"\xef\xbb\xbf" + COMPILED_PRINT.encode(), [5]),
    "crlf.py": (COMPILED_PRINT.replace("\n", "\r\n").encode(), [5]),
    "cr_only.py": (COMPILED_PRINT.replace("\n", "\r").encode(), [5]),
    "mixed_endings.py": (b"import torch\r\n\n@torch.compile\rdef f(x):\r\n    print(x)\n    return x\r", [5]),
    "latin1_cookie.py": (b'# -*- coding: latin-1 -*-\n# caf\xe9\n' + COMPILED_PRINT.encode(), [7]),
    "form_feed.py": (b"import torch\n\x0c\n@torch.compile\ndef f(x):\n    s = '\xe2\x80\xa8'\n    print(x)\n    return x\n",
                     [6]),
}


@pytest.fixture
def zoo(tmp_path):
    tree = tmp_path / "tree"
    tree.mkdir()
    for name, (data, _) in {**BAD_FILES, **GOOD_FILES}.items():
        (tree / name).write_bytes(data)
    (tree / "folder.py").mkdir()  # a directory named like a module: walked, not read
    (tree / "folder.py" / "inner.py").write_bytes(COMPILED_PRINT.encode())
    (tree / "loop").mkdir()
    os.symlink("..", tree / "loop" / "up")  # a directory symlink loop
    os.symlink("cycle_b.py", tree / "cycle_a.py")  # a file symlink loop
    os.symlink("cycle_a.py", tree / "cycle_b.py")
    os.mkfifo(tree / "fifo.py")  # reading it would block forever
    return tree


def test_bad_inputs_get_one_line_each_and_the_rest_is_checked(zoo):
    explicit = [str(zoo / n) for n in ("fifo.py", "cycle_a.py", "folder.py")] + [
        str(zoo / "empty.py" / "under_a_file.py"), str(zoo / "vanished.py")]
    r = cli([str(zoo), *explicit, "--output-format", "concise"], timeout=120)
    assert r.returncode == 2, r.stderr
    errors = error_lines(r.stderr)
    for name, (_, pattern) in BAD_FILES.items():
        assert re.search(pattern, errors.pop(str(zoo / name))), (name, r.stderr)
    assert "not a regular file" in errors.pop(str(zoo / "fifo.py"))
    assert "symbolic links" in errors.pop(str(zoo / "cycle_a.py"))
    assert errors.pop(str(zoo / "empty.py" / "under_a_file.py"))
    assert "no such file" in errors.pop(str(zoo / "vanished.py"))
    # found by walking, not named: a link loop is unreadable, reported rather than skipped (Ruff's E902)
    assert "symbolic links" in errors.pop(str(zoo / "cycle_b.py"))
    assert not errors, errors  # nothing else: the good files, the folder loop and the folder are fine
    found = {(m[1], int(m[2])) for m in re.finditer(rb"^(.+?):(\d+):\d+: CL201", r.stdout, re.M)}
    expected = {(str(zoo / n).encode(), row) for n, (_, rows) in GOOD_FILES.items() for row in rows}
    expected.add((str(zoo / "folder.py" / "inner.py").encode(), 5))
    assert found == expected, r.stdout.decode()


def test_bad_inputs_with_the_cache_on(zoo, tmp_path):
    """The cache (per-file and whole-run) is on by default: cold, warm and uncached runs agree."""
    odd = os.path.join(os.fsencode(zoo), b"caf\xe9.py")  # a file name that is not UTF-8
    with open(odd, "wb") as f:
        f.write(COMPILED_PRINT.encode())
    args = [str(zoo), "--output-format", "json"]
    runs = [cli(args, cache_dir=tmp_path / "cache"), cli(args, cache_dir=tmp_path / "cache"), cli(args)]
    for r in runs:
        assert r.returncode == 2 and b"Traceback" not in r.stderr and b"internal error" not in r.stderr, r.stderr
    assert runs[0].stdout == runs[1].stdout == runs[2].stdout
    assert runs[0].stderr == runs[1].stderr == runs[2].stderr
    assert b"caf" in runs[0].stdout
    out = tmp_path / "report.json"
    r = cli(args + ["-o", str(out)], cache_dir=tmp_path / "cache")
    assert r.returncode == 2 and b"internal error" not in r.stderr, r.stderr
    import json

    assert any("caf" in f["filename"] for f in json.loads(out.read_text(encoding="utf-8")))


def test_debug_prints_no_traceback_for_bad_input(zoo):
    r = cli([str(zoo / "syntax.py"), str(zoo / "binary.py"), str(zoo / "crlf.py"), "--debug"])
    assert r.returncode == 2
    assert set(error_lines(r.stderr)) == {str(zoo / "syntax.py"), str(zoo / "binary.py")}


def test_each_bad_file_alone_exits_2(tmp_path):
    for name in ("syntax.py", "binary.py", "pep695_type.py", "parens1000.py"):
        path = tmp_path / name
        path.write_bytes(BAD_FILES[name][0])
        # in-process engine: one error, no findings, nothing raised
        report = check_paths([str(path)], Settings(cache=False))
        assert [e.path for e in report.errors] == [str(path)] and not report.findings
    r = cli([str(tmp_path / "binary.py")])
    assert r.returncode == 2 and list(error_lines(r.stderr)) == [str(tmp_path / "binary.py")]


def test_stdin_binary_and_syntax_error():
    r = cli(["-", "--stdin-filename", "model.py"], input=b"\0\1\2garbage")
    assert r.returncode == 2 and error_lines(r.stderr) == {"model.py": "binary file, not Python source"}
    r = cli(["-", "--fix", "--stdin-filename", "model.py"], input=b"def f(:\n")
    assert r.returncode == 2 and "syntax error" in error_lines(r.stderr)["model.py"]
    assert r.stdout == b"def f(:\n"  # a fixer on stdin hands unparseable text back unchanged


# ----- internal errors: one line, the other files still checked, traceback only with --debug ---------
FAIL_ONE = """
import sys
import compilelint.analysis as analyze
real = analyze.analyze
def boom(path, *args, **kwargs):
    if path.endswith("boom.py"):
        raise KeyError("simulated bug")
    return real(path, *args, **kwargs)
analyze.analyze = boom
import compilelint.engine as engine
engine.analyze = boom
from compilelint.cli import main
sys.argv = ["compilelint", "check", "--no-cache", "--isolated", "-j", "1"] + sys.argv[1:]
main()
"""


def test_internal_error_is_one_line_and_the_others_are_checked(tmp_path):
    (tmp_path / "boom.py").write_text(COMPILED_PRINT)
    (tmp_path / "fine.py").write_text(COMPILED_PRINT)
    cmd = [sys.executable, "-c", FAIL_ONE, str(tmp_path)]
    r = subprocess.run(cmd, capture_output=True, cwd=ROOT, env=_env(), timeout=60)
    assert r.returncode == 2
    assert error_lines(r.stderr) == {str(tmp_path / "boom.py"): "internal error: KeyError: 'simulated bug'"}
    assert f"{tmp_path / 'fine.py'}:5:5: CL201".encode() in r.stdout
    r = subprocess.run(cmd + ["--debug"], capture_output=True, cwd=ROOT, env=_env(), timeout=60)
    assert r.returncode == 2 and b"Traceback" in r.stderr and b"simulated bug" in r.stderr
    assert f"{tmp_path / 'fine.py'}:5:5: CL201".encode() in r.stdout


def test_path_that_vanishes_mid_run(tmp_path, monkeypatch):
    import compilelint.engine as engine

    for name in ("a.py", "b.py", "c.py"):
        (tmp_path / name).write_text(COMPILED_PRINT)
    real = engine.discover

    def discover_then_delete(*args, **kwargs):
        found = real(*args, **kwargs)
        os.unlink(tmp_path / "b.py")  # gone between discovery and reading
        return found

    monkeypatch.setattr(engine, "discover", discover_then_delete)
    report = check_paths([str(tmp_path)], Settings(cache=False, jobs=1))
    assert [(e.path, e.message) for e in report.errors] == [
        (str(tmp_path / "b.py"), "no such file (it vanished during the run)")]
    assert sorted(os.path.basename(f.path) for f in report.findings) == ["a.py", "c.py"]
    assert report.files_checked == 3


# ----- columns are characters, 1-based; rows are what Python counts ----------------------------------
@pytest.mark.parametrize("prefix", ["", "s = 'é'; ", "s = '日本語'; ", "s = '🙂🙂'; ", "s = 'e\u0301'; ",
                                    "s = '\u2028\x0c'; "])
def test_columns_are_characters_on_non_ascii_lines(tmp_path, prefix):
    line = f"    {prefix}y = x.item() + 1  # é"
    src = f"import torch\n\n@torch.compile\ndef f(x):\n{line}\n    return y\n"
    path = tmp_path / "m.py"
    path.write_text(src, encoding="utf-8")
    report = check_paths([str(path)], Settings(cache=False))
    assert not report.errors
    [f] = [f for f in report.findings if f.code == "CL101"]
    start = line.index("x.item()") + 1
    assert (f.span.row, f.span.col, f.span.end_row, f.span.end_col) == (5, start, 5, start + len("x.item()"))
    assert line[f.span.col - 1:f.span.end_col - 1] == "x.item()"


def test_form_feed_and_unicode_line_separators_do_not_shift_rows(tmp_path):
    # str.splitlines() would split at \x0c, \x1c and U+2028: every later row (noqa, columns) would shift.
    src = ("import torch\n\x0c\n# \x1c \u2028 \x85\n@torch.compile\ndef f(x):\n"
           "    print(x)  # noqa: CL201\n    s = 'é'; y = x.item()\n    return y\n")
    path = tmp_path / "m.py"
    path.write_text(src, encoding="utf-8")
    report = check_paths([str(path)], Settings(cache=False))
    assert [(f.code, f.span.row, f.span.col) for f in report.findings] == [("CL101", 7, 18)]


def test_char_col_never_raises():
    source = decode("m.py", "x = 'é🙂'\n".encode())
    for byte_col in range(0, 20):
        assert 0 <= source.char_col(1, byte_col) <= len(source.lines[0])
    assert source.char_col(99, 3) == 3  # past the end: unchanged
    empty = SourceFile("e.py", "", "utf-8", "\n", False)
    assert empty.char_col(1, 0) == 0


# ----- a 5 MB generated file ---------------------------------------------------------------------------
def _five_megabytes() -> str:
    parts = [COMPILED_PRINT]
    catalogue = os.path.join(FIXTURES, "catalogue")
    models = [open(os.path.join(catalogue, n), encoding="utf-8").read()
              for n in sorted(os.listdir(catalogue)) if n.endswith(".py")]
    size, i = len(COMPILED_PRINT), 0
    while size < 5_000_000:
        if i % 4 == 0:  # real model code, renamed so definitions don't collide
            chunk = models[(i // 4) % len(models)].replace("def ", f"def g{i}_").replace("class ", f"class C{i}_")
        else:  # generated tables, the usual reason for a huge .py file
            chunk = f"TABLE_{i} = [\n" + "".join(f"    ({j}, {j * 0.5!r}, 'é{j}'),\n" for j in range(2000)) + "]\n"
        parts.append(chunk)
        size += len(chunk.encode())
        i += 1
    tail = "\n@torch.compile\ndef last(x):\n    print(x)\n    return x\n"
    return "".join(parts) + tail


def test_five_megabyte_file(tmp_path):
    text = _five_megabytes()
    path = tmp_path / "huge.py"
    path.write_text(text, encoding="utf-8")
    assert path.stat().st_size >= 5_000_000
    start = time.perf_counter()
    report = check_paths([str(path)], Settings(cache=False))
    took = time.perf_counter() - start
    assert not report.errors
    rows = {f.span.row for f in report.findings if f.code == "CL201"}
    last_print = text.count("\n") - 1  # `    print(x)` is the second-to-last line
    assert 5 in rows and last_print in rows, "a finding at the very start or the very end was lost"
    assert took < 60, f"5 MB took {took:.1f}s"


# ----- unreadable files (EACCES) -----------------------------------------------------------------------
def _unprivileged():
    """A command prefix under which chmod 000 denies access, or skip."""
    if os.geteuid() != 0:
        return []
    setpriv = shutil.which("setpriv")
    if not setpriv:
        pytest.skip("running as root and setpriv is missing: cannot provoke EACCES")
    prefix = [setpriv, "--inh-caps=-dac_override,-dac_read_search", "--bounding-set=-dac_override,-dac_read_search", "--"]
    probe = subprocess.run(prefix + ["true"], capture_output=True)
    if probe.returncode != 0:
        pytest.skip(f"running as root and cannot drop CAP_DAC_OVERRIDE: {probe.stderr.decode()[:200]}")
    return prefix


def test_unreadable_file_and_folder(tmp_path):
    prefix = _unprivileged()
    (tmp_path / "secret.py").write_text(COMPILED_PRINT)
    (tmp_path / "locked").mkdir()
    (tmp_path / "locked" / "inside.py").write_text(COMPILED_PRINT)
    (tmp_path / "fine.py").write_text(COMPILED_PRINT)
    os.chmod(tmp_path / "secret.py", 0)
    os.chmod(tmp_path / "locked", 0)
    try:
        for args in ([str(tmp_path)], [str(tmp_path / "secret.py"), str(tmp_path / "fine.py")]):
            r = cli(args, prefix=prefix)
            assert r.returncode == 2, r.stderr
            errors = error_lines(r.stderr)
            assert errors.pop(str(tmp_path / "secret.py")) == "permission denied"
            if args == [str(tmp_path)]:
                assert "Permission denied" in errors.pop(str(tmp_path / "locked"))
            assert not errors
            assert f"{tmp_path / 'fine.py'}:5:5: CL201".encode() in r.stdout
    finally:
        os.chmod(tmp_path / "locked", 0o755)
        os.chmod(tmp_path / "secret.py", 0o644)


def test_fix_in_read_only_folder_is_reported(tmp_path):
    prefix = _unprivileged()
    folder = tmp_path / "ro"
    folder.mkdir()
    path = folder / "m.py"
    src = "import torch\n\n@torch.compile\ndef f(x):\n    return x * x.sum().item()\n"
    path.write_text(src)
    os.chmod(folder, 0o555)  # the file is writable, the folder (where the temp file goes) is not
    try:
        r = cli([str(path), "--fix", "--unsafe-fixes"], prefix=prefix)
    finally:
        os.chmod(folder, 0o755)
    text = r.stderr.decode()
    assert "Traceback" not in text and "internal error" not in text
    assert f"{path}: not written: Permission denied" in text
    assert r.returncode == 1 and b"CL101" in r.stdout  # the finding stays: nothing was fixed
    assert path.read_text() == src
    assert os.listdir(folder) == ["m.py"]


def test_fix_permission_error_on_replace_is_reported(tmp_path, monkeypatch):
    """Read-only file systems, immutable files: os.replace raises; reported, not crashed on."""
    from click.testing import CliRunner

    import compilelint.fix_files as apply
    from compilelint.cli import main

    path = tmp_path / "m.py"
    src = "import torch\n\n@torch.compile\ndef f(x):\n    return x * x.sum().item()\n"
    path.write_text(src)

    def read_only(src_, dst):
        raise PermissionError(13, "Read-only file system", dst)

    monkeypatch.setattr(apply.os, "replace", read_only)
    result = CliRunner().invoke(main, ["check", "--no-cache", "--isolated", "--fix", "--unsafe-fixes", str(path)])
    assert result.exception is None or isinstance(result.exception, SystemExit), result.exception
    assert result.exit_code == 1, result.output
    assert "not written: Read-only file system" in result.output
    assert path.read_text() == src
    assert os.listdir(tmp_path) == ["m.py"], "the temporary file was left behind"


# ----- --fix killed mid-write: the old file or the new one, never a truncated one ---------------------
PAUSE = """
import os, sys, time
import compilelint.fix_files as apply
point = os.environ["PAUSE_AT"]
real_replace, real_fsync = os.replace, os.fsync
def say(what):
    sys.stderr.write(what + "\\n"); sys.stderr.flush(); time.sleep(60)
def fsync(fd):
    if point == "before-fsync": say("PAUSED")
    real_fsync(fd)
def replace(a, b):
    if point == "before-replace": say("PAUSED")
    real_replace(a, b)
    if point == "after-replace": say("PAUSED")
apply.os.fsync = fsync
apply.os.replace = replace
from compilelint.cli import main
sys.argv = ["compilelint", "check", "--no-cache", "--isolated", "--fix", "--unsafe-fixes", "-j", "1"] + sys.argv[1:]
main()
"""


def _fixable(n_functions: int) -> str:
    body = "".join(f"@torch.compile\ndef f{i}(x):\n    y = x * x.sum().item()\n    return y * 2\n\n\n"
                   for i in range(n_functions))
    return "import torch\n\n\n" + body


def _fixed_version(tmp_path, src: str) -> str:
    ref = tmp_path / "ref" / "m.py"
    ref.parent.mkdir()
    ref.write_text(src)
    cli([str(ref), "--fix", "--unsafe-fixes", "-j", "1"])
    fixed = ref.read_text()
    assert fixed != src
    return fixed


@pytest.mark.parametrize("point,expect", [("before-fsync", "old"), ("before-replace", "old"),
                                          ("after-replace", "new")])
def test_fix_killed_at_each_step_of_the_write(tmp_path, point, expect):
    src = _fixable(50)
    fixed = _fixed_version(tmp_path, src)
    work = tmp_path / "work"
    work.mkdir()
    path = work / "m.py"
    path.write_text(src)
    proc = subprocess.Popen([sys.executable, "-c", PAUSE, str(path)], cwd=ROOT, stderr=subprocess.PIPE,
                            stdout=subprocess.DEVNULL, env=_env(PAUSE_AT=point))
    try:
        assert proc.stderr.readline() == b"PAUSED\n"
    finally:
        proc.kill()
        proc.wait()
    assert path.read_text() == (src if expect == "old" else fixed)
    leftovers = [n for n in os.listdir(work) if n != "m.py"]
    assert all(n.endswith(".compilelint-tmp") for n in leftovers), leftovers  # only a temp file, if any


def test_fix_sigkilled_at_random_times_leaves_old_or_new(tmp_path):
    import random

    src = _fixable(300)  # 300 fixes; the deterministic test above covers each step of the write
    fixed = _fixed_version(tmp_path, src)
    work = tmp_path / "work"
    work.mkdir()
    path = work / "m.py"
    rng = random.Random(int(os.environ.get("COMPILELINT_KILL_SEED", "1234")))
    start = time.perf_counter()
    path.write_text(src)
    t0 = time.perf_counter()
    subprocess.run([sys.executable, "-m", "compilelint", "check", "--no-cache", "--isolated", "--fix",
                    "--unsafe-fixes", "-j", "1", str(path)], capture_output=True, cwd=ROOT, env=_env())
    full = time.perf_counter() - t0
    assert path.read_text() == fixed
    outcomes = {"old": 0, "new": 0}
    for _ in range(int(os.environ.get("COMPILELINT_KILL_RUNS", "10"))):
        path.write_text(src)
        proc = subprocess.Popen([sys.executable, "-m", "compilelint", "check", "--no-cache", "--isolated",
                                 "--fix", "--unsafe-fixes", "-j", "1", str(path)], cwd=ROOT, env=_env(),
                                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        time.sleep(rng.uniform(0.5, 1.1) * full)
        proc.kill()
        proc.wait()
        now = path.read_text()
        assert now in (src, fixed), "a killed --fix left a file that is neither the old nor the new one"
        outcomes["old" if now == src else "new"] += 1
        for n in os.listdir(work):
            if n != "m.py":
                os.unlink(work / n)
    assert sum(outcomes.values()) and time.perf_counter() - start < 120


# ----- project-level pathologies: long call chains, cycles, deep inheritance, import cycles -----------
def test_long_chains_and_cycles_across_the_project(tmp_path):
    n = 3000
    chain = "import torch\n\n@torch.compile\ndef f0(x):\n    return f1(x)\n" + "".join(
        f"def f{i}(x):\n    return f{i + 1}(x)\n" for i in range(1, n)) + f"def f{n}(x):\n    print(x)\n    return x\n"
    (tmp_path / "chain.py").write_text(chain)
    inherit = ("import torch\nfrom torch import nn\n\nclass C0(nn.Module):\n    def forward(self, x):\n"
               "        print(x)\n        return x\n" + "".join(f"class C{i}(C{i - 1}):\n    pass\n" for i in range(1, 2000))
               + "class A(B):\n    pass\nclass B(A):\n    pass\n")
    (tmp_path / "inherit.py").write_text(inherit)
    (tmp_path / "cycle.py").write_text("import torch\n@torch.compile\ndef f(x):\n    return g(x)\ndef g(x):\n    return f(x)\n")
    alias = ("import torch\na0 = torch\n" + "".join(f"a{i} = a{i - 1}\n" for i in range(1, 2000))
             + "@a1999.compile\ndef f(x):\n    print(x)\n    return x\n")
    (tmp_path / "alias.py").write_text(alias)
    pkg = tmp_path / "pkg"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    for i in range(100):
        deco = "@torch.compile\n" if i == 0 else ""
        (pkg / f"m{i}.py").write_text(f"import torch\nfrom pkg.m{i + 1} import g{i + 1}\n{deco}def g{i}(x):\n    return g{i + 1}(x)\n")
    (pkg / "m100.py").write_text("def g100(x):\n    print(x)\n    return x\n")
    (pkg / "cyc_a.py").write_text("from pkg.cyc_b import *\nfrom .cyc_b import X as Y\n")
    (pkg / "cyc_b.py").write_text("from pkg.cyc_a import *\nfrom .cyc_a import Y as X\n")
    for scope in ("modules", "all"):
        report = check_paths([str(tmp_path)], Settings(cache=False, select=["ALL"], scope=scope))
        assert not report.errors, report.errors
        found = {(os.path.relpath(f.path, tmp_path), f.span.row) for f in report.findings if f.code == "CL201"}
        assert {("chain.py", 2 * n + 5), ("inherit.py", 6), ("alias.py", 2004), (os.path.join("pkg", "m100.py"), 2)} <= found
