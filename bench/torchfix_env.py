"""TorchFix's own virtualenv, under the bench cache directory.

TorchFix 0.7.0 pins libcst<1.6, which conflicts with the project's libcst, so it
gets a virtualenv of its own: ``<cache>/torchfix-venv`` (see bench/corpus.py).

    python bench/torchfix_env.py      # create it if missing, print the torchfix path
"""

from __future__ import annotations

import subprocess
import sys
import venv
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from corpus import cache_dir  # noqa: E402

TORCHFIX_VERSION = "0.7.0"


def venv_dir() -> Path:
    return cache_dir() / "torchfix-venv"


def torchfix_exe() -> Path:
    return venv_dir() / "bin" / "torchfix"


def ensure() -> Path:
    """Return the path of the ``torchfix`` executable, installing it if needed."""
    exe = torchfix_exe()
    if exe.exists():
        return exe
    print(f"creating {venv_dir()} with TorchFix=={TORCHFIX_VERSION} ...", file=sys.stderr, flush=True)
    venv.EnvBuilder(with_pip=True, clear=True).create(venv_dir())
    python = venv_dir() / "bin" / "python"
    subprocess.run([str(python), "-m", "pip", "install", "--quiet", f"TorchFix=={TORCHFIX_VERSION}"],
                   check=True)
    if not exe.exists():
        raise RuntimeError(f"pip install TorchFix=={TORCHFIX_VERSION} did not create {exe}")
    return exe


def versions() -> str:
    """'TorchFix x, libcst y' as installed in the venv."""
    python = venv_dir() / "bin" / "python"
    code = ("from importlib.metadata import version as v; "
            "print(f\"TorchFix {v('TorchFix')}, libcst {v('libcst')}\")")
    out = subprocess.run([str(python), "-c", code], capture_output=True, text=True)
    return out.stdout.strip() or "unknown"


if __name__ == "__main__":
    print(ensure())
    print(versions())
