"""The command line end to end, in subprocesses: exit codes, output formats, colour, stdin, files.

Every test runs `python -m compilelint` (or the `compilelint` script) the way a user or CI does.
"""
import json
import os
import pty
import subprocess
import sys
import xml.etree.ElementTree as ET

import pytest

from conftest import ROOT

pytestmark = pytest.mark.slow  # end to end (CLI subprocesses, Dynamo runs, fuzzing): seconds a test

BAD = """\
import torch

@torch.compile
def f(x):
    print(x)
    return x.sum().item()
"""
# The same code, not compiled by anything: nothing to report.
EAGER = BAD.replace("@torch.compile\n", "")
CLEAN = """\
import torch

@torch.compile
def f(x):
    return x.sum() * 2
"""
SCRIPT = os.path.join(os.path.dirname(sys.executable), "compilelint")


def _env(**extra):
    env = {k: v for k, v in os.environ.items()
           if k not in ("NO_COLOR", "FORCE_COLOR", "COMPILELINT_OUTPUT_FORMAT", "COMPILELINT_DEBUG")}
    env.update(extra)
    return env


def run(cwd, *args, stdin=None, env=None):
    """`python -m compilelint ARGS` in `cwd` (no cache, so every run analyses afresh)."""
    args = list(args)
    if args and args[0] == "check":
        args.insert(1, "--no-cache")
    return subprocess.run([sys.executable, "-m", "compilelint", *args], cwd=str(cwd), input=stdin,
                          capture_output=True, text=True, env=env or _env(), timeout=120)


@pytest.fixture
def tree(write_tree):
    return write_tree({"bad.py": BAD, "eager.py": EAGER, "clean.py": CLEAN})


# ----- exit codes ---------------------------------------------------------------------------------
def test_findings_exit_1_and_concise_lines(tree):
    r = run(tree, "check", "bad.py")
    assert r.returncode == 1, r.stderr
    lines = r.stdout.splitlines()
    assert lines[0].startswith("bad.py:5:5: CL201 `print()` graph-breaks (GB0059)"), r.stdout
    assert lines[1].startswith("bad.py:6:12: CL101 `.item()` on a tensor graph-breaks (GB0124)"), r.stdout
    assert lines[2] == "" and lines[3] == "Found 2 errors."
    assert r.stderr == ""


def test_clean_and_uncompiled_files_exit_0(tree):
    r = run(tree, "check", "clean.py", "eager.py")
    assert (r.returncode, r.stdout, r.stderr) == (0, "All checks passed!\n", "")


def test_directory_walk_finds_the_file(tree):
    r = run(tree, "check")
    assert r.returncode == 1
    assert "bad.py:6:12: CL101" in r.stdout and "eager.py" not in r.stdout


def test_exit_zero(tree):
    r = run(tree, "check", "--exit-zero", "bad.py")
    assert r.returncode == 0 and "CL101" in r.stdout


@pytest.mark.parametrize("args", [
    ["check", "--no-such-flag", "bad.py"],
    ["check", "--output-format", "xml", "bad.py"],
    ["check", "--select", "CL999", "bad.py"],
    ["rule", "CL999"],
    ["frobnicate"],
])
def test_usage_errors_exit_2(tree, args):
    r = run(tree, *args)
    assert r.returncode == 2, (r.stdout, r.stderr)
    assert r.stderr.strip() and "Traceback" not in r.stderr


def test_missing_path_exit_2_and_others_still_reported(tree):
    r = run(tree, "check", "nope.py", "bad.py")
    assert r.returncode == 2
    assert "compilelint: error: nope.py: no such file or directory" in r.stderr
    assert "bad.py:6:12: CL101" in r.stdout


def test_unparsable_and_non_utf8_files_exit_2_and_others_still_reported(tree):
    (tree / "broken.py").write_text("def f(:\n    pass\n")
    (tree / "latin.py").write_bytes(b"# caf\xe9\nimport torch\n")
    r = run(tree, "check", "broken.py", "latin.py", "bad.py")
    assert r.returncode == 2
    errors = [line for line in r.stderr.splitlines() if line.startswith("compilelint: error:")]
    assert len(errors) == 2, r.stderr
    assert errors[0].startswith("compilelint: error: broken.py: syntax error at line 1")
    assert errors[1].startswith("compilelint: error: latin.py:")
    assert "bad.py:6:12: CL101" in r.stdout and "Traceback" not in r.stderr


# ----- --quiet, --statistics, --output-file --------------------------------------------------------
def test_quiet_prints_findings_only(tree):
    r = run(tree, "check", "-q", "bad.py")
    assert r.returncode == 1
    lines = r.stdout.splitlines()
    assert [line.split(":")[0] for line in lines] == ["bad.py", "bad.py"], r.stdout
    assert "Found" not in r.stdout
    r = run(tree, "check", "--quiet", "clean.py")
    assert (r.returncode, r.stdout, r.stderr) == (0, "", "")


