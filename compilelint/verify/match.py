"""Assign observed Dynamo events to the findings that predicted them (pure: no torch, no user code).

An event confirms a finding when
- it is of the finding's kind (a graph break or a skipped frame for a "break" rule, a recompile for
  a "recompile" rule),
- it happened in the same file (resolved absolute paths) and inside the same innermost function
  (found with `ast`, so the engine's naming of nested functions does not matter), and
- its gb_type is one the finding's rule predicts: its title, or its registry id (`GB0170`) in the
  rule's per-version table, since titles differ between torch versions (an event with neither,
  a recompile, is judged by kind alone), and
- its line is inside the finding's statement, or after it: Dynamo sometimes reports the *use* site
  (`s = f"{x}"` breaks at the later `len(s)`, `b = bool(t)` under fullgraph at the branch on `b`;
  dynamo-truth.md §6). Then the nearest preceding finding whose rule predicts it wins. One line
  before the finding is also accepted (`g = torch.Generator()` is reported at the constructor, one
  line above the flagged `g.manual_seed`). An event no rule predicts confirms nothing: an
  unrelated `copy.deepcopy()` break later in a function is no proof of a tensor `if` before it.
- Recompiles caused by the inputs (a new shape or dtype) or by a value a confirmed break produced
  are never reported as missed.
- A recompile that names no user line (a shape guard names only the function) confirms every
  recompile finding of that function.
- A recompile Dynamo blames on 0/1 specialization names the compiled function, never the
  `mark_dynamic(t, dim)` call that declared the dimension: it confirms the findings of those
  calls (CL409) in the checked files.
Everything left over is *missed*: a break or recompile that no rule predicted.
"""
from __future__ import annotations

import ast
import os
from dataclasses import dataclass, field
from typing import Dict, List, Optional, Sequence, Tuple


# Dynamo's hint in a guard that fails only because sizes 0 and 1 are specialized.
ZERO_ONE = "0/1 specialization"
ZERO_ONE_CODE = "CL409"


def event_kind(event: str) -> str:
    """The rule kind ("break" | "recompile") an event can confirm."""
    return "recompile" if event == "recompile" else "break"


def norm(path: str) -> str:
    return os.path.realpath(os.path.abspath(path))


@dataclass(frozen=True)
class FuncSpan:
    qualname: str
    start: int  # first decorator line (co_firstlineno's convention)
    end: int


class FunctionIndex:
    """The function definitions of each file, parsed once."""

    def __init__(self):
        self._spans: Dict[str, List[FuncSpan]] = {}

    def spans(self, path: str) -> List[FuncSpan]:
        path = norm(path)
        if path not in self._spans:
            self._spans[path] = _parse_spans(path)
        return self._spans[path]

    def innermost(self, path: str, line: int) -> Optional[FuncSpan]:
        best = None
        for s in self.spans(path):
            if s.start <= line <= s.end and (best is None or s.start >= best.start):
                best = s
        return best


def _parse_spans(path: str) -> List[FuncSpan]:
    try:
        with open(path, encoding="utf-8") as f:
            tree = ast.parse(f.read(), filename=path)
    except (OSError, SyntaxError, ValueError):
        return []
    out: List[FuncSpan] = []

    def walk(node, prefix):
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                name = f"{prefix}{child.name}"
                if not isinstance(child, ast.ClassDef):
                    start = min([child.lineno] + [d.lineno for d in child.decorator_list])
                    out.append(FuncSpan(name, start, child.end_lineno or child.lineno))
                    walk(child, f"{name}.<locals>.")
                else:
                    walk(child, f"{name}.")
            else:
                walk(child, prefix)

    walk(tree, "")
    return out


@dataclass
class Target:
    """What `match` needs from a finding: its index in the report and where it is."""

    index: int
    code: str
    kind: str  # "break" | "recompile" | "usage"
    file: str  # resolved absolute path
    row: int
    end_row: int
    gb_types: Tuple[str, ...] = ()  # the titles and registry ids (GB0170) the rule predicts
    col: int = 0  # 1-based columns of the flagged expression (0: unknown)
    end_col: int = 0
    events: list = field(default_factory=list)


