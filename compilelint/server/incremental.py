"""Re-analyse an edited file, walking again only the functions the edit can change.

The file walk (`analysis.walker.FileAnalyzer`) visits each function once, in source order, with
what the file declares (`FileFacts`: imports, classes, globals) and what the rules have noted in
earlier functions. A function's result (its `FunctionInfo`: calls and candidates; what it adds to
the file's roots, file-wide candidates and custom ops) is therefore fixed by three things: its own
text, that shared state when its walk starts, and nothing else (rules see the file only through
the walker). So when a function's lines are unchanged and the state its walk starts from is equal
to last time, last time's result is its result, moved by the number of lines added above it. The
state is compared by value (`fingerprint_*`), rows left out. A function whose walk changed that
state is walked again, unless all it changed was to import names (a function-local import): then
a reuse adds them again. A module function's walk also depends on its callers in the file (they
type its parameters, `call_sites`): it is reused unless a function whose lines changed calls it
(in its old text or its new), directly or through other module functions. Facts, the
module-level walk, noqa and the graph key are computed afresh every time, as `check` computes
them, from a tree that re-parses only the changed statements (`reparse`).

What it leaves out: fixes. Candidates come out without them (a fix may edit lines outside its
function, e.g. to import torch, so it cannot be moved with it); the server builds fixes when a
code action asks for them, from a full analysis of the text (`ProjectContext.findings_with_fixes`).
"""
from __future__ import annotations

import ast
import dataclasses
import hashlib
import re
import warnings
from typing import Dict, List, Optional, Set, Tuple

from compilelint.analysis.astutil import FUNCS
from compilelint.analysis.call_sites import typed_by_callers
from compilelint.analysis.compiled_names import compiled_names
from compilelint.analysis.facts import FileFacts
from compilelint.analysis.walker import FileAnalyzer
from compilelint.file_text import FileText
from compilelint.finding import Span
from compilelint.notebook import decode_any
from compilelint.rule import OBJECT_ID_FLOOR, FixContext
from compilelint.server.reparse import first_row, function_nodes, reparse
from compilelint.source import SourceError, lines_with_ends
from compilelint.summary import Call, Candidate, ClassInfo, FileSummary, FunctionInfo, Root


class Unknown(Exception):
    """A value `fingerprint` cannot compare by value (a tree node, a function): no reuse."""


@dataclasses.dataclass
class Walked:
    """One function's walk: what it produced, and the conditions under which it holds again."""

    lines: Tuple[str, ...]  # its source lines, decorators included
    row: int  # its first line
    state: Optional[bytes]  # the shared state its walk started from (None: not comparable)
    state_out: Optional[bytes]  # and the one it left
    replayable: bool  # what it changed in that state is known: the names it imported
    imported: Dict[str, str]  # local name → dotted, added to the import table by its walk
    info: FunctionInfo
    added: Dict[str, list]  # summary list field → the items its walk appended (anywhere, roots, ...)


@dataclasses.dataclass
class FileMemo:
    """What the previous analysis of one file leaves for the next."""

    lines: List[str]
    tree: ast.Module
    walked: Dict[Tuple[str, int], Walked]  # (qualname, occurrence) → its walk
    nodes: Dict[int, list]  # FileFacts' per-function node lists, for the functions kept in `tree`
    compiled: Dict[int, tuple]  # IncrementalFacts' compiled names per function
    aliases: Optional[dict]  # and the import table they were found with
    reused: int = 0  # functions whose walk was reused (for tests and benchmarks)


class _NoTokens(FileText):
    """Fix builders' view of the text without the file-wide tokenize (the fixes are dropped)."""

    def _tokenize(self):
        self._tokens_done = True
        self.tokens_ok = False


class _NoFixes(FixContext):
    @property
    def text(self) -> FileText:
        if self._text is None:
            self._text = _NoTokens(self.source.text)
        return self._text


