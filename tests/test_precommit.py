"""The pre-commit hooks, run by the real `pre-commit` in a throwaway git repository.

`pre-commit` installs compilelint into a virtualenv of its own (pip, from PyPI: libcst, click; no
torch) exactly as a user's `.pre-commit-config.yaml` would, from a release of this checkout: a git
clone with the working tree committed on top and tagged `v<version>` (tests/checkout.py), named by
that tag as README.md's snippet names it.

Cost: `pre-commit try-repo` always builds its environment in a fresh temporary store (it ignores
PRE_COMMIT_HOME), so it is used once; every other test runs `pre-commit run` against a
`.pre-commit-config.yaml` with one PRE_COMMIT_HOME for the module, installed once and reused.
"""
import glob
import os
import shutil
import subprocess
import sys

import pytest

from checkout import TAG, tagged_clone
from checkout import git as _git
from conftest import FIXTURES

PRE_COMMIT = [sys.executable, "-m", "pre_commit"]
HERE = os.path.join(FIXTURES, "precommit")

pytestmark = [pytest.mark.slow, pytest.mark.skipif(shutil.which("git") is None, reason="needs git")]


def _env(home):
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PRE_COMMIT", "COMPILELINT", "GIT_"))}
    env.pop("NO_COLOR", None)
    env.update(PRE_COMMIT_HOME=str(home), PRE_COMMIT_COLOR="never", PIP_DISABLE_PIP_VERSION_CHECK="1")
    return env


@pytest.fixture(scope="module")
def hook_repo(tmp_path_factory):
    """A clone of this repository with the working tree committed and tagged TAG: (path, TAG)."""
    clone = tmp_path_factory.mktemp("hook-repo") / "compilelint"
    tagged_clone(clone)
    assert (clone / ".pre-commit-hooks.yaml").is_file()
    return clone, TAG


@pytest.fixture(scope="module")
def home(tmp_path_factory):
    return tmp_path_factory.mktemp("pre-commit-home")


@pytest.fixture
def project(tmp_path, hook_repo):
    """A user's repository that uses both hooks; returns a function that runs one of them."""
    repo_path, rev = hook_repo
    proj = tmp_path / "project"
    proj.mkdir()
    _git(proj, "init", "-q")
    (proj / ".pre-commit-config.yaml").write_text(
        f"repos:\n- repo: {repo_path}\n  rev: {rev}\n  hooks:\n  - id: compilelint\n  - id: compilelint-fix\n")
    return proj


def add(proj, name, fixture=None, text=None):
    path = proj / name
    path.parent.mkdir(parents=True, exist_ok=True)
    if fixture:
        shutil.copy(os.path.join(HERE, fixture), path)
    else:
        path.write_text(text)
    _git(proj, "add", name)
    return path


def pre_commit(proj, home, *args):
    _git(proj, "add", "-A")
    return subprocess.run([*PRE_COMMIT, *args], cwd=str(proj), env=_env(home), capture_output=True, text=True,
                          timeout=600)


def run_hook(proj, home, hook, *files):
    return pre_commit(proj, home, "run", hook, "--files", *files)


