"""Which files a run checks: walk directories for `*.py`/`*.pyi`, skipping what nobody wants linted.

Skipped while walking: VCS folders, virtualenvs, caches, `__pycache__`, what `.gitignore` files
ignore, and the configured excludes. Paths named explicitly are always checked unless
`--force-exclude` is given (what pre-commit passes).
"""
from __future__ import annotations

import fnmatch
import os
from dataclasses import dataclass, field
from typing import Dict, Iterable, List, Optional, Tuple

SKIP_DIRS = {
    ".git", ".hg", ".svn", ".bzr", "__pycache__", ".mypy_cache", ".pytest_cache", ".ruff_cache",
    ".tox", ".nox", ".venv", "venv", ".eggs", "node_modules", "_build", "buck-out", "build", "dist",
    ".compilelint_cache", "site-packages", ".hypothesis", ".ipynb_checkpoints",
}
EXTENSIONS = (".py", ".pyi")


@dataclass
class Discovery:
    files: List[str] = field(default_factory=list)
    missing: List[str] = field(default_factory=list)  # paths that do not exist
    errors: List[Tuple[str, str]] = field(default_factory=list)  # (folder, why) it could not be listed


class _GitIgnore:
    """The subset of gitignore that real projects use: globs, `dir/`, `/anchored`, `**`, `!negation`."""

    def __init__(self, base: str, lines: Iterable[str]):
        self.base = base
        self.rules: List[Tuple[str, bool, bool, bool]] = []  # pattern, negate, dir_only, anchored
        for raw in lines:
            line = raw.rstrip("\n").rstrip()
            if not line or line.startswith("#"):
                continue
            negate = line.startswith("!")
            if negate:
                line = line[1:]
            dir_only = line.endswith("/")
            line = line.strip("/") if dir_only else line
            anchored = line.startswith("/") or "/" in line
            self.rules.append((line.lstrip("/"), negate, dir_only, anchored))

    def ignored(self, path: str, is_dir: bool) -> Optional[bool]:
        rel = os.path.relpath(path, self.base).replace(os.sep, "/")
        verdict = None
        for pattern, negate, dir_only, anchored in self.rules:
            if dir_only and not is_dir:
                continue
            target = rel if anchored else rel.rsplit("/", 1)[-1]
            if _glob_match(target, pattern):
                verdict = not negate
        return verdict


def _glob_match(name: str, pattern: str) -> bool:
    if "**" in pattern:
        pattern = pattern.replace("**/", "*").replace("/**", "/*")
    return fnmatch.fnmatchcase(name, pattern)


def matches_any(path: str, patterns: Iterable[str]) -> bool:
    """Ruff-style exclude matching: a pattern matches the path, any suffix of it, or a part of it."""
    norm = path.replace(os.sep, "/").lstrip("./")
    parts = norm.split("/")
    for pattern in patterns:
        p = pattern.rstrip("/")
        if _glob_match(norm, p) or _glob_match(norm, "*/" + p) or any(_glob_match(part, p) for part in parts):
            return True
    return False


def discover(paths: List[str], exclude: List[str], respect_gitignore: bool = True,
             force_exclude: bool = False) -> Discovery:
    out = Discovery()
    seen = set()
    ignore_cache: Dict[str, Optional[_GitIgnore]] = {}

    def add(path):
        try:  # the same file reached twice (a symlink, overlapping arguments) is checked once
            st = os.stat(path)
            key = (st.st_dev, st.st_ino)
        except OSError:
            key = os.path.realpath(path)
        if key not in seen:
            seen.add(key)
            out.files.append(path)

    for given in paths:
        if not os.path.lexists(given):
            out.missing.append(given)
            continue
        if os.path.isdir(given):
            if force_exclude and matches_any(given, exclude):
                continue
            _walk(given, exclude, respect_gitignore, ignore_cache, add, out.errors)
        elif force_exclude and matches_any(given, exclude):
            continue
        else:
            add(given)  # named explicitly: checked whatever its extension
    return out


def _walk(root, exclude, respect_gitignore, ignore_cache, add, errors=None):
    visited = set()

    def onerror(e: OSError):  # a folder that can't be listed: the run is incomplete, say so
        if errors is not None:
            errors.append((e.filename or root, e.strerror or str(e)))

    for dirpath, dirnames, filenames in os.walk(root, onerror=onerror, followlinks=True):
        real = os.path.realpath(dirpath)
        if real in visited:  # a symlink loop
            dirnames[:] = []
            continue
        visited.add(real)
        ignores = _ignores_for(dirpath, ignore_cache) if respect_gitignore else []
        keep = []
        for d in sorted(dirnames):
            full = os.path.join(dirpath, d)
            if d in SKIP_DIRS or d.endswith(".egg-info") or _is_virtualenv(full):
                continue
            if matches_any(full, exclude) or _is_ignored(full, True, ignores):
                continue
            keep.append(d)
        dirnames[:] = keep
        for name in sorted(filenames):
            if not name.endswith(EXTENSIONS):
                continue
            full = os.path.join(dirpath, name)
            if matches_any(full, exclude) or _is_ignored(full, False, ignores):
                continue
            if os.path.isfile(full):
                add(full[2:] if full.startswith("./") else full)  # Ruff prints `a.py`, not `./a.py`


def _is_virtualenv(path: str) -> bool:
    return os.path.isfile(os.path.join(path, "pyvenv.cfg"))


def _is_ignored(path: str, is_dir: bool, ignores) -> bool:
    verdict = False
    for gi in ignores:  # outermost first: nearer files override
        v = gi.ignored(path, is_dir)
        if v is not None:
            verdict = v
    return verdict


def _ignores_for(dirpath: str, cache) -> list:
    """The .gitignore files that apply inside `dirpath`, from the repository root down."""
    chain = []
    d = os.path.abspath(dirpath)
    while True:
        if d not in cache:
            f = os.path.join(d, ".gitignore")
            try:
                with open(f, encoding="utf-8", errors="replace") as fh:
                    cache[d] = _GitIgnore(d, fh.readlines())
            except OSError:
                cache[d] = None
        if cache[d] is not None:
            chain.append(cache[d])
        if os.path.isdir(os.path.join(d, ".git")):
            break
        parent = os.path.dirname(d)
        if parent == d:
            break
        d = parent
    return list(reversed(chain))
