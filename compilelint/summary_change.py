"""How a file's summary changed since the last project pass read it, in the ways that leave the
pass's result standing (`pass_memo` asks; each answer says how the findings' rows move).

Summaries are compared by their pickles made without pickle's memo: equal bytes are equal values,
and equal values give equal bytes whatever objects they share (a memo writes a string shared by
two fields once, an equal but distinct one twice).

- `only_moved`: the summary the pass read with its rows moved, and nothing else (`row_shift`:
  lines added or removed inside a function's body that the analysis records nothing about, such
  as a local assignment): the findings in that file move the same way.
- `only_unreached_bodies`: besides rows, only the candidates of functions the pass did not reach
  differ (a `print` added to a helper nothing compiled calls): the pass reads a function's
  candidates only where it is reached (placing them, and the breaks that decide frames), and what
  it reaches depends on the call graph, compared with the rest.
- `only_candidates`: besides rows, only the candidates of functions differ, reached or not (a
  `print` added to a `forward`): the pass's result does not stand (its findings, frames and hooks
  read them), but nothing that decides reach or answers a name reads a candidate, so the placement
  of every other file's candidates does (`kept_placement`).
- `only_unreachable_added`: functions added, and nothing else, when nothing in the project can
  reach them: each is a module-level function without decorators (no compile root), outside every
  file-wide candidate's lines, whose name no summary the pass read holds anywhere — not as a call,
  an import, a base, a root or a string — so no call or name resolves to it, and an unreached
  function has no finding. The memo counts how many summaries hold each name (`names_in`: every
  identifier in a summary's strings, the names of its own functions included): an appended helper
  (pre-commit's usual "code" edit) then reads one summary too.
"""
from __future__ import annotations

import copy
import dataclasses
import hashlib
import io
import pickle
import re
from typing import Optional, Set

from compilelint.row_shift import Shift, moved_summary, shift_between
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


def only_candidates(before: FileSummary, now: FileSummary) -> Optional[Shift]:
    """The shift of rows that makes `before` into `now` when, besides rows, only the candidates of
    its functions differ (a null shift when no row moved)."""
    return only_unreached_bodies(before, now, frozenset())


def _reached_candidates_only(summary: FileSummary, kept: Set[str]) -> FileSummary:
    """A copy of `summary` whose functions outside `kept` have no candidates."""
    out = copy.copy(summary)
    out.__dict__.pop("_with_candidates", None)
    out.functions = {q: f if q in kept or not f.candidates else dataclasses.replace(f, candidates=[])
                     for q, f in summary.functions.items()}
    return out


def only_unreachable_added(before: FileSummary, now: FileSummary, names) -> bool:
    """Whether `now` is `before` with module-level functions added that nothing can reach:
    no decorator, a plain ASCII name held by none of the summaries `names` counts (`names.get`:
    asked only of an added function's name), no file-wide candidate in their lines (its finding
    names its enclosing function)."""
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
