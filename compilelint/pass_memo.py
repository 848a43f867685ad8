"""The last project pass, reused when the files changed since leave their summaries as they were.

The project pass is a function of the files' summaries, the settings that judge them and the text
of the few files whose functions it parses (`Trees`: loops, a decorator's inner wrapper). An
edit that its file's summary does not show — a comment, a docstring: nothing that moves a line or
that the per-file analysis records — changes none of them, so the pass's result stands.
Pre-commit after such an edit then reads no summary but the edited file's: in a 3,231-file
checkout the pass and the summaries' loading were most of the run.

So the latest pass over a set of files is kept with the content key of every file it read and the
files whose text it parsed. A later run over the same files and settings takes its result when
every file whose content changed (a) was not parsed by the pass and (b) has a summary equal to the
one the pass read. Summaries are compared by their pickles made without pickle's memo: equal bytes
are equal values, and equal values give equal bytes whatever objects they share (a memo writes a
string shared by two fields once, an equal but distinct one twice).

A summary may also be the one the pass read with its rows moved, and nothing else (`row_shift`:
lines added or removed inside a function's body that the analysis records nothing about, such as
a local assignment): the pass's findings then stand with their rows in that file moved the same way.
The same holds when, besides rows, only the candidates of functions the pass did not reach differ
(`only_unreached_bodies`: the memo keeps the ids of the functions the pass reached).

A summary may also differ by functions added, and nothing else, when nothing in the project can
reach them: each is a module-level function without decorators (no compile root), outside every
file-wide candidate's lines, whose name no summary the pass read holds anywhere — not as a call,
an import, a base, a root or a string — so no call or name resolves to it, and an unreached
function has no finding. The memo keeps, for that question, how many summaries hold each name
(every identifier in a summary's strings, the names of its own functions included): an appended
helper (pre-commit's usual "code" edit) then reads one summary too. Anything else — a file added,
removed, unreadable, another change to a summary — runs the pass again.
"""
from __future__ import annotations

import copy
import dataclasses
import hashlib
import io
import pickle
import re
from collections import Counter
from typing import Callable, Dict, Iterable, List, Optional, Set

from compilelint.cache import Cache
from compilelint.row_shift import Shift, moved_finding, moved_summary, shift_between
from compilelint.summary import FileSummary


_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
# A backslash escape in a string's repr (`\n`, `\x0a`, `\\`): read as a space, so the name after it stays whole.
_ESCAPE = re.compile(r"\\(?:x[0-9a-f]{2}|u[0-9a-f]{4}|U[0-9a-f]{8}|.)")


def _pickled(summary: FileSummary) -> bytes:
    """The summary's value as bytes (not which equal objects it shares); what a summary keeps
    about itself (`with_candidates`) left out."""
    if "_with_candidates" in summary.__dict__:
        summary = copy.copy(summary)
        del summary.__dict__["_with_candidates"]
    out = io.BytesIO()
    pickler = pickle.Pickler(out, protocol=pickle.HIGHEST_PROTOCOL)
    pickler.fast = True  # no memo: a summary holds no cycles
    pickler.dump(summary)
    return out.getvalue()


def summary_digest(summary: FileSummary) -> str:
    """A digest of the summary's value (not of which equal objects it shares)."""
    return hashlib.blake2b(_pickled(summary), digest_size=20).hexdigest()


def names_in(summary: FileSummary) -> Set[str]:
    """Every identifier the summary's strings hold (more than its names: never fewer). Read from
    its repr, where every string is quoted: in a pickle a string's length byte or the next opcode
    may be a letter and run into the name."""
    text = repr(summary)
    return set(_IDENTIFIER.findall(_ESCAPE.sub(" ", text) if "\\" in text else text))


def only_moved(before: FileSummary, now: FileSummary) -> Optional[Shift]:
    """The shift of rows that makes `before` into `now`, when nothing else differs (`row_shift`)."""
    shift = shift_between(before, now)
    if shift is None:
        return None
    moved = moved_summary(before, shift)
    return shift if moved is not None and summary_digest(moved) == summary_digest(now) else None


def only_unreached_bodies(before: FileSummary, now: FileSummary, reached: frozenset) -> Optional[Shift]:
    """The shift of rows that makes `before` into `now` when, besides rows, only the candidates of
    functions the compiled code does not reach differ (a `print` added to a helper nothing compiled
    calls): the pass reads a function's candidates only where it is reached (placing them, and the
    breaks that decide frames), and what it reaches depends on the call graph, compared with the
    rest. A null shift when no row moved."""
    kept = {q for q in before.functions if f"{before.module}.{q}" in reached}
    before, now = _reached_candidates_only(before, kept), _reached_candidates_only(now, kept)
    if summary_digest(before) == summary_digest(now):
        return Shift(0, 0)
    return only_moved(before, now)


def _reached_candidates_only(summary: FileSummary, kept: Set[str]) -> FileSummary:
    """A copy of `summary` whose functions outside `kept` have no candidates."""
    out = copy.copy(summary)
    out.__dict__.pop("_with_candidates", None)
    out.functions = {q: f if q in kept or not f.candidates else dataclasses.replace(f, candidates=[])
                     for q, f in summary.functions.items()}
    return out


