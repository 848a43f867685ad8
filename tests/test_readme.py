"""README.md stays true: its rule table is the registry's, its example output is what check prints."""
import os
import subprocess
import sys

import pytest

from compilelint.cli import rules_markdown
from compilelint.rule import registry

from conftest import ROOT

README = open(os.path.join(ROOT, "README.md"), encoding="utf-8").read()


def test_rule_table_matches_the_registry():
    table = README.split("<!-- rules:start -->", 1)[1].split("<!-- rules:end -->", 1)[0].strip()
    assert table == rules_markdown(registry()), "regenerate with `compilelint rules --output-format markdown`"


@pytest.mark.slow
def test_quick_start_command_runs_on_the_example():
    out = subprocess.run([sys.executable, "-m", "compilelint", "check", "--no-cache", "fixtures/catalogue/"],
                         cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert out.returncode == 1, out.stderr
    assert "fixtures/catalogue/moe_router.py:" in out.stdout
    assert "python -m pip install torch==2.13.0" in README and "python -m pytest -q" in README


@pytest.mark.slow
def test_example_output_is_what_check_prints():
    block = README.split("$ compilelint check fixtures/catalogue/moe_router.py\n", 1)[1].split("```", 1)[0]
    out = subprocess.run([sys.executable, "-m", "compilelint", "check", "--no-cache",
                          "fixtures/catalogue/moe_router.py"], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert out.stdout == block