# ----- try-repo: the command the docs tell a user to try first ---------------------------------
def test_try_repo_fails_on_a_finding_and_passes_when_clean(tmp_path, hook_repo, home):
    repo_path, rev = hook_repo
    proj = tmp_path / "try"
    proj.mkdir()
    _git(proj, "init", "-q")
    add(proj, "model.py", "unfriendly.py")
    add(proj, "clean.py", "friendly.py")
    r = subprocess.run([*PRE_COMMIT, "try-repo", str(repo_path), "compilelint", "--ref", rev, "--files", "model.py"],
                       cwd=str(proj), env=_env(home), capture_output=True, text=True, timeout=600)
    out = r.stdout + r.stderr
    assert r.returncode == 1, out
    assert "compilelint" in out and "Failed" in out
    assert "model.py:7:13: CL101 `.item()` on a tensor graph-breaks (GB0124)" in out
    r = subprocess.run([*PRE_COMMIT, "try-repo", str(repo_path), "compilelint", "--ref", rev, "--files", "clean.py"],
                       cwd=str(proj), env=_env(home), capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "Passed" in r.stdout


# ----- pre-commit run, with a config (installed once in `home`) ---------------------------------------
def test_check_hook_fails_with_the_finding(project, home):
    add(project, "model.py", "unfriendly.py")
    r = run_hook(project, home, "compilelint", "model.py")
    assert r.returncode == 1, r.stdout + r.stderr
    assert "- hook id: compilelint" in r.stdout and "- exit code: 1" in r.stdout
    assert "model.py:7:13: CL101 `.item()` on a tensor graph-breaks (GB0124)" in r.stdout


def test_check_hook_passes_clean_and_uncompiled_files(project, home):
    add(project, "clean.py", "friendly.py")
    add(project, "eager.py", "eager_only.py")
    add(project, "stub.pyi", "stub.pyi")
    add(project, "README.md", text="# not python\n")
    r = run_hook(project, home, "compilelint", "clean.py", "eager.py", "stub.pyi", "README.md")
    assert r.returncode == 0, r.stdout + r.stderr
    assert "Passed" in r.stdout


def test_empty_file_list(project, home):
    add(project, "README.md", text="# no python here\n")
    r = run_hook(project, home, "compilelint", "README.md")  # filtered by types_or: nothing left
    assert r.returncode == 0, r.stdout + r.stderr
    assert "(no files to check)Skipped" in r.stdout
    r = pre_commit(project, home, "run", "compilelint", "--files")
    assert r.returncode == 0, r.stdout + r.stderr
    # and the entry itself with no file names (what `xargs` without -r does): nothing checked, exit 0
    r = subprocess.run([_hook_env_bin(home, "compilelint"), "check", "--force-exclude"], cwd=str(project),
                       capture_output=True, text=True, timeout=120)
    assert (r.returncode, r.stdout) == (0, ""), r.stderr


def test_excluded_files_passed_explicitly_are_skipped(project, home):
    (project / "pyproject.toml").write_text('[tool.compilelint]\nextend-exclude = ["legacy/"]\n')
    add(project, "legacy/old_model.py", "unfriendly.py")
    add(project, "model.py", "unfriendly.py")
    r = run_hook(project, home, "compilelint", "legacy/old_model.py")
    assert r.returncode == 0, r.stdout + r.stderr
    r = run_hook(project, home, "compilelint", "legacy/old_model.py", "model.py")
    assert r.returncode == 1
    assert "model.py:7:13: CL101" in r.stdout and "legacy" not in r.stdout


def test_hook_environment_has_no_torch(project, home):
    """pre-commit's virtualenv for the hooks holds compilelint and its dependencies, not torch;
    the hook runs (and finds the break) there."""
    add(project, "model.py", "unfriendly.py")
    r = run_hook(project, home, "compilelint", "model.py")
    assert "CL101" in r.stdout
    python = _hook_env_bin(home, "python")
    probe = subprocess.run([python, "-c", "import compilelint, importlib.util as u; "
                                          "print(u.find_spec('torch') is None)"],
                           capture_output=True, text=True, timeout=120)
    assert probe.stdout.strip() == "True", probe.stdout + probe.stderr
    freeze = subprocess.run([python, "-m", "pip", "freeze"], capture_output=True, text=True, timeout=120).stdout
    assert "compilelint" in freeze and "libcst" in freeze.lower()
    assert not any(line.lower().startswith("torch") for line in freeze.splitlines())


def test_fix_hook_fixes_the_file(project, home):
    """CL303's safe fix: `F.one_hot(torch.arange(10))` gets `num_classes=10`."""
    path = add(project, "encode.py", "fixable.py")
    r = run_hook(project, home, "compilelint-fix", "encode.py")
    text = path.read_text()
    assert "F.one_hot(labels, num_classes=10)" in text, r.stdout + r.stderr
    assert r.returncode == 1  # --exit-non-zero-on-fix: pre-commit must show that it changed the file
    assert "files were modified by this hook" in r.stdout or "- exit code: 1" in r.stdout
    r = run_hook(project, home, "compilelint-fix", "encode.py")
    assert r.returncode == 0, r.stdout + r.stderr
    assert path.read_text() == text
    assert run_hook(project, home, "compilelint", "encode.py").returncode == 0


def test_fix_hook_leaves_unfixable_findings_failing(project, home):
    path = add(project, "model.py", "unfriendly.py")
    before = path.read_text()
    r = run_hook(project, home, "compilelint-fix", "model.py")
    assert r.returncode == 1, r.stdout + r.stderr
    assert "model.py:7:13: CL101" in r.stdout
    assert path.read_text() == before  # `.item()` has no safe fix: nothing written


def _hook_env_bin(home, name):
    found = glob.glob(os.path.join(str(home), "repo*", "py_env-*", "bin", name))
    assert found, f"no pre-commit environment with {name} under {home}"
    return found[0]


# ----- cross-file findings whatever pre-commit passes (issue 16) -------------------------------------
CROSS_N = "import torch\n\nfrom helpers import scale\n\n\n@torch.compile\ndef run(x):\n    return scale(x)\n"
CROSS_HELPERS = "def scale(x):\n    return x / x.abs().max().item()\n"


def _staged_run(proj, home, *args):
    """`pre-commit run` on what is staged (no `git add -A`)."""
    return subprocess.run([*PRE_COMMIT, "run", *args], cwd=str(proj), env=_env(home), capture_output=True,
                          text=True, timeout=600)


def test_cross_file_finding_in_batches_and_with_one_staged_file(project, home):
    add(project, "n.py", text=CROSS_N)
    add(project, "helpers.py", text=CROSS_HELPERS)
    for i in range(30):
        add(project, f"other_{i:02}.py", text=f"VALUE_{i} = {i}\n")
    # every file, in the batches pre-commit splits them into
    r = pre_commit(project, home, "run", "compilelint", "--all-files")
    assert r.returncode == 1, r.stdout + r.stderr
    assert "helpers.py:2:16: CL101" in r.stdout
    _git(project, "add", "-A")
    _git(project, "-c", "user.name=t", "-c", "user.email=t@example.invalid", "commit", "-q", "-m", "start")
    # only a change to helpers.py staged: judged with n.py as context
    (project / "helpers.py").write_text(CROSS_HELPERS + "\n\nOTHER = 1\n")
    _git(project, "add", "helpers.py")
    r = _staged_run(project, home, "compilelint")
    assert r.returncode == 1, r.stdout + r.stderr
    assert "helpers.py:2:16: CL101" in r.stdout
    _git(project, "-c", "user.name=t", "-c", "user.email=t@example.invalid", "commit", "-q", "-m", "helpers")
    # only a change to n.py staged: the break is helpers.py's, which was not passed: nothing to report
    (project / "n.py").write_text(CROSS_N + "\n\nEXTRA = 2\n")
    _git(project, "add", "n.py")
    r = _staged_run(project, home, "compilelint")
    assert r.returncode == 0, r.stdout + r.stderr
    assert "CL101" not in r.stdout