def only_unreachable_added(before: FileSummary, now: FileSummary, names: Counter) -> bool:
    """Whether `now` is `before` with module-level functions added that nothing can reach:
    no decorator, a plain ASCII name held by none of the summaries `names` counts, no file-wide
    candidate in their lines (its finding names its enclosing function)."""
    added = [q for q in now.functions if q not in before.functions]
    if not added or any(q not in now.functions for q in before.functions):
        return False
    for qualname in added:
        info = now.functions[qualname]
        if not (qualname.isidentifier() and qualname.isascii()) or qualname.startswith("__") \
                or info.decorators or names.get(qualname):
            return False  # a method or nested function, a dunder, a possible root, a name in use
        if any(info.row <= c.span.row <= info.end_row for c in now.anywhere):
            return False
    rest = copy.copy(now)  # its own attribute dict: `now` keeps its fields
    rest.functions = {q: f for q, f in now.functions.items() if q in before.functions}
    rest.aliases = {name: dotted for name, dotted in now.aliases.items()  # a def names itself in its module
                    if name not in added or dotted != f"{now.module}.{name}"}
    rest.graph_key = before.graph_key  # the call graph's hash: the added functions are in it
    return summary_digest(rest) == summary_digest(before)


class PassMemo:
    """The latest pass over one list of files under one set of settings, in the on-disk cache."""

    def __init__(self, cache: Cache, paths: List[str], judged: str, added_reach_nothing: bool = True):
        """`judged`: the settings that shape results and the configurations judging `paths`, as
        text; `added_reach_nothing`: False where the settings make every function a root (scope
        "all") or name the entries (an entry may name an added function)."""
        self.cache = cache
        self.added_reach_nothing = added_reach_nothing
        h = hashlib.blake2b(digest_size=20)
        h.update(repr((judged, paths)).encode("utf-8", "surrogateescape"))
        self.key = "pass-" + h.hexdigest()
        self.reused = False  # whether the latest `reuse` answered (for tests and benchmarks)
        self._kept = None  # what `reuse` read: the names the next `store` counts from

    def reuse(self, keys: Dict[str, Optional[str]], summary_of: Callable[[str], Optional[FileSummary]]):
        """The kept (findings, errors), when they hold for files of these content keys; else None.
        `summary_of(path)`: the summary of the file's current text (None: it does not parse)."""
        self.reused = False
        kept = self._kept = self.cache.get(self.key)
        if kept is None:
            return None
        old_keys, parsed, findings, errors, names, reached = kept
        if set(old_keys) != set(keys):
            return None
        changed = [p for p, k in keys.items() if old_keys[p] != k]
        if any(p in parsed or keys[p] is None for p in changed):
            return None
        names = Counter(names)
        shifts: Dict[str, Shift] = {}
        for path in changed:
            before = self.cache.get(old_keys[path])
            now = summary_of(path)
            if before is None or now is None:
                return None
            if summary_digest(before) == summary_digest(now):
                continue
            shift = only_moved(before, now) or only_unreached_bodies(before, now, reached)
            if shift is not None:
                shifts[path] = shift
            elif self.added_reach_nothing and only_unreachable_added(before, now, names):
                _recount(names, before, now)  # a later edit asks about these functions' names too
            else:
                return None
        if shifts:
            findings = [moved_finding(f, shifts[f.path]) if f.path in shifts else f for f in findings]
            if None in findings:
                return None
        self.reused = True
        if changed:  # the same result for these keys: the next run compares with them
            self._put(keys, parsed, findings, errors, names, reached)
        return findings, errors

    def store(self, keys: Dict[str, Optional[str]], parsed: Iterable[str], findings, errors,
              summaries: List[FileSummary], reached: Iterable[str]) -> None:
        """Keep a pass's result over `summaries` (the files of `keys`); `reached`: the ids of the
        functions its compiled code reached."""
        if None in keys.values():
            return
        names = None
        kept = self._kept
        if kept is not None and set(kept[0]) == set(keys):  # recount the changed files only
            old_keys, names = kept[0], Counter(kept[4])
            by_path = {s.path: s for s in summaries}
            for path, key in keys.items():
                if old_keys[path] != key:
                    before, now = self.cache.get(old_keys[path]), by_path.get(path)
                    if before is None or now is None:
                        names = None
                        break
                    _recount(names, before, now)
        if names is None:
            names = Counter()
            for summary in summaries:
                names.update(names_in(summary))
        self._put(keys, parsed, findings, errors, names, frozenset(reached))

    def _put(self, keys, parsed, findings, errors, names: Counter, reached: frozenset) -> None:
        self.cache.put_run(self.key, (dict(keys), frozenset(parsed), findings, errors,
                                        {name: n for name, n in names.items() if n > 0}, reached))


def _recount(names: Counter, before: FileSummary, now: FileSummary) -> None:
    """`names` counted `before`'s: count `now`'s instead."""
    old, new = names_in(before), names_in(now)
    names.update(new - old)
    names.subtract(old - new)