class IncrementalFacts(FileFacts):
    """File facts that take the compiled names of each piece of the module (`_parts`) from the
    previous analysis when the piece (the same tree node, kept as it was by the re-parse) and the
    module's imports are unchanged."""

    def __init__(self, path, source, tree):
        super().__init__(path, source, tree)
        self.remembered: Dict[int, tuple] = {}  # id(piece) → (the piece, its names)
        self.aliases: Optional[dict] = None  # the import table the remembered names were found with

    def find_compiled_names(self) -> Set[str]:
        text, resolve = self.source.text, self.resolve_plain
        if "compile" not in text and "optimize" not in text:
            return compiled_names(self.tree, text, resolve)  # its own early answer, no walk
        known = self.remembered if self.aliases == self.imports.aliases else {}
        self.remembered, self.aliases = {}, dict(self.imports.aliases)
        out: Set[str] = set()
        for part in _parts(self.tree):
            entry = known.get(id(part))
            names = entry[1] if entry is not None and entry[0] is part else compiled_names(part, text, resolve)
            self.remembered[id(part)] = (part, names)
            out |= names
        return out


def _parts(tree: ast.Module):
    """The module's nodes in pieces that together hold every node once: each top-level function
    and method whole, the rest of each class, every other statement."""
    for stmt in tree.body:
        if isinstance(stmt, ast.ClassDef):
            yield from ast.iter_child_nodes(stmt)
        else:
            yield stmt