def locate(event: dict, files: set) -> Optional[Tuple[str, int]]:
    """Where an event happened in the checked code: the reported place when it is in a checked file,
    else the innermost checked frame of its user stack (a break inside a library call is the user
    line that called it); None when no checked code is involved."""
    if norm(event["file"]) in files:
        return norm(event["file"]), event["line"]
    for f, line, _name in reversed(event.get("stack") or []):
        if norm(f) in files:
            return norm(f), int(line)
    return None


def _compatible(t: Target, ev: dict) -> bool:
    gb_type, gb_id = (ev.get("gb_type") or "").strip().lower(), (ev.get("gb_id") or "").upper()
    if not (gb_type or gb_id) or not t.gb_types:
        return True
    known = {x.strip().lower() for x in t.gb_types} | {x.upper() for x in t.gb_types}
    return gb_type in known or gb_id in known


def match(targets: Sequence[Target], events: Sequence[dict], files: set, index: FunctionIndex) -> List[dict]:
    """Attach each event to `target.events` of the findings it confirms; return the missed events
    (each with its resolved "file"/"line")."""
    missed = []
    by_file: Dict[str, List[Target]] = {}
    for t in targets:
        by_file.setdefault(t.file, []).append(t)

    def candidates(ev, file, line):
        fn = index.innermost(file, line)
        kind = event_kind(ev["event"])
        return [t for t in by_file.get(file, ()) if t.kind == kind and index.innermost(file, t.row) == fn]

    zero_one = [t for t in targets if t.code == ZERO_ONE_CODE]
    for ev in events:
        where = locate(ev, files)
        if where is None:
            continue
        file, line = where
        ev = dict(ev, file=file, line=line)
        cands = [t for t in candidates(ev, file, line) if _compatible(t, ev)]
        if not ev.get("anchored", True):
            chosen = cands
        else:
            chosen = [t for t in cands if t.row <= line <= t.end_row]
            if not chosen:
                chosen = _nearest([t for t in cands if t.end_row < line], line)
            if not chosen:
                chosen = [t for t in cands if t.row == line + 1]
        if chosen:
            for t in chosen:
                t.events.append(ev)
        elif ev["event"] == "recompile" and ZERO_ONE in ev.get("reason", "") and zero_one:
            for t in zero_one:
                t.events.append(ev)
        elif not _explained(ev, by_file.get(file, ())):
            missed.append(ev)
    return missed


def _explained(ev: dict, targets) -> bool:
    """Recompiles that are not news: a new input shape or dtype (automatic dynamic absorbs it), or
    a guard on the value a confirmed break produced (`.item()` resumes guard on the float)."""
    if ev["event"] != "recompile":
        return False
    if ev.get("input_driven"):
        return True
    return any(t.kind == "break" and t.events and t.row <= ev["line"] <= t.end_row for t in targets)


def _nearest(cands: List[Target], line: int) -> List[Target]:
    if not cands:
        return []
    best = max(t.row for t in cands)
    return [t for t in cands if t.row == best]


def reached(t: Target, lines: Dict[str, set], columns: Optional[Dict[str, set]] = None) -> bool:
    """Did the finding's flagged expression run? Where the run recorded instruction starts in its
    file (Python 3.11+: the tracer was given the findings' rows), an instruction inside the span
    must have run: `a and not t.all()` runs its line on every call, `t.all()` only when `a` holds.
    Else any line of the span counts."""
    starts = (columns or {}).get(t.file)
    lo, hi = (t.row, t.col - 1), (t.end_row, t.end_col - 1)
    if starts is not None and t.col and t.end_col and lo < hi:
        return any(lo <= start < hi for start in starts)
    got = lines.get(t.file)
    return bool(got) and any(r in got for r in range(t.row, t.end_row + 1))


def same_function(index: FunctionIndex, file: str, line: int, t: Target) -> bool:
    return t.file == file and index.innermost(file, line) == index.innermost(t.file, t.row)
