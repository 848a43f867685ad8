"""One project kept in memory between edits: every file's summary and the findings derived from them.

Loading analyses the whole project once (through `check`'s on-disk cache, so a warm start reads
summaries instead of parsing). After that an edit re-analyses only the edited file; the project
pass then reuses its reach whenever the file's call graph (`FileSummary.graph_key`) did not change
— most edits are inside a function body — and recomputes it when it did, so an edit in a callee's
file shows up in its callers' files. The pass itself is `engine.project_findings`, the same one
`check` runs: the server and `check .` give the same answer.
"""
from __future__ import annotations

import os
from typing import Dict, List, Optional, Set, Tuple

from compilelint.config import Settings
from compilelint.discover import discover
from compilelint.engine import analyze_bytes, analyze_files, project_findings
from compilelint.finding import Finding
from compilelint.summary import FileSummary

# How many project-pass results to remember: the current graph and a few before it, so undoing an
# edit that changed the graph finds its reach again.
REACH_RESULTS_KEPT = 4


class ReachMemo:
    """An in-memory stand-in for the on-disk cache, for `project_findings`' reach results: a warm
    server must not pickle the project's reach to disk and read it back on every keystroke."""

    def __init__(self):
        self._entries: Dict[str, object] = {}

    def get(self, key: str):
        return self._entries.get(key)

    def put(self, key: str, value) -> None:
        self._entries.pop(key, None)
        self._entries[key] = value
        while len(self._entries) > REACH_RESULTS_KEPT:
            del self._entries[next(iter(self._entries))]

    put_run = put


class ProjectContext:
    def __init__(self, root: str, settings: Settings):
        self.root = root
        self.settings = settings
        self.summaries: Dict[str, FileSummary] = {}
        # Files that do not parse right now, with the one-line reason. Their last good summary stays
        # in `summaries`, so a half-typed line does not make the rest of the project flicker.
        self.errors: Dict[str, str] = {}
        self.findings: Dict[str, List[Finding]] = {}
        self._reach = ReachMemo()

    def load(self) -> None:
        found = discover([self.root], self.settings.all_excludes, self.settings.respect_gitignore,
                         self.settings.force_exclude)
        summaries, errors = analyze_files(found.files, self.settings)
        self.summaries = {s.path: s for s in summaries}
        self.errors = {e.path: e.message for e in errors}
        self._derive()

    def update(self, path: str, text: str) -> Set[str]:
        """Re-analyse `path` from the editor's `text`; the paths whose findings or error changed."""
        status, value = analyze_bytes(path, text.encode("utf-8", "surrogateescape"),
                                      prefilter=self.settings.prefilter)
        before = self.errors.get(path)
        if status == "ok":
            self.summaries[path] = value
            self.errors.pop(path, None)
        else:
            self.errors[path] = value
        changed = self._derive() if status == "ok" else set()
        if self.errors.get(path) != before:
            changed.add(path)
        return changed

    def reload(self, path: str) -> Set[str]:
        """The file as it is on disk again (its editor closed without saving, or changed outside)."""
        try:
            with open(path, "rb") as f:
                data = f.read()
        except OSError:
            self.summaries.pop(path, None)
            self.errors.pop(path, None)
            return self._derive() | {path}
        return self.update(path, data.decode("utf-8", "surrogateescape"))

    def function_row(self, path: str, qualname: str) -> Optional[int]:
        summary = self.summaries.get(path)
        info = summary.functions.get(qualname) if summary else None
        return info.row if info else None

    def _derive(self) -> Set[str]:
        findings = project_findings(list(self.summaries.values()), self.settings, self._reach)
        by_path: Dict[str, List[Finding]] = {}
        for finding in findings:
            by_path.setdefault(finding.path, []).append(finding)
        changed = {p for p in set(by_path) | set(self.findings) if by_path.get(p) != self.findings.get(p)}
        self.findings = by_path
        return changed


def split_root(display: str) -> Tuple[str, str]:
    """A reach root as the engine shows it, `path.py:Class.forward`, into (path, qualname)."""
    path, _, qualname = display.rpartition(":")
    return os.path.normpath(path), qualname