class IncrementalAnalyzer(FileAnalyzer):
    facts_class = IncrementalFacts

    def __init__(self, path, source, tree, prefilter: bool, memo: Optional[FileMemo], lines: List[str],
                 prefer_module_reuse: bool = True):
        super().__init__(path, source, tree, prefilter)
        self.memo = memo
        self.lines = lines
        self.walked: Dict[Tuple[str, int], Walked] = {}
        self._seen: Dict[str, int] = {}
        self._state: Tuple[Optional[bytes], Optional[str]] = (None, None)
        self._state_known = False
        self._facts_key: Optional[str] = None
        self._facts_done = False
        self._cheap_fixes = _NoFixes(source, tree, self.module, self.imports, self.summary.classes)
        if memo is not None:  # what the re-parse kept (the same objects): node lists, compiled names
            self.facts.keep_nodes(memo.nodes)
            self.facts.remembered, self.facts.aliases = memo.compiled, memo.aliases
        self.reused = 0  # functions whose walk was reused
        self.facts_changed = False
        # The functions whose callers may type their parameters otherwise than last time, by call
        # name (`f`, `self.m`; None: every one). The functions walked must be those `_changed`
        # found (see `run`).
        self.retyped: Optional[Set[str]] = None
        self._keys: Set[Tuple[str, int]] = set()
        self._call_names: Dict[str, str] = {}  # qualname → how its callers call it, when they can type it
        self._self_calls: Set[str] = set()  # `self.<attr>(` calls in the changed and retyped functions
        # What a call of a function of the file returns is read from its body (`call_sites.returns`):
        # a function calling one whose lines changed (or one calling such a one) is walked again.
        self._returns_changed: Optional[re.Pattern] = None
        if memo is not None and prefer_module_reuse:
            changed, self._keys, texts, self._call_names = _changed(memo, self.facts.top, lines)
            self.retyped = _retyped(changed, texts, memo)
            self._returns_changed = _callers_of_changed(memo, self.facts.top, lines)
            # a `forward` is typed by the `self.attr(...)` calls of the classes holding it too
            self._self_calls = _self_calls(changed + [texts[n] for n in self.retyped if n in texts])

    @property
    def fixes(self) -> FixContext:
        return self._cheap_fixes

    def walk_function(self, node, cls):
        qualname = f"{cls.info.qualname}.{node.name}" if cls else node.name
        occurrence = self._seen.get(qualname, 0)
        self._seen[qualname] = occurrence + 1
        key = (qualname, occurrence)
        row = first_row(node)
        lines = tuple(self.lines[row - 1:node.end_lineno])
        state, rest = self._current_state()
        before = self.memo.walked.get(key) if self.memo is not None else None
        # A function's parameters can be typed by its callers in the file (call_sites.py): its
        # walk depends on its callers' lines too, so it is reused only when no changed function
        # calls it (`_retyped`).
        if before is not None and before.replayable and state is not None and before.state == state \
                and before.lines == lines and self.retyped is not None \
                and self._call_names.get(qualname) not in self.retyped and not self._holder_called(node, cls) \
                and not (self._returns_changed is not None and self._returns_changed.search("".join(lines))):
            self._reuse(key, before, row)
            return
        aliases = dict(self.imports.aliases)
        lengths = {name: len(value) for name, value in _list_fields(self.summary)}
        super().walk_function(node, cls)
        info = _without_fixes(self.summary.functions[qualname])
        self.summary.functions[qualname] = info
        added = {name: [_without_fixes(x) for x in value[lengths[name]:]]
                 for name, value in _list_fields(self.summary) if len(value) > lengths[name]}
        for name, items in added.items():
            getattr(self.summary, name)[lengths[name]:] = items
        self._state_known = False
        state_out, rest_out = self._current_state()
        # Replayable: its walk changed no shared state but the import table (a function-local
        # import), and only by adding names, which a reuse adds again.
        now = self.imports.aliases
        imported = {k: v for k, v in now.items() if aliases.get(k, _MISSING) != v}
        replayable = state is not None and state_out is not None and rest_out == rest and aliases.keys() <= now.keys()
        self.walked[key] = Walked(lines, row, state, state_out, replayable, imported, info, added)

    def _holder_called(self, node, cls) -> bool:
        """Did a changed (or retyped) function call the attribute of a class that holds this
        `forward`'s module? Those calls type its parameters (call_sites._submodule_callers)."""
        if node.name != "forward" or cls is None or not self._self_calls:
            return False
        dotted = f"{self.facts.module}.{cls.info.qualname}"
        return any(attr in self._self_calls for holder in self.facts.classes.values()
                   for attr, built in holder.info.submodules.items() if dotted in built)

    def _reuse(self, key, before: Walked, row: int) -> None:
        delta = row - before.row
        info = _moved(before.info, delta)
        self.summary.functions[info.qualname] = info
        added = {name: [_moved(x, delta) for x in items] for name, items in before.added.items()}
        for name, items in added.items():
            getattr(self.summary, name).extend(items)
        if before.imported:
            self.imports.aliases.update(before.imported)
            self._state = (before.state_out, self._state[1])  # what the walk would have left: the same
        self.walked[key] = dataclasses.replace(before, row=row, info=info, added=added)
        self.reused += 1

    def run(self) -> FileSummary:
        summary = super().run()
        # A function `_changed` did not see (a method of a nested class): its change went uncounted.
        self.missed_functions = self.retyped is not None and set(self.walked) != self._keys
        # The facts are fixed once collected (the walker's promise, but checked): had some walk
        # changed them, the functions reused after it would not have seen them as it left them.
        self.facts_changed = self._facts_done and fingerprint_facts(self.facts) != self._facts_key
        return summary

    def _current_state(self) -> Tuple[Optional[bytes], Optional[str]]:
        """(a digest of the whole shared state, the part of it outside the import table)."""
        if not self._facts_done:  # at the first function: the facts are complete
            self._facts_key, self._facts_done = fingerprint_facts(self.facts), True
        if not self._state_known:
            imports, rest = fingerprint_imports(self.facts), fingerprint_state(self)
            whole = None if None in (imports, rest, self._facts_key) else \
                hashlib.blake2b("\n".join((self._facts_key, rest, imports)).encode("utf-8", "surrogateescape"),
                                digest_size=16).digest()
            self._state = (whole, rest)
            self._state_known = True
        return self._state


_MISSING = object()


