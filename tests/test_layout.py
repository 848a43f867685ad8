"""Right in every repository layout (issue 16): configuration per file, excludes relative to their
config, git's own ignore files, noqa from real comments, stdin, unreadable files as findings.

Every test runs `python -m compilelint` in a subprocess, the way a user or pre-commit does.
"""
import json
import os
import subprocess
import sys

import pytest

COMPILED_PRINT = """\
import torch

@torch.compile
def f(x):
    print(x)
    return x
"""
PRINT_ROW = "5:5: CL201"


def run(cwd, *args, stdin=None, env=None):
    args = list(args)
    if args and args[0] == "check":
        args.insert(1, "--no-cache")
    base = {k: v for k, v in os.environ.items() if not k.startswith(("COMPILELINT", "GIT_"))
            and k not in ("NO_COLOR", "FORCE_COLOR")}
    base.update(env or {})
    return subprocess.run([sys.executable, "-m", "compilelint", *args], cwd=str(cwd), input=stdin,
                          capture_output=True, text=True, env=base, timeout=120)


def git(cwd, *args):
    subprocess.run(["git", "-c", "init.defaultBranch=main", *args], cwd=str(cwd), check=True, capture_output=True)


# ----- 1. configuration per file, whatever the argument order -------------------------------------------
@pytest.fixture
def two_projects(write_tree):
    return write_tree({
        "a/pyproject.toml": '[tool.compilelint]\nignore = ["CL201"]\n',
        "a/m.py": COMPILED_PRINT,
        "b/pyproject.toml": '[tool.compilelint]\nselect = ["ALL"]\n',
        "b/m.py": COMPILED_PRINT,
    })


def test_each_file_uses_its_nearest_configuration_in_any_argument_order(two_projects):
    outputs = []
    for order in (("a", "b"), ("b", "a")):
        r = run(two_projects, "check", *order)
        assert r.returncode == 1, r.stdout + r.stderr
        outputs.append(sorted(line for line in r.stdout.splitlines() if ": CL" in line))
    assert outputs[0] == outputs[1]
    assert f"b/m.py:{PRINT_ROW}" in "\n".join(outputs[0])
    assert not any(line.startswith("a/") for line in outputs[0]), outputs[0]


def test_compilelint_toml_takes_precedence_over_pyproject_in_the_same_folder(write_tree):
    tree = write_tree({
        "pyproject.toml": '[tool.compilelint]\nselect = ["ALL"]\n',
        "compilelint.toml": 'ignore = ["CL201"]\n',
        "m.py": COMPILED_PRINT,
    })
    assert run(tree, "check", ".").returncode == 0
    (tree / ".compilelint.toml").write_text('extend-select = ["CL201"]\n')
    r = run(tree, "check", ".")
    assert f"m.py:{PRINT_ROW}" in r.stdout, r.stdout + r.stderr


def test_a_nested_compilelint_toml_governs_its_folder(write_tree):
    tree = write_tree({
        "pyproject.toml": '[tool.compilelint]\nignore = ["CL201"]\n',
        "m.py": COMPILED_PRINT,
        "sub/.compilelint.toml": 'select = ["CL2"]\n',
        "sub/m.py": COMPILED_PRINT,
    })
    r = run(tree, "check", ".")
    assert [line.split(" ")[0] for line in r.stdout.splitlines() if ": CL" in line] == ["sub/m.py:5:5:"], r.stdout


# ----- 3. excludes are relative to their configuration's folder; git's other ignore files ---------------
def test_exclude_is_relative_to_the_config_folder_not_the_working_directory(write_tree):
    tree = write_tree({
        "pyproject.toml": '[tool.compilelint]\nextend-exclude = ["pkg/broken.py"]\n',
        "pkg/broken.py": COMPILED_PRINT,
        "pkg/kept.py": COMPILED_PRINT,
    })
    for cwd, target, kept in ((tree, ".", "pkg/kept.py"), (tree / "pkg", ".", "kept.py")):
        r = run(cwd, "check", target)
        assert f"{kept}:{PRINT_ROW}" in r.stdout, r.stdout + r.stderr
        assert "broken.py" not in r.stdout, (cwd, r.stdout)


