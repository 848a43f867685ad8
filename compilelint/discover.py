"""Which files a run checks: walk directories for `*.py`/`*.pyi`, skipping what nobody wants linted.

Skipped while walking: VCS folders, virtualenvs, caches, `__pycache__`, what git ignores (`.gitignore`
files, `.git/info/exclude`, the global `core.excludesFile`), and the configured excludes (each
relative to its configuration's folder). A link found by walking that leads nowhere is kept, so
that it is reported as unreadable rather than skipped in silence. Paths named explicitly are always checked unless
`--force-exclude` is given (what pre-commit passes).
"""
from __future__ import annotations

import fnmatch
import os
import stat
from dataclasses import dataclass, field
import subprocess
from typing import Callable, Dict, Iterable, List, Optional, Tuple, Union

SKIP_DIRS = {
    ".git", ".hg", ".svn", ".bzr", "__pycache__", ".mypy_cache", ".pytest_cache", ".ruff_cache",
    ".tox", ".nox", ".venv", "venv", ".eggs", "node_modules", "_build", "buck-out", "build", "dist",
    ".compilelint_cache", "site-packages", ".hypothesis", ".ipynb_checkpoints",
}
EXTENSIONS = (".py", ".pyi", ".ipynb")


@dataclass
class Discovery:
    files: List[str] = field(default_factory=list)
    missing: List[str] = field(default_factory=list)  # paths that do not exist
    errors: List[Tuple[str, str]] = field(default_factory=list)  # (folder, why) it could not be listed
    # The stat of each file the walk found, taken to tell it is a file: its signature (`engine._signature`)
    # needs no second one.
    stats: Dict[str, os.stat_result] = field(default_factory=dict)


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
        """`path`: absolute and normal (the walk's folder made absolute once, joined with a name)."""
        inside = self.base if self.base.endswith(os.sep) else self.base + os.sep
        rel = path[len(inside):] if path.startswith(inside) else os.path.relpath(path, self.base)
        rel = rel.replace(os.sep, "/")
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


def discover(paths: List[str], exclude: Union[List[str], Callable[[str], bool]], respect_gitignore: bool = True,
             force_exclude: bool = False) -> Discovery:
    """`exclude`: patterns, or a function saying whether a path is excluded (`Settings.is_excluded`)."""
    if not callable(exclude):
        patterns = list(exclude)
        exclude = lambda path: matches_any(path, patterns)  # noqa: E731
    out = Discovery()
    seen = set()
    ignore_cache: Dict[str, Optional[_GitIgnore]] = {}

    def add(path, st=None):
        walked = st is not None
        try:  # the same file reached twice (a symlink, overlapping arguments) is checked once
            st = st or os.stat(path)
            key = (st.st_dev, st.st_ino)
        except OSError:
            key = os.path.realpath(path)
        if key not in seen:
            seen.add(key)
            out.files.append(path)
            if walked:
                out.stats[path] = st

    for given in paths:
        if not os.path.lexists(given):
            out.missing.append(given)
            continue
        if os.path.isdir(given):
            if force_exclude and exclude(given):
                continue
            _walk(given, exclude, respect_gitignore, ignore_cache, add, out.errors)
        elif force_exclude and exclude(given):
            continue
        else:
            add(given)  # named explicitly: checked whatever its extension
    return out


