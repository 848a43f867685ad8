"""Project context (issue 16, point 2): a file is judged with its whole project as context, whatever
files were named; only the named files' findings are reported. (The real pre-commit runs the same
example in test_precommit.py.)"""
import subprocess

import pytest

from compilelint.config import Settings, settings_for
from compilelint.engine import check_paths

from test_layout import run

N = """\
import torch

from helpers import scale


@torch.compile
def run(x):
    return scale(x)
"""
HELPERS = """\
def scale(x):
    return x / x.abs().max().item()
"""
HELPERS_FINDING = "helpers.py:2:16: CL101"


@pytest.fixture
def repo(write_tree, monkeypatch):
    files = {"n.py": N, "helpers.py": HELPERS}
    files.update({f"other_{i:02}.py": f"VALUE_{i} = {i}\n" for i in range(30)})
    tree = write_tree(files)
    subprocess.run(["git", "init", "-q"], cwd=str(tree), check=True)
    monkeypatch.chdir(tree)
    return tree


def located(report):
    return sorted(f"{f.path}:{f.span.row}:{f.span.col}: {f.code}" for f in report.findings)


def test_a_file_named_alone_is_judged_with_its_project(repo):
    assert located(check_paths(["helpers.py"], Settings(cache=False))) == [HELPERS_FINDING]
    # n.py named alone: helpers.py's finding is not n.py's to report
    assert located(check_paths(["n.py"], Settings(cache=False))) == []
    everything = located(check_paths(["."], Settings(cache=False)))
    assert everything == [HELPERS_FINDING]


def test_errors_of_context_files_are_not_reported(repo):
    (repo / "broken.py").write_text("def f(:\n")
    report = check_paths(["helpers.py"], Settings(cache=False))
    assert located(report) == [HELPERS_FINDING] and report.errors == []


def test_the_cached_context_gives_the_same_answer(repo, tmp_path):
    settings = dict(cache=True, cache_dir=str(tmp_path / "cache"))
    first = located(check_paths(["helpers.py"], Settings(**settings)))
    again = located(check_paths(["helpers.py"], Settings(**settings)))
    other = located(check_paths(["n.py", "other_03.py"], Settings(**settings)))
    assert first == again == [HELPERS_FINDING] and other == []


def test_a_configuration_folder_is_a_project_root_too(write_tree, monkeypatch):
    tree = write_tree({"proj/pyproject.toml": "[tool.compilelint]\n", "proj/n.py": N, "proj/helpers.py": HELPERS})
    monkeypatch.chdir(tree / "proj")
    assert located(check_paths(["helpers.py"], settings_for(["helpers.py"], cache=False))) == [HELPERS_FINDING]


def test_stdin_is_judged_with_its_project(repo):
    r = run(repo, "check", "-", "--stdin-filename", "helpers.py", stdin=HELPERS)
    assert HELPERS_FINDING in r.stdout, r.stdout + r.stderr


def test_without_a_project_only_the_named_files_count(write_tree, monkeypatch):
    tree = write_tree({"n.py": N, "helpers.py": HELPERS})  # no configuration, no VCS
    monkeypatch.chdir(tree)
    assert located(check_paths(["helpers.py"], Settings(cache=False))) == []


def test_isolated_judges_the_named_files_alone(repo):
    """`--isolated` reads neither configuration nor the rest of the project: helpers.py alone has no
    compiled caller, so nothing reaches it; named with its caller, the finding comes back."""
    assert located(check_paths(["helpers.py"], settings_for(["helpers.py"], isolated=True, cache=False))) == []
    both = ["helpers.py", "n.py"]
    assert located(check_paths(both, settings_for(both, isolated=True, cache=False))) == [HELPERS_FINDING]


def test_show_settings_names_the_project_that_decides_reach(repo, write_tree):
    assert f"Project: {repo}" in run(repo, "check", "helpers.py", "--show-settings").stdout
    assert "Project: (none: the named files are judged alone)" in \
        run(repo, "check", "helpers.py", "--show-settings", "--isolated").stdout
