"""An edit that only moves lines: the file's new summary is its last one with every row below one
point moved by the same count (a statement added inside a function's body that the analysis records
nothing about — a local assignment, a blank line, a comment line — or such lines removed).

The project pass reads a row only to compare it with another row of the same file, to look it up
among that file's rows (noqa, a function's lines) or to report it; it never counts lines across
the edit or reads the text behind a row (the few files whose text it parses are moved only where
the functions it read there moved as a whole: `text_read`). Moving every row of one file by a map
that keeps their order (and keeps them apart) therefore moves the pass's findings in that file by
the same map and changes nothing else: the last pass's findings, moved, are the new pass's.

Where the rows are is the summary's schema: a `Span`, a `Call`'s row, a function's first and last
row (its loops, and the `DefRow`s of rules' facts, are kept relative to its first), a class's row (its `built_under` tests' rows are
kept relative to it) and a root's row, the noqa table's keys, a notebook cell's first row; in a
finding, its span, noqa row, the row its region is hidden by and its cell. A row kept anywhere else
is compared as it is, so a summary holding one that moved is "not only moved" and the pass runs
again.
"""
from __future__ import annotations

import copy
import dataclasses
from dataclasses import dataclass
from typing import Optional

from compilelint.finding import Finding, Region, Span
from compilelint.summary import Call, ClassInfo, DefRow, FileSummary, FunctionInfo, Root


@dataclass(frozen=True)
class Shift:
    """Rows after `after` move by `by` (negative: lines removed)."""
    after: int
    by: int

    def row(self, row: int) -> int:
        return row + self.by if row > self.after else row


def shift_between(before: FileSummary, now: FileSummary) -> Optional[Shift]:
    """The shift that takes `before`'s rows to `now`'s, when one does: the same functions and classes
    in the same order, those first in the file unmoved and the rest moved by one count, and a point
    inside the function that grew (or shrank) above which every row stayed and below which every
    row moved. None otherwise (whether all the rest is equal is the caller's comparison)."""
    if list(before.functions) != list(now.functions) or list(before.classes) != list(now.classes):
        return None
    pairs = [(f.row, now.functions[q].row) for q, f in before.functions.items()]
    pairs += [(f.end_row, now.functions[q].end_row) for q, f in before.functions.items()]
    pairs += [(c.row, now.classes[q].row) for q, c in before.classes.items()]
    moved = {new - old for old, new in pairs} - {0}
    if len(moved) != 1:
        return None
    by = moved.pop()
    lowest = max((old for old, new in pairs if new == old), default=0)
    highest = min(old for old, new in pairs if new != old)  # the point lies in [lowest, highest)
    if highest <= lowest or highest + by <= lowest:
        return None  # a row moved above one that stayed, or lines cut into the rows above
    old_rows, new_rows = _rows(before), _rows(now)
    if old_rows is None or new_rows is None:
        return None
    for after in [lowest] + sorted(r for r in old_rows if lowest < r < highest):
        if any(after < r <= after - by for r in old_rows):
            continue  # lines removed: a row below would land on or above the point (two rows as one)
        shift = Shift(after, by)
        if {shift.row(r) for r in old_rows} == new_rows:
            return shift
    return None


class _Rows:
    """A stand-in shift that moves nothing and notes every row it is asked about."""

    def __init__(self):
        self.seen = set()

    def row(self, row: int) -> int:
        self.seen.add(row)
        return row


def _rows(summary: FileSummary) -> Optional[set]:
    """Every row the summary holds where this module moves rows; None as `moved_summary`."""
    rows = _Rows()
    return rows.seen if moved_summary(summary, rows) is not None else None


class _Unknown(Exception):
    """A value of a kind this module does not know where the rows of are."""


def moved_summary(summary: FileSummary, shift: Shift) -> Optional[FileSummary]:
    """A copy of `summary` with its rows moved (the cached summary is never changed); None when it
    holds a value of a kind not known here (a rule's facts may hold any)."""
    try:
        return _moved(summary, shift)
    except _Unknown:
        return None


def moved_finding(finding: Finding, shift: Shift) -> Optional[Finding]:
    """`finding` with its rows moved; None as `moved_summary`."""
    try:
        return _moved(finding, shift)
    except _Unknown:
        return None


def _moved(value, shift: Shift):
    if isinstance(value, Span):
        return Span(shift.row(value.row), value.col, shift.row(value.end_row), value.end_col)
    if isinstance(value, Call):
        return Call(_moved(x, shift) if i != 3 else shift.row(x) for i, x in enumerate(value))
    if isinstance(value, (str, int, float, bool, type(None))):
        return value
    if isinstance(value, tuple) and hasattr(value, "_fields"):  # a named tuple
        return type(value)(*(_moved(x, shift) for x in value))
    if type(value) in (tuple, list, set, frozenset):
        return type(value)(_moved(x, shift) for x in value)
    if isinstance(value, dict):
        return {_moved(k, shift): _moved(v, shift) for k, v in value.items()}
    if dataclasses.is_dataclass(value):
        return _moved_record(value, shift)
    raise _Unknown(type(value).__name__)


def _moved_record(record, shift: Shift):
    out = copy.copy(record)
    out.__dict__.pop("_with_candidates", None)  # what a summary keeps about itself
    for f in dataclasses.fields(record):
        object.__setattr__(out, f.name, _moved(getattr(record, f.name), shift))
    if isinstance(record, FunctionInfo):
        row, end = shift.row(record.row), shift.row(record.end_row)
        loops = [(shift.row(record.row + lo) - row, shift.row(record.row + hi) - row) for lo, hi in record.loops]
        tries = [(shift.row(record.row + lo) - row, shift.row(record.row + hi) - row) for lo, hi in record.tries]
        wrapper = tuple(shift.row(record.row + r) - row for r in record.wrapper)  # counted from `row` too
        facts = _def_rows(out.rule_facts, lambda r: DefRow(shift.row(record.row + r) - row))
        _set(out, row=row, end_row=end, loops=loops, tries=tries, wrapper=wrapper, rule_facts=facts)
    elif isinstance(record, ClassInfo):  # its tests' rows are counted from its own
        row = shift.row(record.row)
        under = {attr: [(calls, tuple((shift.row(record.row + test) - row, branch) for test, branch in tests))
                        for calls, tests in built] for attr, built in record.built_under.items()}
        _set(out, row=row, built_under=under)
    elif isinstance(record, Root):
        _set(out, row=shift.row(record.row))
    elif isinstance(record, FileSummary):
        _set(out, noqa={shift.row(r): codes for r, codes in record.noqa.items()},
             cells=tuple((cell, shift.row(first)) for cell, first in record.cells))
        if record._graph_key:  # a hash of rows counted from a class's: made again from the moved ones
            _set(out, graph_key=out.compute_graph_key())
    elif isinstance(record, Region):
        _set(out, hidden_by=shift.row(record.hidden_by) if record.hidden_by else 0)
    elif isinstance(record, Finding):
        _set(out, noqa_row=shift.row(record.noqa_row),
             cell=(record.cell[0], shift.row(record.cell[1])) if record.cell is not None else None)
    return out


def _def_rows(value, move):
    """`value` (a rule's facts) with every `DefRow` in it moved."""
    if isinstance(value, DefRow):
        return move(value)
    if type(value) in (tuple, list, set, frozenset):
        return type(value)(_def_rows(x, move) for x in value)
    if isinstance(value, dict):
        return {_def_rows(k, move): _def_rows(v, move) for k, v in value.items()}
    return value


def _set(record, **fields) -> None:
    for name, value in fields.items():
        object.__setattr__(record, name, value)