def _walk(root, exclude, respect_gitignore, ignore_cache, add, errors=None):
    visited = set()
    # Each folder's real path, for symlink loops: a folder that is no link is its parent's real
    # path and its name (one lstat, not `realpath`'s one per component of the path).
    reals = {root: os.path.realpath(root)}

    def onerror(e: OSError):  # a folder that can't be listed: the run is incomplete, say so
        if errors is not None:
            errors.append((e.filename or root, e.strerror or str(e)))

    for dirpath, dirnames, filenames in os.walk(root, onerror=onerror, followlinks=True):
        real = reals.pop(dirpath, None) or os.path.realpath(dirpath)
        if real in visited:  # a symlink loop
            dirnames[:] = []
            continue
        visited.add(real)
        ignores = _ignores_for(dirpath, ignore_cache) if respect_gitignore else []
        absolute = os.path.abspath(dirpath)  # once per folder: gitignore patterns match from their folder
        keep = []
        for d in sorted(dirnames):
            full = os.path.join(dirpath, d)
            if d in SKIP_DIRS or d.endswith(".egg-info") or _is_virtualenv(full):
                continue
            if exclude(full) or ignores and _is_ignored(os.path.join(absolute, d), True, ignores):
                continue
            keep.append(d)
            reals[full] = os.path.realpath(full) if os.path.islink(full) else os.path.join(real, d)
        dirnames[:] = keep
        for name in sorted(filenames):
            if not name.endswith(EXTENSIONS):
                continue
            full = os.path.join(dirpath, name)
            if exclude(full) or ignores and _is_ignored(os.path.join(absolute, name), False, ignores):
                continue
            try:  # one stat says it is a file and, to `add`, which one
                st = os.stat(full)
            except OSError:  # a broken link is named (and reported unreadable), as any other file
                st = None
            if st is not None and stat.S_ISREG(st.st_mode) or st is None and os.path.islink(full):
                add(full[2:] if full.startswith("./") else full, st)  # Ruff prints `a.py`, not `./a.py`


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
    """What git ignores inside `dirpath`, lowest precedence first: the global excludes file,
    `.git/info/exclude`, then the .gitignore files from the repository root down."""
    chain = []
    d = os.path.abspath(dirpath)
    while True:
        if d not in cache:
            cache[d] = _read_ignore(d, os.path.join(d, ".gitignore"))
        if cache[d] is not None and cache[d].rules:  # a file of no rules decides nothing
            chain.append(cache[d])
        if os.path.exists(os.path.join(d, ".git")):  # a folder, or a file in a worktree
            key = ("info", d)
            if key not in cache:
                cache[key] = _read_ignore(d, os.path.join(_git_dir(d), "info", "exclude"))
            if cache[key] is not None and cache[key].rules:
                chain.append(cache[key])
            if ("global", d) not in cache:
                path = _global_excludes_file()
                cache[("global", d)] = _read_ignore(d, path) if path else None
            if cache[("global", d)] is not None and cache[("global", d)].rules:
                chain.append(cache[("global", d)])
            break
        parent = os.path.dirname(d)
        if parent == d:
            break
        d = parent
    return list(reversed(chain))


def _read_ignore(base: str, path: str) -> Optional[_GitIgnore]:
    try:
        with open(path, encoding="utf-8", errors="replace") as fh:
            return _GitIgnore(base, fh.readlines())
    except OSError:
        return None


def _git_dir(root: str) -> str:
    """`root/.git`, or where a worktree's `.git` file points (`gitdir: ...`)."""
    dot_git = os.path.join(root, ".git")
    if os.path.isfile(dot_git):
        try:
            with open(dot_git, encoding="utf-8") as f:
                line = f.readline().strip()
        except OSError:
            return dot_git
        if line.startswith("gitdir:"):
            target = os.path.join(root, line[len("gitdir:"):].strip())
            common = os.path.join(target, "commondir")  # info/exclude is shared by all worktrees
            try:
                with open(common, encoding="utf-8") as f:
                    return os.path.normpath(os.path.join(target, f.read().strip()))
            except OSError:
                return target
    return dot_git


_GLOBAL: List[Optional[str]] = []


def _global_excludes_file() -> Optional[str]:
    """git's `core.excludesFile`, else its default `$XDG_CONFIG_HOME/git/ignore` (asked once)."""
    if not _GLOBAL:
        configured = None
        try:
            r = subprocess.run(["git", "config", "--global", "--path", "--get", "core.excludesFile"],
                               capture_output=True, text=True, timeout=10, stdin=subprocess.DEVNULL)
            configured = r.stdout.strip() or None
        except (OSError, subprocess.SubprocessError):  # no git: its default file still counts
            configured = None
        if not configured:
            base = os.environ.get("XDG_CONFIG_HOME") or os.path.join(os.path.expanduser("~"), ".config")
            configured = os.path.join(base, "git", "ignore")
        _GLOBAL.append(os.path.expanduser(configured))
    return _GLOBAL[0]