def _changed(memo: FileMemo, top, lines: List[str]):
    """(the texts, old and new, of the functions whose lines changed, added or removed ones
    included; the keys of the functions the walk will visit; the text of each function its callers
    can type, by call name; those functions' call names by qualname), for the module's functions
    and the methods of its classes (`top`: its statements, as the walk takes them)."""
    new: Dict[Tuple[str, int], Tuple[str, ...]] = {}
    seen: Dict[str, int] = {}
    call_names: Dict[str, str] = {}
    for stmt in top:
        if isinstance(stmt, FUNCS):
            items = [(stmt.name, stmt, False)]
        elif isinstance(stmt, ast.ClassDef):
            items = [(f"{stmt.name}.{m.name}", m, True) for m in stmt.body if isinstance(m, FUNCS)]
        else:
            continue
        for qualname, node, method in items:
            occurrence = seen.get(qualname, 0)
            seen[qualname] = occurrence + 1
            new[(qualname, occurrence)] = tuple(lines[first_row(node) - 1:node.end_lineno])
            if typed_by_callers(node, method):
                call_names[qualname] = "self." + node.name if method else node.name
    changed = ["".join(text) for key, text in new.items() if key not in memo.walked or memo.walked[key].lines != text]
    changed += ["".join(w.lines) for key, w in memo.walked.items() if new.get(key) != w.lines]
    texts: Dict[str, str] = {}
    for (qualname, _), text in new.items():
        name = call_names.get(qualname)
        if name is not None:
            texts[name] = texts.get(name, "") + "".join(text)
    return changed, set(new), texts, call_names


def _callers_of_changed(memo: FileMemo, top, lines: List[str]) -> Optional[re.Pattern]:
    """A pattern matching a call of a function whose lines changed, or of one that calls such a
    function, and so on (by bare name: `self.m(` and `m(` alike, more than needed, never less)."""
    texts: Dict[str, str] = {}
    for stmt in top:
        nodes = [stmt] if isinstance(stmt, FUNCS) else \
            [m for m in stmt.body if isinstance(m, FUNCS)] if isinstance(stmt, ast.ClassDef) else []
        for node in nodes:
            texts[node.name] = texts.get(node.name, "") + "".join(lines[first_row(node) - 1:node.end_lineno])
    old: Dict[str, str] = {}
    for (qualname, _), walked in memo.walked.items():
        name = qualname.rsplit(".", 1)[-1]
        old[name] = old.get(name, "") + "".join(walked.lines)
    names = {name for name in set(texts) | set(old) if texts.get(name) != old.get(name)}
    while names:
        pattern = re.compile(r"\b(%s)\s*\(" % "|".join(sorted(map(re.escape, names))))
        more = {name for name, text in texts.items() if name not in names and pattern.search(text)}
        if not more:
            return pattern
        names |= more
    return None


_SELF_CALL = re.compile(r"\bself\s*\.\s*(\w+)\s*\(")


def _self_calls(texts: List[str]) -> Set[str]:
    """The attributes these texts call on `self` (`self.positions(` → positions)."""
    return {name for text in texts for name in _SELF_CALL.findall(text)}


def _retyped(changed: List[str], texts: Dict[str, str], memo: FileMemo) -> Set[str]:
    """The functions its callers can type that a changed function calls (in its old text or its
    new), and those they call, and so on, as call names (`f`, `self.m`): their callers' bindings,
    which type their parameters, may differ. A name followed by `(` counts as a call (`self.f(` too:
    more than needed, never less)."""
    names = set(texts) | {qualname for qualname, _ in memo.walked if "." not in qualname}
    if not names or not changed:
        return set()
    bare = sorted({re.escape(name.rsplit(".", 1)[-1]) for name in names})
    call = re.compile(r"(\bself\s*\.\s*)?\b(%s)\s*\(" % "|".join(bare))

    def called(text: str) -> Set[str]:
        found = set()
        for prefix, name in call.findall(text):
            found.add(name)  # a module function's call (`self.f(` too: more than needed, never less)
            if prefix:
                found.add("self." + name)
        return found & names

    out = {name for text in changed for name in called(text)}
    todo = list(out)
    while todo:
        for name in called(texts.get(todo.pop(), "")):
            if name not in out:
                out.add(name)
                todo.append(name)
    return out


