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
string shared by two fields once, an equal but distinct one twice). Anything else — a file added, removed, unreadable, a changed
summary — runs the pass again.
"""
from __future__ import annotations

import hashlib
import io
import pickle
from typing import Callable, Dict, Iterable, List, Optional

from compilelint.cache import Cache
from compilelint.summary import FileSummary


def summary_digest(summary: FileSummary) -> str:
    """A digest of the summary's value (not of which equal objects it shares)."""
    out = io.BytesIO()
    pickler = pickle.Pickler(out, protocol=pickle.HIGHEST_PROTOCOL)
    pickler.fast = True  # no memo: a summary holds no cycles
    pickler.dump(summary)
    return hashlib.blake2b(out.getvalue(), digest_size=20).hexdigest()


class PassMemo:
    """The latest pass over one list of files under one set of settings, in the on-disk cache."""

    def __init__(self, cache: Cache, paths: List[str], judged: str):
        """`judged`: the settings that shape results and the configurations judging `paths`, as text."""
        self.cache = cache
        h = hashlib.blake2b(digest_size=20)
        h.update(repr((judged, paths)).encode("utf-8", "surrogateescape"))
        self.key = "pass-" + h.hexdigest()
        self.reused = False  # whether the latest `reuse` answered (for tests and benchmarks)

    def reuse(self, keys: Dict[str, Optional[str]], summary_of: Callable[[str], Optional[FileSummary]]):
        """The kept (findings, errors), when they hold for files of these content keys; else None.
        `summary_of(path)`: the summary of the file's current text (None: it does not parse)."""
        self.reused = False
        kept = self.cache.get(self.key)
        if kept is None:
            return None
        old_keys, parsed, findings, errors = kept
        if set(old_keys) != set(keys):
            return None
        changed = [p for p, k in keys.items() if old_keys[p] != k]
        if any(p in parsed or keys[p] is None for p in changed):
            return None
        for path in changed:
            before = self.cache.get(old_keys[path])
            now = summary_of(path)
            if before is None or now is None or summary_digest(before) != summary_digest(now):
                return None
        self.reused = True
        if changed:  # the same result for these keys: the next run compares with them
            self.store(keys, parsed, findings, errors)
        return findings, errors

    def store(self, keys: Dict[str, Optional[str]], parsed: Iterable[str], findings, errors) -> None:
        if None in keys.values():
            return
        self.cache.put_run(self.key, (dict(keys), frozenset(parsed), findings, errors))

