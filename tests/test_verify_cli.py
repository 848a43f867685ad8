"""`compilelint verify` on the command line: the user's command after `--`, usage errors in one line."""
import subprocess
import sys

import pytest

from compilelint import cli

from conftest import ROOT

pytestmark = pytest.mark.slow  # end to end (CLI subprocesses, Dynamo runs, fuzzing): seconds a test


def test_command_after_double_dash(monkeypatch):
    monkeypatch.setattr(sys, "argv", ["compilelint", "verify", "src/", "--", "pytest", "-x", "tests/"])
    assert cli._split_command(("src/", "pytest", "-x", "tests/")) == (["src/"], ["pytest", "-x", "tests/"])
    monkeypatch.setattr(sys, "argv", ["compilelint", "verify", "src/", "--example", "m:f"])
    assert cli._split_command(("src/",)) == (["src/"], [])


def test_verify_needs_an_example_or_a_command():
    out = subprocess.run([sys.executable, "-m", "compilelint", "verify", "fixtures/verify/models.py"],
                         cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert out.returncode == 2
    assert out.stderr.strip().splitlines() == [
        "compilelint: error: verify needs exactly one of --example MOD:FACTORY or --run CMD / -- CMD"]
