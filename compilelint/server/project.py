"""One project kept in memory between edits: every file's summary and the findings derived from them.

Loading analyses the whole project once (through `check`'s on-disk cache, so a warm start reads
summaries instead of parsing). After that an edit re-analyses only the edited file, and in it only
the functions the edit can change (`incremental`). The project pass then reuses its reach when the
file's call graph (`FileSummary.graph_key`) did not change — most edits are inside a function
body — or changed only in calls that cannot change it (`reach_unchanged`), and recomputes it
otherwise, so an edit in a callee's file shows up in its callers' files. The pass itself is
`engine.project_findings`, the same one `check` runs: the server and `check .` give the same answer.
Published findings carry no fixes; a code action gets them from a full analysis of the file's text.
"""
from __future__ import annotations

import dataclasses
import os
from typing import Dict, List, Optional, Set, Tuple

from compilelint.cache import Store
from compilelint.config import Settings
from compilelint.discover import discover
from compilelint.engine import analyze_bytes, analyze_files, project_findings
from compilelint.project_pass.frames import FramesMemo
from compilelint.project_pass.regions import Project, with_file
from compilelint.project_pass.resolved_calls import ON_SELF
from compilelint.project_pass.trees import ON_DISK, Trees, parse_bytes
from compilelint.finding import Finding
from compilelint.server.incremental import FileMemo, analyze_edit
from compilelint.summary import FileSummary

# How many project-pass results to remember: the current graph and a few before it, so undoing an
# edit that changed the graph finds its reach again.
REACH_RESULTS_KEPT = 4


class ReachMemo(Store):
    """An in-memory store for `project_findings`' reach results, in place of the on-disk cache: a
    warm server must not pickle the project's reach to disk and read it back on every keystroke."""

    def __init__(self):
        self._entries: Dict[str, object] = {}
        self.last = None  # the result the latest pass used
        # Set by the caller when it has shown the latest result holds for the graph at hand too.
        self.carry = False
        # `Store.known_roots`: the roots of the latest result, set by the caller when the graph at
        # hand differs from its graph in calls only (roots come from decorators, classes and
        # compile calls): then a pass that makes reach again does not look for roots again.
        self.known_roots = None

    def get(self, key: str):
        value = self._entries.pop(key, None)
        if value is None and self.carry and self.last is not None:
            value = self.last
        if value is not None:
            self.put(key, value)  # the most recently used is kept longest: undoing an edit finds it
        return value

    def put(self, key: str, value) -> None:
        self._entries.pop(key, None)
        self._entries[key] = value
        self.last = value
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
        # How each file is judged (its configuration, enabled and ignored codes): asked for every
        # file on every pass, and settled for the life of the project (a changed pyproject.toml
        # loads every project afresh).
        self._judges: Dict[str, tuple] = {}
        self._reach = ReachMemo()
        self._project: Optional[Project] = None  # the index of the last pass, patched by edits
        self._memos: Dict[str, FileMemo] = {}  # per edited file: what its next re-analysis reuses
        # The parsed modules project rules read (frames' loops, wrappers): an analysed text's tree
        # (a re-analysis's memo holds it), else the file on disk.
        self._trees = Trees(self._tree_of)
        self._notebook_trees: Dict[str, object] = {}  # notebooks have no memo: their last good text's tree
        self._frames = FramesMemo()  # valid while the project index is patched, not rebuilt
        self._passes = 0  # project passes so far: what a code action's findings were computed after
        self._with_fixes: tuple = (None, [])  # ((path, text, pass), its findings)

    def load(self) -> None:
        found = discover([self.root], self.settings.all_excludes, self.settings.respect_gitignore,
                         self.settings.force_exclude)
        summaries, errors = analyze_files(found.files, self.settings)
        self.summaries = {s.path: s for s in summaries}
        self.errors = {e.path: e.message for e in errors}
        self._trees = Trees(self._tree_of)
        self._derive()

    def update(self, path: str, text: str) -> Set[str]:
        """Re-analyse `path` from the editor's `text`; the paths whose findings or error changed."""
        status, value, memo = analyze_edit(path, text, self._memos.pop(path, None), self.settings.prefilter)
        if memo is not None:
            self._memos[path] = memo
        self._trees.forget(path)
        before = self.errors.get(path)
        old = self.summaries.get(path)
        if status == "ok":
            self.summaries[path] = value
            self.errors.pop(path, None)
            if memo is None:  # a notebook: its tree from its text, as the analysis parsed it
                self._notebook_trees[path] = parse_bytes(path, text.encode("utf-8", "surrogateescape"))
        else:
            self.errors[path] = value
        changed = self._derive(old, value) if status == "ok" else set()
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
            self._memos.pop(path, None)
            self._notebook_trees.pop(path, None)
            self._trees.forget(path)
            return self._derive() | {path}
        return self.update(path, data.decode("utf-8", "surrogateescape"))

    def _tree_of(self, path: str):
        memo = self._memos.get(path)
        if memo is not None and memo.lines is not None:
            return memo.tree  # the tree of the text last analysed (kept with the last good summary)
        return self._notebook_trees.get(path, ON_DISK)

    def function_row(self, path: str, qualname: str) -> Optional[int]:
        summary = self.summaries.get(path)
        info = summary.functions.get(qualname) if summary else None
        return info.row if info else None

    def findings_with_fixes(self, path: str, text: str) -> List[Finding]:
        """`path`'s findings as `check` reports them, fixes included, for the editor's `text`
        (what the last update analysed): a full analysis of the file, kept while neither the text
        nor the project changes."""
        key = (path, text, self._passes)
        if self._with_fixes[0] == key:
            return self._with_fixes[1]
        status, summary = analyze_bytes(path, text.encode("utf-8", "surrogateescape"), prefilter=self.settings.prefilter)
        if status != "ok":
            return []
        summaries = [summary if s.path == path else s for s in self.summaries.values()]
        last = self._reach.last
        try:
            found = [f for f in project_findings(summaries, self.settings, self._reach, judges=self._judges,
                                                 trees=self._trees, frames_memo=self._frames)
                     if f.path == path]
        finally:
            self._reach.last = last  # the next edit compares with the published state's reach
        self._with_fixes = (key, found)
        return found

    def _derive(self, old: Optional[FileSummary] = None, new: Optional[FileSummary] = None) -> Set[str]:
        """The project pass over the summaries; `old` → `new`: the one file that changed since the
        last pass, whose project index and reach are reused when its edit cannot change them."""
        self._passes += 1
        summaries = list(self.summaries.values())
        same_graph = old is not None and new is not None and old.module == new.module and (
            old.graph_key == new.graph_key or _graph_key_without_calls(old) == _graph_key_without_calls(new))
        project = with_file(self._project, old, new, summaries) if same_graph and self._project is not None else None
        if project is None:
            project = Project(summaries, self.settings.extra_roots, self.settings.extra_stops)
            self._frames = FramesMemo()  # a new index may answer name questions otherwise
        self._project = project
        self._reach.carry = same_graph and reach_unchanged(project, old, new, self._reach.last)
        self._reach.known_roots = self._reach.last[0] if same_graph and self._reach.last is not None else None
        try:
            findings = project_findings(summaries, self.settings, self._reach, project, self._judges,
                                        self._trees, self._frames)
        finally:
            self._reach.carry, self._reach.known_roots = False, None
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


