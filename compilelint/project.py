"""Project context: which files are analysed so that cross-file reach never depends on which files
were named.

`compilelint check helpers.py` must say what `compilelint check .` says about helpers.py, even when
the only `@torch.compile` that reaches it is in another file: pre-commit passes a few staged files,
in batches, and an editor passes one. So the named files are analysed together with the rest of
their project (the folder of their configuration file, else their git/hg root; no context for a
file in neither), and only the named files' findings and errors are reported. The other files come
from the per-file cache, so a warm run reads none of them.
"""
from __future__ import annotations

import os
from typing import Iterable, List, Optional, Tuple

from compilelint.config import Settings
from compilelint.discover import discover

VCS_MARKERS = (".git", ".hg")


def vcs_root(path: str) -> Optional[str]:
    """The nearest folder at or above `path` holding `.git` (a folder, or a worktree's file) or `.hg`."""
    d = os.path.abspath(path)
    if not os.path.isdir(d):
        d = os.path.dirname(d)
    while True:
        if any(os.path.exists(os.path.join(d, m)) for m in VCS_MARKERS):
            return d
        parent = os.path.dirname(d)
        if parent == d:
            return None
        d = parent


def project_root(path: str, settings: Settings) -> Optional[str]:
    """The folder of the configuration that judges `path`, else its VCS root, else None."""
    judged = settings.for_path(path)
    if judged.config_path:
        return os.path.dirname(os.path.abspath(judged.config_path))
    return vcs_root(path)


def _shown(folder: str) -> str:
    """A folder as discovery should spell it: relative when under the working directory, so that
    context files are spelled the way a user names them (`pkg/a.py`, not `/home/.../pkg/a.py`)."""
    rel = os.path.relpath(folder)
    return rel if not rel.startswith("..") else folder


def with_context(named: List[str], settings: Settings, stats: Optional[dict] = None) -> List[str]:
    """The named files plus every other file of their projects, sorted (so that the cache's keys
    do not depend on which files were named). A file reached both ways keeps the named spelling.
    Only the named ones where the settings judge them alone. `stats`: given the stat the walk
    took of each file it found (`Discovery.stats`)."""
    if settings.named_alone:
        return list(named)
    roots = sorted({r for r in (project_root(p, settings) for p in named) if r})
    if not roots:
        return list(named)
    cwd = os.getcwd()
    files = {os.path.normpath(os.path.join(cwd, p)): p for p in named}
    for root in roots:
        found = discover([_shown(root)], settings.is_excluded, settings.respect_gitignore, force_exclude=False)
        for path in found.files:  # normalised by the walk: joining is enough (realpath costs a stat chain)
            files.setdefault(os.path.join(cwd, path), path)
        if stats is not None:
            stats.update(found.stats)
    return sorted(files.values())


def named_only(findings: Iterable, errors: Iterable, named: Iterable[str]) -> Tuple[list, list]:
    """Only what concerns the named files: the others were context."""
    keep = set(named)
    return [f for f in findings if f.path in keep], [e for e in errors if e.path in keep]
