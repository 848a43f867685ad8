"""The last project pass, reused when the files changed since leave it standing.

The project pass is a function of the files' summaries, the settings that judge them and the text
of the few files whose functions it parses (`Trees`: loops, a decorator's inner wrapper). An
edit that its file's summary does not show — a comment, a docstring — changes none of them, so
the pass's result stands; so do the edits `summary_change` recognises (rows moved, candidates of
unreached functions, functions added that nothing can reach), with the findings' rows moved.
Pre-commit after such an edit then reads no summary but the edited file's: in a 3,231-file
checkout the pass and the summaries' loading were most of the run.

So the latest pass over a set of files is kept with the content key of every file it read, the
files whose text it parsed, the ids of the functions it reached and, for `only_unreachable_added`,
how many summaries hold each name (`NameCounts`: a table written once, and the summaries changed
since, by content key; counted only when a run asks). A later run over the same files and settings takes its result
when every file whose content changed has a summary that is the one the pass read, changed only
in one of those ways, and, for a file whose text the pass parsed, the functions it asked for
there are the same lines, moved as a whole or not at all (`text_read`). Anything else — a file
added, removed, unreadable, another change to a summary — runs the pass again; where every
changed file changed only candidates (`summary_change.only_candidates`: a break added to a reached
`forward`, one removed), that pass places only those files' candidates again (`kept_placement`).
"""
from __future__ import annotations

import hashlib
import os
from collections import Counter
from typing import Callable, Dict, Iterable, List, Optional

from compilelint.cache import Cache
from compilelint.kept_placement import moved_placement
from compilelint.row_shift import Shift, moved_finding
from compilelint.summary import FileSummary
from compilelint.summary_change import (names_in, only_candidates, only_moved, only_unreachable_added,
                                        only_unreached_bodies, summary_digest)
from compilelint.text_read import moved_questions, still_answered


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
        # (the kept pass's placement, the files changed since) when they changed in candidates
        # only: the pass runs, placing only those files' candidates again (`kept_placement`)
        self.kept_placement = None

    def reuse(self, keys: Dict[str, Optional[str]], summary_of: Callable[[str], Optional[FileSummary]],
              text_of: Callable[[str], Optional[bytes]]):
        """The kept (findings, errors), when they hold for files of these content keys; else None.
        `summary_of(path)`: the summary of the file's current text (None: it does not parse);
        `text_of(path)`: that text (asked only of a changed file the pass parsed)."""
        self.reused = False
        self.kept_placement = None
        kept = self._kept = self.cache.get(self.key)
        if kept is None:
            return None
        old_keys, parsed, findings, errors, names, reached, placement = kept
        if set(old_keys) != set(keys):
            return None
        changed = [p for p, k in keys.items() if old_keys[p] != k]
        if any(keys[p] is None for p in changed):
            return None
        summaries = {}  # path → (the summary the pass read, the current one)
        for path in changed:
            summaries[path] = (self.cache.get(old_keys[path]), summary_of(path))
            if None in summaries[path]:
                return None
        standing = self._standing(kept, changed, summaries, keys, text_of)
        if standing is None and placement is not None and all(
                only_candidates(*summaries[path]) is not None for path in changed):
            self.kept_placement = (placement, set(changed))
        return standing

    def _standing(self, kept, changed: List[str], summaries: dict, keys, text_of):
        """The kept (findings, errors) when the changed files leave the pass standing, else None."""
        keys_before, parsed, findings, errors, names, reached, placement = kept
        names = NameCounts(self.cache, names)
        shifts: Dict[str, Shift] = {}
        for path in changed:
            before, now = summaries[path]
            same = summary_digest(before) == summary_digest(now)
            shift = Shift(0, 0) if same else self._moved_where_the_pass_reads(before, now, reached, names)
            if shift is None:
                return None
            if path in parsed and not still_answered(path, parsed[path], text_of(path), shift):
                return None  # the pass read lines of this text that the edit changed or moved apart
            if shift.by:
                shifts[path] = shift
            if not same:  # a later edit asks about the names of the file as it is now
                names.changed(path, keys_before[path], keys[path])
        if shifts:
            findings = [moved_finding(f, shifts[f.path]) if f.path in shifts else f for f in findings]
            if None in findings:
                return None
            parsed = {p: moved_questions(q, shifts[p]) if p in shifts else q for p, q in parsed.items()}
            placement = moved_placement(placement, shifts) if placement is not None else None
        self.reused = True
        if changed:  # the same result for these keys: the next run compares with them
            stored = names.stored()
            if stored is None and names.counted() is not None:  # too many changes noted: a new table
                stored = NameCounts.written(self.cache, names.counted())
            self._put(keys, parsed, findings, errors, stored, reached, placement)
        return findings, errors

    def _moved_where_the_pass_reads(self, before: FileSummary, now: FileSummary, reached: frozenset,
                                     names: "NameCounts") -> Optional[Shift]:
        """How the rows of a changed summary moved, when it changed in none of the ways the pass
        reads (`summary_change`); None when it did."""
        shift = only_moved(before, now) or only_unreached_bodies(before, now, reached)
        if shift is None and self.added_reach_nothing and only_unreachable_added(before, now, names):
            shift = Shift(0, 0)  # every other row as it was
        return shift

    def store(self, keys: Dict[str, Optional[str]], parsed: Dict[str, tuple], findings, errors,
              summaries: List[FileSummary], reached: Iterable[str], placement=None) -> None:
        """Keep a pass's result over `summaries` (the files of `keys`); `parsed`: what it read of
        the texts it parsed (`ReadTrees.read`); `reached`: the ids of the functions its compiled
        code reached; `placement`: its placement of candidates (`kept_placement`)."""
        if None in keys.values():
            return
        names = None
        kept = self._kept
        if kept is not None and set(kept[0]) == set(keys):  # the changed files noted, counted when asked
            old_keys, names = kept[0], NameCounts(self.cache, kept[4])
            for path, key in keys.items():
                if old_keys[path] != key:
                    names.changed(path, old_keys[path], key)
            names = names.stored()
            if names is None:  # too many changes noted: counted now, from the summaries at hand
                counted = NameCounts(self.cache, kept[4]).counted()
                if counted is not None:
                    by_path = {s.path: s for s in summaries}
                    for path, key in keys.items():
                        if old_keys[path] != key and path in by_path:
                            before = self.cache.get(old_keys[path])
                            if before is None:
                                counted = None
                                break
                            before.path = path
                            _recount(counted, before, by_path[path])
                names = NameCounts.written(self.cache, counted) if counted is not None else None
        if names is None:
            counted = Counter()
            for summary in summaries:
                counted.update(names_in(summary))
            names = NameCounts.written(self.cache, counted)
        self._put(keys, parsed, findings, errors, names, frozenset(reached), placement)

    def _put(self, keys, parsed, findings, errors, names: tuple, reached: frozenset, placement) -> None:
        self.cache.put_run(self.key, (dict(keys), dict(parsed), findings, errors, names, reached, placement))


