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
        return _moved(path, self.roots.items())

    def to_original(self, path: str) -> str:
        return _moved(path, ((copy, orig) for orig, copy in self.roots.items()))

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


def _moved(path: str, pairs) -> str:
    """`path` under the first folder of `pairs` ((from, to) each) that holds it, moved to its `to`;
    as it is elsewhere, and for "<string>" or no file at all (a compilation metric without one)."""
    if not path or path.startswith("<"):
        return path
    real = os.path.realpath(os.path.abspath(path))
    for frm, to in pairs:
        if real == frm or real.startswith(frm + os.sep):
            return to + real[len(frm):]
    return path