def test_quiet_full_keeps_the_code_frames(tree):
    r = run(tree, "check", "-q", "--output-format", "full", "bad.py")
    assert r.returncode == 1
    assert "^^^^^^^^^^^^^^" in r.stdout and " --> bad.py:6:12" in r.stdout
    assert "Found" not in r.stdout and not r.stdout.endswith("\n\n")


def test_quiet_machine_formats_are_unchanged(tree):
    loud = run(tree, "check", "--output-format", "json", "bad.py")
    quiet = run(tree, "check", "-q", "--output-format", "json", "bad.py")
    assert json.loads(quiet.stdout) == json.loads(loud.stdout)


def test_statistics(tree):
    r = run(tree, "check", "--statistics", "bad.py")
    assert r.returncode == 1
    rows = [line.split("\t") for line in r.stdout.splitlines()]
    assert sorted((row[0].strip(), row[1].strip()) for row in rows) == [("1", "CL101"), ("1", "CL201")]
    assert [row[-1].strip() for row in rows] == ["[ ] tensor-item", "[ ] print"]  # the fixable column


def test_output_file(tree):
    r = run(tree, "check", "-o", "reports/out.json", "--output-format", "json", "bad.py")
    assert r.returncode == 1 and r.stdout == ""
    data = json.loads((tree / "reports" / "out.json").read_text())
    assert [d["code"] for d in data] == ["CL201", "CL101"]


# ----- output formats --------------------------------------------------------------------------------
def test_json_and_json_lines(tree):
    data = json.loads(run(tree, "check", "--output-format", "json", "bad.py").stdout)
    item = data[1]
    assert (item["code"], item["filename"], item["location"], item["end_location"]) == (
        "CL101", "bad.py", {"row": 6, "column": 12}, {"row": 6, "column": 26})
    assert item["noqa_row"] == 6 and item["url"].endswith("gb0124.html")
    lines = run(tree, "check", "--output-format", "json-lines", "bad.py").stdout.splitlines()
    assert [json.loads(line) for line in lines] == data


def test_sarif_validates_against_the_schema(tree):
    import jsonschema  # in the `test` extra
    r = run(tree, "check", "--output-format", "sarif", "bad.py", "clean.py")
    assert r.returncode == 1
    sarif = json.loads(r.stdout)
    with open(os.path.join(ROOT, "compilelint", "data", "sarif-schema-2.1.0.json"), encoding="utf-8") as f:
        schema = json.load(f)
    jsonschema.Draft4Validator(schema).validate(sarif)
    results = sarif["runs"][0]["results"]
    assert sorted(res["ruleId"] for res in results) == ["CL101", "CL201"]
    region = next(res for res in results if res["ruleId"] == "CL101")["locations"][0]["physicalLocation"]
    assert region["artifactLocation"]["uri"].endswith("bad.py")
    assert (region["region"]["startLine"], region["region"]["startColumn"]) == (6, 12)
    # a clean run is a valid, empty SARIF log
    clean = json.loads(run(tree, "check", "--output-format", "sarif", "clean.py").stdout)
    jsonschema.Draft4Validator(schema).validate(clean)
    assert clean["runs"][0]["results"] == []


def test_github_annotations(tree):
    lines = run(tree, "check", "--output-format", "github", "bad.py").stdout.splitlines()
    assert lines[1].startswith("::error title=compilelint (CL101),file=bad.py,line=6,col=12,endLine=6,endColumn=26::")


def test_junit(tree):
    r = run(tree, "check", "--output-format", "junit", "bad.py")
    root = ET.fromstring(r.stdout)
    cases = root.findall(".//testcase")
    assert root.get("failures") == "2" and len(cases) == 2
    assert {c.find("failure").get("type") for c in cases} == {"CL101", "CL201"}


def test_output_format_from_the_environment(tree):
    r = run(tree, "check", "bad.py", env=_env(COMPILELINT_OUTPUT_FORMAT="github"))
    assert r.stdout.startswith("::error ")


# ----- colour ----------------------------------------------------------------------------------------
def _on_a_terminal(cwd, *args, env):
    """Run with stdout on a pseudo-terminal; return what it printed."""
    master, slave = pty.openpty()
    try:
        p = subprocess.run([sys.executable, "-m", "compilelint", *args], cwd=str(cwd), stdout=slave,
                           stderr=subprocess.PIPE, env=env, timeout=120)
        os.close(slave)
        chunks = []
        while True:
            try:
                chunk = os.read(master, 65536)
            except OSError:
                break
            if not chunk:
                break
            chunks.append(chunk)
        return p.returncode, b"".join(chunks).decode()
    finally:
        os.close(master)


def test_colour_on_a_terminal_only(tree):
    rc, out = _on_a_terminal(tree, "check", "--no-cache", "bad.py", env=_env())
    assert rc == 1 and "\x1b[" in out and "CL101" in out
    rc, out = _on_a_terminal(tree, "check", "--no-cache", "bad.py", env=_env(NO_COLOR="1"))
    assert rc == 1 and "\x1b[" not in out and "CL101" in out
    piped = run(tree, "check", "bad.py")
    assert "\x1b[" not in piped.stdout
    forced = run(tree, "check", "bad.py", env=_env(FORCE_COLOR="1"))
    assert "\x1b[" in forced.stdout