class NameCounts:
    """How many of the pass's summaries hold each name (`only_unreachable_added`), kept as (the key
    of a table counted once, the summaries changed since: (path, content key before, after) each): most
    edits never ask (the pass's other questions answer first), and the table is 1.5 MB for a
    3,231-file project, read and written again at every edit before. Counted on first ask, as a
    count over every summary would (each at the file's path); a table or summary no longer in the
    cache answers None (the pass runs; the next store counts them all)."""

    MAX_CHANGES = 8  # past it, the next store writes a new table (a count asks 2 summaries per change)

    def __init__(self, cache: Cache, stored: tuple):
        self.cache = cache
        self.table, self.changes = stored if isinstance(stored, tuple) and len(stored) == 2 else (None, ())
        self._counted = None
        self._gone = False  # a table or summary was missing: no count this run

    @classmethod
    def written(cls, cache: Cache, counts: Counter) -> tuple:
        """A new table of `counts`, with no change since."""
        key = "names-" + os.urandom(20).hex()
        cache.put_run(key, {name: n for name, n in counts.items() if n > 0})
        return key, ()

    def changed(self, path: str, before: str, after: str) -> None:
        """The summary of `path` was the one of content key `before`, and is now `after`'s."""
        self.changes = self.changes + ((path, before, after),)
        if self._counted is not None and not self._recounted(self._counted, path, before, after):
            self._counted, self._gone = None, True

    def _recounted(self, counts: Counter, path: str, before: str, after: str) -> bool:
        old, new = self.cache.get(before), self.cache.get(after)
        if old is None or new is None:
            return False
        old.path = new.path = path
        _recount(counts, old, new)
        return True

    def stored(self) -> Optional[tuple]:
        """What the memo keeps (None: a table to write, too many changes noted)."""
        if self._counted is not None and self.changes:  # counted this run: the next count reads no summary
            return NameCounts.written(self.cache, self._counted)
        if self._gone or self.table is None or len(self.changes) > self.MAX_CHANGES or not self.cache.has(self.table):
            return None
        return self.table, self.changes

    def get(self, name: str) -> int:
        """How many summaries hold `name` (counted on first ask; unknown: 1, a name in use)."""
        counts = self.counted()
        return 1 if counts is None else counts.get(name, 0)

    def counted(self) -> Optional[Counter]:
        """The counts, with every change noted (None: a table or summary is gone from the cache)."""
        if self._counted is None and self.table is not None and not self._gone:
            table = self.cache.get(self.table)
            counts = Counter(table) if table is not None else None
            if counts is None or not all(self._recounted(counts, *change) for change in self.changes):
                self._gone = True
                return None
            self._counted = counts
        return self._counted


def _recount(names: Counter, before: FileSummary, now: FileSummary) -> None:
    """`names` counted `before`'s: count `now`'s instead."""
    old, new = names_in(before), names_in(now)
    names.update(new - old)
    names.subtract(old - new)
