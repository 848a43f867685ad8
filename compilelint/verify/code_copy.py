"""Copy the checked code to a temporary folder, so that fixes are written there and never to the
user's files (verify --fix, --cost, and the bench runs that compare fixed code).

A *copy* is the whole top-level package that holds the checked paths (so the fixed files import
as the originals did), or the folder itself when it is not a package.
"""
from __future__ import annotations

import os
import shutil
import tempfile
from dataclasses import dataclass
from typing import Dict, List, Sequence


def import_root(path: str) -> str:
    """The folder to copy for `path`: its top-level package, or its own folder outside packages."""
    path = os.path.realpath(os.path.abspath(path))
    folder = path if os.path.isdir(path) else os.path.dirname(path)
    top = None
    while os.path.isfile(os.path.join(folder, "__init__.py")):
        top = folder
        folder = os.path.dirname(folder)
    return top or (path if os.path.isdir(path) else os.path.dirname(path))


@dataclass
class Copy:
    """The checked code copied under `base`; `pythonpath` goes first on the children's PYTHONPATH."""

    base: str
    roots: Dict[str, str]  # original root -> its copy

    @property
    def pythonpath(self) -> List[str]:
        out = []
        for orig, copy in self.roots.items():
            entry = os.path.dirname(copy) if os.path.isfile(os.path.join(orig, "__init__.py")) else copy
            if entry not in out:
                out.append(entry)
        return out

    def to_copy(self, path: str) -> str:
        if not path or path.startswith("<"):
            return path
        real = os.path.realpath(os.path.abspath(path))
        for orig, copy in self.roots.items():
            if real == orig or real.startswith(orig + os.sep):
                return copy + real[len(orig):]
        return path

    def to_original(self, path: str) -> str:
        if not path or path.startswith("<"):
            return path  # "<string>", or no file at all (a compilation metric without one)
        real = os.path.realpath(os.path.abspath(path))
        for orig, copy in self.roots.items():
            if real == copy or real.startswith(copy + os.sep):
                return orig + real[len(copy):]
        return path

    def example(self, example: str) -> str:
        """`--example`'s MODULE_OR_FILE:FACTORY as the copy names it: a file example is read from the
        copy (so it imports the fixed code); a module example already is, the copy first on the path."""
        mod, sep, attr = example.rpartition(":")
        if mod.endswith(".py") or os.sep in mod:
            return f"{self.to_copy(mod)}{sep}{attr}"
        return example

    def remove(self):
        shutil.rmtree(self.base, ignore_errors=True)


# Never copied: caches, VCS folders, virtual environments and installed packages.
SKIP = shutil.ignore_patterns("__pycache__", "*.pyc", ".*", "venv", "site-packages", "node_modules")


def make_copy(paths: Sequence[str]) -> Copy:
    """Copy the import root of every path; a root inside another is copied once, with it."""
    wanted = sorted({import_root(p) for p in paths}, key=len)
    outer: List[str] = []
    for root in wanted:
        if not any(root == r or root.startswith(r + os.sep) for r in outer):
            outer.append(root)
    base = tempfile.mkdtemp(prefix="compilelint-fix-")
    roots: Dict[str, str] = {}
    for root in outer:
        dest = os.path.join(base, f"{len(roots)}", os.path.basename(root))
        shutil.copytree(root, dest, ignore=SKIP, symlinks=True)
        roots[root] = dest
    return Copy(base, roots)
