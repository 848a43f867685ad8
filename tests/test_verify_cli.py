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


BLOCK_TORCH = '''import sys


class _NoTorch:
    """`import torch` fails as it does where torch is not installed."""

    def find_spec(self, name, path=None, target=None):
        if name == "torch" or name.startswith("torch."):
            raise ModuleNotFoundError(f"No module named {name!r}", name=name)
        return None


sys.meta_path.insert(0, _NoTorch())
'''


def test_verify_without_torch_says_what_to_install(tmp_path):
    import os

    shim = tmp_path / "shim"
    shim.mkdir()
    (shim / "sitecustomize.py").write_text(BLOCK_TORCH)
    (tmp_path / "app.py").write_text("import torch\n\n\n@torch.compile\ndef f(x):\n    return x.sum().item()\n\n\n"
                                     "def make():\n    return [(f, (torch.ones(2),), {})]\n")
    env = dict(os.environ, PYTHONPATH=str(shim))
    for extra in (["--example", "app.py:make"], ["--example", "app.py:make", "--fix"], ["--run", "python -c 1"]):
        out = subprocess.run([sys.executable, "-m", "compilelint", "verify", "app.py", "--isolated", "--no-cache", *extra],
                             cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120)
        assert out.returncode == 2, out.stdout + out.stderr
        assert out.stdout == ""
        assert out.stderr.strip().splitlines() == [
            'compilelint: error: verify runs your code under torch.compile, and torch cannot be imported here: '
            'install torch (python -m pip install torch), or the verify extra in a clone: '
            'python -m pip install -e ".[verify]"'], out.stderr