# ----- the shared state, by value -------------------------------------------------------------------
# FileFacts' own copies of the tree and text, and its cache of each function's nodes (a pure
# function of the node): not state. A class's row moves with the lines above it and is read by
# no walk of another function.
_NOT_STATE = {"tree", "source", "top", "_nodes", "path"}
# Rules keep notes per function or per node, keyed by `id()` (`self.seen[id(fn)]`). A walk looks
# up only the ids of what it visits, and every function's nodes are alive and distinct while the
# file is walked, so notes made in other functions are never read by this one: they are left out
# (the rule-state contract, `compilelint.rule.OBJECT_ID_FLOOR`).


# Facts a function's walk may change: local imports join the import table; a lazily built table.
# The other facts are fixed once collected: compared once per file, before and after the walk.
_CHANGING = ("imports", "_module_constructed")


def fingerprint_facts(facts) -> Optional[str]:
    """The facts no walk changes, as comparable text (None: some value is not comparable)."""
    try:
        return "\n".join(sorted(f"{k}={_plain(v)}" for k, v in vars(facts).items()
                                 if k not in _NOT_STATE and k not in _CHANGING))
    except Unknown:
        return None


def fingerprint_imports(facts) -> Optional[str]:
    try:
        return _plain(facts.imports)
    except Unknown:
        return None


def fingerprint_state(analyzer: FileAnalyzer) -> Optional[str]:
    """What else a walk may change (a lazily built fact, every rule's own attributes), as
    comparable text; None when some value cannot be compared by value."""
    try:
        parts = [f"{k}={_plain(getattr(analyzer.facts, k, None))}" for k in _CHANGING if k != "imports"]
        for rule in analyzer.rules:
            parts.append(f"{type(rule).__name__}={_plain(rule.walk_state())}")
        return "\n".join(sorted(parts))
    except Unknown:
        return None


_SCALARS = (str, int, float, bool, bytes, type(None))


def _plain(value) -> str:
    if isinstance(value, _SCALARS):
        return repr(value)
    if isinstance(value, (list, tuple)):
        return "[" + ",".join(_plain(v) for v in value) + "]"
    if isinstance(value, (set, frozenset)):
        return "{" + ",".join(sorted(_plain(v) for v in value if not _is_id(v))) + "}"
    if isinstance(value, dict):
        return "{" + ",".join(sorted(f"{_plain(k)}:{_plain(v)}" for k, v in value.items() if not _is_id(k))) + "}"
    if isinstance(value, ClassInfo):
        return "ClassInfo(" + ",".join(f"{f.name}={_plain(getattr(value, f.name))}"
                                       for f in dataclasses.fields(value) if f.name != "row") + ")"
    if isinstance(value, ast.AST) or callable(value):
        raise Unknown(type(value).__name__)
    if hasattr(value, "__dict__"):
        return f"{type(value).__name__}({_plain(vars(value))})"
    raise Unknown(type(value).__name__)


def _is_id(value) -> bool:
    return type(value) is int and value > OBJECT_ID_FLOOR


# ----- moving results with their lines ---------------------------------------------------------------
def _moved(value, delta: int):
    """`value` (a FunctionInfo, Candidate, Call or Root) with every row moved by `delta`."""
    if delta == 0:
        return value
    if isinstance(value, FunctionInfo):
        return dataclasses.replace(value, row=value.row + delta, end_row=value.end_row + delta,
                                   calls=[_moved(c, delta) for c in value.calls],
                                   candidates=[_moved(c, delta) for c in value.candidates])
    if isinstance(value, Candidate):
        return dataclasses.replace(value, span=_span(value.span, delta))
    if isinstance(value, Call):
        return Call(value[:3] + (value[3] + delta,) + value[4:])
    if isinstance(value, Root):
        return dataclasses.replace(value, row=value.row + delta)
    if isinstance(value, (str, tuple)):  # a constructor call's record (`FileSummary.constructions`): no rows
        return value
    raise TypeError(f"cannot move a {type(value).__name__}")  # a new kind of output: teach it here