def test_git_info_exclude_and_the_global_gitignore_are_honoured(tmp_path):
    repo = tmp_path / "repo"
    repo.mkdir()
    git(repo, "init", "-q")
    for name in ("kept.py", "local_only.py", "global_only.py"):
        (repo / name).write_text(COMPILED_PRINT)
    (repo / ".git" / "info").mkdir(exist_ok=True)
    (repo / ".git" / "info" / "exclude").write_text("local_only.py\n")
    home = tmp_path / "home"
    (home / ".config" / "git").mkdir(parents=True)
    (home / ".config" / "git" / "ignore").write_text("global_only.py\n")
    r = run(repo, "check", ".", env={"HOME": str(home), "XDG_CONFIG_HOME": str(home / ".config")})
    assert f"kept.py:{PRINT_ROW}" in r.stdout, r.stdout + r.stderr
    assert "local_only.py" not in r.stdout and "global_only.py" not in r.stdout, r.stdout
    # core.excludesFile in the global git configuration names another file
    (home / ".gitconfig").write_text("[core]\n\texcludesFile = ~/my-ignores\n")
    (home / "my-ignores").write_text("kept.py\n")
    r = run(repo, "check", ".", env={"HOME": str(home), "XDG_CONFIG_HOME": str(home / ".config")})
    assert "kept.py" not in r.stdout and "local_only.py" not in r.stdout, r.stdout


# ----- 5. noqa only from real comments -------------------------------------------------------------------
def test_noqa_inside_a_string_suppresses_nothing(write_tree):
    tree = write_tree({
        "file_level.py": COMPILED_PRINT + 'HELP = "# compilelint: noqa"\n',
        "line_level.py": COMPILED_PRINT.replace("    print(x)", '    print(x); s = "# noqa"'),
        "real.py": COMPILED_PRINT.replace("    print(x)", "    print(x)  # noqa: CL201"),
    })
    r = run(tree, "check", ".")
    assert f"file_level.py:{PRINT_ROW}" in r.stdout, r.stdout
    assert f"line_level.py:{PRINT_ROW}" in r.stdout, r.stdout
    assert "real.py" not in r.stdout


# ----- 6. stdin ----------------------------------------------------------------------------------------
def test_stdin_filename_alone_reads_stdin(write_tree):
    tree = write_tree({})
    r = run(tree, "check", "--stdin-filename", "x.py", stdin=COMPILED_PRINT)
    assert r.returncode == 1, r.stdout + r.stderr
    assert f"x.py:{PRINT_ROW}" in r.stdout


def test_fixing_stdin_prints_the_code_and_the_remaining_findings_on_stderr(write_tree):
    tree = write_tree({})
    source = COMPILED_PRINT.replace("    return x", "    return x.sum().item()")
    r = run(tree, "check", "--fix", "--unsafe-fixes", "-", "--stdin-filename", "x.py", stdin=source)
    assert "if not torch.compiler.is_compiling():" in r.stdout  # the print is guarded
    assert "CL201" not in r.stderr
    # `.item()` in a return has no fix: it remains, and is reported where the code is not
    assert "x.py:7:12: CL101" in r.stderr, r.stderr  # rows of the fixed code
    assert r.returncode == 1


# ----- 7. files that can't be read or parsed are findings, in every format ------------------------------
def test_syntax_error_is_a_finding_in_json_and_exit_zero_is_honoured(write_tree):
    tree = write_tree({"broken.py": "def f(:\n    pass\n", "m.py": COMPILED_PRINT})
    r = run(tree, "check", ".", "--output-format", "json", "--exit-zero")
    assert r.returncode == 0, r.stderr
    rows = json.loads(r.stdout)
    broken = [row for row in rows if row["filename"] == "broken.py"]
    assert [row["code"] for row in broken] == ["CL002"], rows
    assert broken[0]["location"] == {"row": 1, "column": 7}
    assert "syntax error" in broken[0]["message"]
    r = run(tree, "check", ".")
    assert "broken.py:1:7: CL002" in r.stdout and r.returncode == 2


def test_a_dangling_symlink_found_by_walking_is_reported(write_tree):
    tree = write_tree({"m.py": COMPILED_PRINT})
    os.symlink("nowhere.py", tree / "dangling.py")
    for fmt, needle in (("concise", "dangling.py:1:1: CL001"), ("json", '"code": "CL001"'),
                        ("sarif", '"ruleId": "CL001"'), ("github", "file=dangling.py"),
                        ("junit", 'type="CL001"')):
        r = run(tree, "check", ".", "--output-format", fmt, "--exit-zero")
        assert r.returncode == 0 and needle in r.stdout, (fmt, r.stdout, r.stderr)
