"""README.md stays true: its rule table is the registry's, its example output is what check prints."""
import os
import re
import subprocess
import sys

import pytest
import yaml
from click.testing import CliRunner

from compilelint import __version__
from compilelint.cli import main, rules_markdown
from compilelint.rule import registry

from conftest import ROOT

README = open(os.path.join(ROOT, "README.md"), encoding="utf-8").read()


def test_rule_table_matches_the_registry():
    table = README.split("<!-- rules:start -->", 1)[1].split("<!-- rules:end -->", 1)[0].strip()
    assert table == rules_markdown(registry()), "regenerate with `compilelint rules --output-format markdown`"


def _quick_start_blocks():
    quick = README.split("\n## Quick start\n", 1)[1].split("\n## ", 1)[0]
    return re.findall(r"```sh\n(.*?)```", quick, re.S)


def test_quick_start_holds_the_two_commands_and_ci_runs_its_test_command():
    """Install-and-check on an example, then the tests: what a newcomer types, what .ci/run does."""
    install, tests = _quick_start_blocks()
    assert install.startswith("python -m pip install torch==2.13.0 -e \".[test,verify]\" && compilelint check ")
    assert tests == "python -m pytest -q -n 2\n"
    ci = open(os.path.join(ROOT, ".ci", "run"), encoding="utf-8").read()
    assert '-e ".[test,verify]"' in ci and "torch==2.13.0" in ci
    assert ci.rstrip().endswith("# The README's test command:\n" + tests.strip())


@pytest.mark.slow
def test_quick_start_command_runs_on_the_example():
    install, _ = _quick_start_blocks()
    command = install.split("&& ", 1)[1].split()
    out = subprocess.run([sys.executable, "-m", "compilelint", *command[1:], "--no-cache"],
                         cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert out.returncode == 1, out.stderr
    assert "fixtures/catalogue/moe_router.py:" in out.stdout


def test_rule_pages_are_current():
    page = open(os.path.join(ROOT, "docs", "rules.md"), encoding="utf-8").read()
    assert page == CliRunner().invoke(main, ["rule", "--all"]).output, \
        "regenerate with `compilelint rule --all > docs/rules.md`"


def test_snippets_name_the_release_tag_and_what_the_repository_has():
    """The pre-commit snippet's rev is the tag a release of this version makes, its hooks exist; the
    action snippet's inputs exist; the package is installed from the repository (not on PyPI yet)."""
    hooks = {h["id"] for h in yaml.safe_load(open(os.path.join(ROOT, ".pre-commit-hooks.yaml"), encoding="utf-8"))}
    pre_commit = README.split("\n## Using compilelint with pre-commit\n", 1)[1].split("```yaml\n", 1)[1].split("```", 1)[0]
    [repo] = yaml.safe_load(pre_commit)["repos"]
    assert repo["rev"] == f"v{__version__}"
    named = set(re.findall(r"id: ([\w-]+)", pre_commit))
    assert named == hooks == {"compilelint", "compilelint-fix"}
    ci = README.split("\n## Using compilelint in CI\n", 1)[1].split("```yaml\n", 1)[1].split("```", 1)[0]
    [step] = [s for s in yaml.safe_load(ci)["jobs"]["compilelint"]["steps"] if "/compilelint@" in s.get("uses", "")]
    action = yaml.safe_load(open(os.path.join(ROOT, "action.yml"), encoding="utf-8"))
    assert set(step["with"]) <= set(action["inputs"])
    assert not re.search(r"pip install [\"']?compilelint\b(?! @)", README)  # nothing claims a PyPI release
    assert f"compilelint@v{__version__}" in README


@pytest.mark.slow
def test_example_output_is_what_check_prints():
    block = README.split("$ compilelint check fixtures/catalogue/moe_router.py\n", 1)[1].split("```", 1)[0]
    out = subprocess.run([sys.executable, "-m", "compilelint", "check", "--no-cache",
                          "fixtures/catalogue/moe_router.py"], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert out.stdout == block
