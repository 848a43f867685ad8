"""The import contracts of pyproject.toml's [tool.importlinter], checked by import-linter: `check`
never imports torch or `verify`, rules never import the CLI, analysis never imports rules, report
never imports the engine."""
import os
import subprocess
import sys

from conftest import ROOT

CONTRACTS = (
    "check never imports torch or verify",
    "rules never import the CLI or the engine",
    "analysis never imports rules",
    "report never imports the engine",
)


def test_import_contracts_are_kept():
    lint = os.path.join(os.path.dirname(sys.executable), "lint-imports")
    r = subprocess.run([lint, "--no-cache"], cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stdout + r.stderr
    for name in CONTRACTS:
        assert f"{name} KEPT" in r.stdout, r.stdout