def test_output_file_has_no_colour_even_on_a_terminal(tree):
    _on_a_terminal(tree, "check", "--no-cache", "-o", "out.txt", "bad.py", env=_env(FORCE_COLOR="1"))
    assert "\x1b[" not in (tree / "out.txt").read_text()


# ----- stdin -----------------------------------------------------------------------------------------
def test_stdin_with_a_filename(tree):
    r = run(tree, "check", "-", "--stdin-filename", "pkg/model.py", stdin=BAD)
    assert r.returncode == 1
    assert r.stdout.startswith("pkg/model.py:5:5: CL201 ")
    r = run(tree, "check", "-", "--stdin-filename", "pkg/model.py", stdin=CLEAN)
    assert (r.returncode, r.stdout) == (0, "All checks passed!\n")


def test_stdin_uses_the_configuration_of_its_filename(tree):
    (tree / "sub").mkdir()
    (tree / "sub" / "pyproject.toml").write_text('[tool.compilelint]\nignore = ["CL201"]\n')
    r = run(tree, "check", "-q", "-", "--stdin-filename", "sub/model.py", stdin=BAD)
    assert [line.split()[1] for line in r.stdout.splitlines()] == ["CL101"]


def test_stdin_force_exclude(tree):
    (tree / "pyproject.toml").write_text('[tool.compilelint]\nextend-exclude = ["legacy"]\n')
    r = run(tree, "check", "--force-exclude", "-", "--stdin-filename", "legacy/model.py", stdin=BAD)
    assert (r.returncode, r.stdout) == (0, "")
    r = run(tree, "check", "-", "--stdin-filename", "legacy/model.py", stdin=BAD)
    assert r.returncode == 1


# ----- what pre-commit passes ------------------------------------------------------------------------
def test_empty_file_list_with_force_exclude(tree):
    r = run(tree, "check", "--force-exclude")
    assert r.returncode == 0 and r.stdout == ""
    assert run(tree, "check", "--force-exclude", "-q").stderr == ""


def test_force_exclude_applies_to_explicit_paths(tree):
    (tree / "legacy").mkdir()
    (tree / "legacy" / "old.py").write_text(BAD)
    (tree / "pyproject.toml").write_text('[tool.compilelint]\nextend-exclude = ["legacy/"]\n')
    assert run(tree, "check", "legacy/old.py").returncode == 1  # named explicitly: checked
    r = run(tree, "check", "--force-exclude", "legacy/old.py")
    assert r.returncode == 0 and "CL101" not in r.stdout
    r = run(tree, "check", "--force-exclude", "legacy/old.py", "bad.py")
    assert r.returncode == 1 and "legacy" not in r.stdout and "bad.py:6:12: CL101" in r.stdout
    r = run(tree, "check", "--force-exclude", "legacy")  # a folder named explicitly
    assert r.returncode == 0
    r = run(tree, "check")  # walking: always excluded
    assert "legacy" not in r.stdout and "bad.py" in r.stdout


def test_runs_without_torch(tree):
    """The linter must never import torch: make `import torch` fail and check a file anyway."""
    code = ("import sys; sys.modules['torch'] = None; sys.argv = ['compilelint'] + sys.argv[1:]; "
            "from compilelint.cli import main; main()")
    for fmt in ("concise", "full", "json", "sarif", "github", "junit", "json-lines"):
        r = subprocess.run([sys.executable, "-c", code, "check", "--no-cache", "--output-format", fmt, "bad.py"],
                           cwd=str(tree), capture_output=True, text=True, env=_env(), timeout=120)
        assert r.returncode == 1, (fmt, r.stderr)
        assert "CL101" in r.stdout
    r = subprocess.run([sys.executable, "-c", code, "rule", "CL101"], cwd=str(tree), capture_output=True,
                       text=True, env=_env(), timeout=120)
    assert r.returncode == 0 and "tensor-item" in r.stdout


# ----- entry points, version ------------------------------------------------------------------------
def test_version_names_the_measured_torch_versions(tree):
    from compilelint import __version__

    r = run(tree, "--version")
    assert r.returncode == 0
    assert r.stdout.strip() == f"compilelint {__version__} (graph-break behaviour measured on torch 2.11, 2.13)"


@pytest.mark.skipif(not os.path.exists(SCRIPT), reason="the console script is not installed in this environment")
def test_console_script_and_python_m_agree(tree):
    a = subprocess.run([SCRIPT, "check", "--no-cache", "bad.py"], cwd=str(tree), capture_output=True, text=True,
                       env=_env(), timeout=120)
    b = run(tree, "check", "bad.py")
    assert (a.returncode, a.stdout) == (b.returncode, b.stdout) == (1, b.stdout)


def test_help_lists_the_output_formats(tree):
    r = run(tree, "check", "--help")
    assert r.returncode == 0
    for fmt in ("concise", "full", "json", "json-lines", "sarif", "github", "junit"):
        assert fmt in r.stdout