def _span(span: Span, delta: int) -> Span:
    return Span(span.row + delta, span.col, span.end_row + delta, span.end_col)


def _without_fixes(value):
    if isinstance(value, FunctionInfo):
        value.candidates = [_without_fixes(c) for c in value.candidates]
        return value
    if isinstance(value, Candidate) and value.fix is not None:
        return dataclasses.replace(value, fix=None)
    return value


def _list_fields(summary: FileSummary):
    """The summary's lists a function's walk may append to (roots, file-wide candidates, ...)."""
    return [(f.name, getattr(summary, f.name)) for f in dataclasses.fields(summary)
            if isinstance(getattr(summary, f.name), list)]


# ----- one edit -----------------------------------------------------------------------------------
def analyze_edit(path: str, text: str, memo: Optional[FileMemo], prefilter: bool = True):
    """('ok', FileSummary, FileMemo) or ('error', message, None), as `engine.analyze_bytes` answers
    for the same text, minus fixes. `memo` is the previous call's (it is used up)."""
    from compilelint.engine import analyze_bytes

    if path.endswith(".ipynb"):
        status, value = analyze_bytes(path, text.encode("utf-8", "surrogateescape"), prefilter=prefilter)
        return status, value, None
    previous = memo
    try:
        source = decode_any(path, text.encode("utf-8", "surrogateescape"))
        lines = lines_with_ends(source.text)
        source._lines = lines  # SourceFile.lines, split once
        tree = _reparse(memo, lines, source.text) if memo is not None else None
        if tree is None:
            memo = None  # nothing to reuse without the old tree's nodes
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                tree = ast.parse(source.text, filename=path)
    except (SourceError, SyntaxError, ValueError, RecursionError, MemoryError):
        previous = previous if previous is None or previous.lines is not None else None
        # analyze_bytes words every failure (it fails again on the same text). The old tree is
        # untouched (`reparse` changes it only when it succeeds): the next edit can still use it.
        status, value = analyze_bytes(path, text.encode("utf-8", "surrogateescape"), prefilter=prefilter)
        return status, value, previous
    try:
        analyzer = IncrementalAnalyzer(path, source, tree, prefilter, memo, lines)
        summary = analyzer.run()
        if analyzer.missed_functions and not analyzer.facts_changed:  # walk the caller-typed functions again
            analyzer = IncrementalAnalyzer(path, source, tree, prefilter, memo, lines, prefer_module_reuse=False)
            summary = analyzer.run()
        if analyzer.facts_changed and memo is not None:  # walk every function, reusing nothing
            analyzer = IncrementalAnalyzer(path, source, tree, prefilter, None, lines)
            summary = analyzer.run()
        if analyzer.facts_changed:
            for walked in analyzer.walked.values():  # no state of this run is comparable
                walked.state = None
    except Exception:  # a bug here or in a rule: let the engine's own path word it
        status, value = analyze_bytes(path, text.encode("utf-8", "surrogateescape"), prefilter=prefilter)
        return status, value, None
    summary.cells = getattr(source, "cells", ())
    kept = analyzer.facts.walked_nodes(function_nodes(tree))
    facts = analyzer.facts
    return "ok", summary, FileMemo(lines, tree, analyzer.walked, kept, facts.remembered, facts.aliases,
                                   analyzer.reused)


def _reparse(memo: FileMemo, lines: List[str], text: str) -> Optional[ast.Module]:
    try:
        return reparse(memo.tree, memo.lines, lines, text, memo.nodes)
    except Exception:  # a bug of ours, maybe half-way through changing the old tree: drop it
        memo.lines = None
        return None