def reach_unchanged(project: Project, old: FileSummary, new: FileSummary, last) -> bool:
    """Whether the reach computed before `old` became `new` (`last`: roots, reached, disabled
    calls) holds for `project` too, `old` and `new` differing in calls only. Reach reads the calls
    of reached functions only, in order, and only those calls that lead to some function of the
    project: so it holds when every function whose calls changed is either unreached or makes the
    same calls to project functions as before (a call to a helper outside the project, an unknown
    name). A call on `self` counts even with no such method: a subclass it runs for may have one.
    A function with a call to a disabled function is left out: the pass refers to those calls by
    their index."""
    if last is None:
        return False
    if old.graph_key == new.graph_key:
        return True
    _, reached, disabled = last
    callers = {caller for caller, _, _ in disabled}
    for qualname, info in new.functions.items():
        before = old.functions[qualname]  # same functions: the key without calls says so
        if _edges(before.calls) == _edges(info.calls):
            continue
        fid = f"{new.module}.{qualname}"
        if fid not in reached:
            continue
        if fid in callers or _followed(project, fid, before.calls) != _followed(project, fid, info.calls):
            return False
    return True


def _edges(calls) -> list:
    return [c.unplaced() for c in calls]  # as the graph key sees them


def _followed(project: Project, fid: str, calls) -> list:
    out = []
    for call in calls:
        callees = project.callees(fid, call)
        if callees or call.kind in ON_SELF:
            out.append((call.unplaced(), tuple(callees)))
    return out


def _graph_key_without_calls(summary: FileSummary) -> str:
    """Kept on the summary (never changed once made): the next edit compares with it again."""
    found = summary.__dict__.get("_graph_key_without_calls")
    if found is None:
        bare = dataclasses.replace(summary, functions={q: dataclasses.replace(f, calls=[]) for q, f in summary.functions.items()})
        found = summary.__dict__["_graph_key_without_calls"] = bare.compute_graph_key()
    return found
