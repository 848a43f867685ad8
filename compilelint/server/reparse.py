"""Re-parse only what an edit touched: the new file's tree from the previous one.

An edit inside one method (or one top-level statement) leaves the rest of the file's tokens as
they were: the tokenizer is in the same state (no open bracket or string, the same indentation
levels) at the start of every top-level statement and of every statement directly in a top-level
class. So when each changed stretch of lines lies inside one such statement and the statement's
new text parses on its own (a method inside a stand-in `class _:` header, at its own
indentation), the full parse of the new file is the old tree with those statements replaced and
the others moved by the number of lines added above them. A stretch of comments and blank lines
between top-level statements only moves what follows. Anything else (a change spanning
statements, a statement that does not parse alone) returns None, and the caller parses the whole
file: the answer is always the one `ast.parse` of the whole text gives, only cheaper.

The old tree is updated in place and must not be used afterwards.
"""
from __future__ import annotations

import ast
import bisect
import itertools
import warnings
from typing import Dict, List, Optional, Sequence, Tuple

from compilelint.analysis.astutil import FUNCS, walk
from compilelint.project_pass.trees import first_row

STUB = "class _:\n"


# How far (in lines) to look for where old and new text agree again after a difference, and how
# many equal lines in a row count as agreeing again.
RESYNC_WINDOW = 400
RESYNC_LINES = 3


def hunks(old: Sequence[str], new: Sequence[str]) -> List[Tuple[int, int, int, int]]:
    """The changed stretches, (old start, old end, new start, new end), 0-based and end-exclusive:
    `old[a:b]` became `new[c:d]` and the lines between them are equal. Greedy, not minimal (the
    caller needs only that every line outside them is equal on both sides), and cheap for the
    usual edit: one or two places in a long file."""
    limit = min(len(old), len(new))
    prefix = 0
    while prefix < limit and old[prefix] == new[prefix]:
        prefix += 1
    suffix = 0
    while suffix < limit - prefix and old[-1 - suffix] == new[-1 - suffix]:
        suffix += 1
    i, j, old_end, new_end = prefix, prefix, len(old) - suffix, len(new) - suffix
    out: List[Tuple[int, int, int, int]] = []
    where = None  # line → its rows in new[prefix:new_end], ascending
    while i < old_end or j < new_end:
        if i < old_end and j < new_end and old[i] == new[j]:
            i, j = i + 1, j + 1
            continue
        if where is None:
            where = {}
            for row in range(prefix, new_end):
                where.setdefault(new[row], []).append(row)
        best = None
        for t in range(0, min(old_end - i, RESYNC_WINDOW)):
            if best is not None and t >= best[0] + best[1]:
                break
            rows = where.get(old[i + t], ())
            for q in rows[bisect.bisect_left(rows, j):]:
                if q - j > RESYNC_WINDOW or (best is not None and t + q - j >= best[0] + best[1]):
                    break
                n = min(RESYNC_LINES, old_end - i - t, new_end - q)
                if old[i + t:i + t + n] == new[q:q + n] and (n == RESYNC_LINES or (i + t + n == old_end and q + n == new_end)):
                    best = (t, q - j)
                    break
        if best is None:
            out.append((i, old_end, j, new_end))
            break
        out.append((i, i + best[0], j, j + best[1]))
        i, j = i + best[0], j + best[1]
    return out


def reparse(tree: ast.Module, old: Sequence[str], new: Sequence[str], text: str,
            nodes: Optional[Dict[int, list]] = None) -> Optional[ast.Module]:
    """The tree of the new lines (`text` joined), from `tree` (the old lines' tree), or None.
    `nodes`: id(function) → every node under it (`astutil.walk`), to move them without a walk."""
    if "barry_as_FLUFL" in text:  # the one __future__ import that changes the grammar
        return None
    changes = hunks(old, new)
    if not changes:
        return tree
    # Each change lies inside one statement: a top-level one, or one directly in a top-level class
    # (then the class is re-parsed member by member), or touches only comments and blank lines
    # between top-level statements. Its old rows, 1-based; for a pure insertion, the rows around it
    # (both inside, or the new lines could belong to the next statement).
    targets: dict = {}  # id(statement) → [statement, its container, lines added in it]
    whole: set = set()  # classes where some change is outside every member
    placed = []
    moved: List[Tuple[int, int]] = []  # (old row where a change starts, lines it adds)
    for a, b, c, d in changes:
        first, last = (a + 1, b) if b > a else (a, a + 1)
        delta = (d - c) - (b - a)
        moved.append((first, delta))
        outer = _holding(tree.body, first, last)
        if outer is None:
            if _trivia(old[a:b]) and _trivia(new[c:d]) and not _touches(tree.body, a + 1, b):
                continue  # comments between statements: only what follows moves
            return None
        inner = _holding(outer.body, first, last) if isinstance(outer, ast.ClassDef) and outer.col_offset == 0 else None
        if inner is None:
            whole.add(id(outer))
        placed.append((outer, inner, delta))
    for outer, inner, delta in placed:
        stmt, container = (outer, tree) if inner is None or id(outer) in whole else (inner, outer)
        targets.setdefault(id(stmt), [stmt, container, 0])[2] += delta
    starts = [row for row, _ in moved]
    totals = list(itertools.accumulate(delta for _, delta in moved))

    def shift(row: int) -> int:
        """Lines added by the changes that start before old row `row`."""
        i = bisect.bisect_left(starts, row)
        return totals[i - 1] if i else 0

    # Parse every changed statement's new text first: nothing changes unless all of them parse.
    parsed = {}
    for stmt, container, delta in targets.values():
        inner = container is not tree
        before = shift(first_row(stmt))
        if inner and not _same_indent(old, new, first_row(stmt), before):
            return None
        start, end = first_row(stmt) + before, stmt.end_lineno + before + delta
        piece = "".join(new[start - 1:end])
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                module = ast.parse(STUB + piece if inner else piece)
        except (SyntaxError, ValueError, RecursionError, MemoryError):
            return None
        body = module.body[0].body if inner else module.body
        if not body or (inner and len(module.body) != 1):
            return None
        if inner and any(node.col_offset != stmt.col_offset for node in body):
            return None  # the stand-in header took another indentation (a comment replaced the `def` line)
        for node in body:
            ast.increment_lineno(node, start - 2 if inner else start - 1)
        parsed[id(stmt)] = body
    tree.body = _spliced(tree.body, parsed, shift, nodes or {})
    return tree


def _spliced(body: List[ast.stmt], parsed: dict, shift, nodes: Dict[int, list]) -> List[ast.stmt]:
    """`body` with its changed statements replaced and the others moved by the lines added before
    them (`shift(old row)`)."""
    out: List[ast.stmt] = []
    for stmt in body:
        if id(stmt) in parsed:
            out.extend(parsed[id(stmt)])
            continue
        delta = shift(first_row(stmt))
        if isinstance(stmt, ast.ClassDef) and any(id(s) in parsed for s in stmt.body):
            if delta:
                _move_header(stmt, delta)
            stmt.body = _spliced(stmt.body, parsed, shift, nodes)
            last = stmt.body[-1]
            stmt.end_lineno, stmt.end_col_offset = last.end_lineno, last.end_col_offset
        elif delta:
            _move(stmt, delta, nodes)
        out.append(stmt)
    return out


def _trivia(lines: Sequence[str]) -> bool:
    """Blank lines and lines holding only a comment (outside every statement: no string there)."""
    return all(not line.strip() or line.lstrip().startswith("#") for line in lines)


def _touches(body: Sequence[ast.stmt], first: int, last: int) -> bool:
    """Whether rows `first..last` overlap some statement of `body` (an empty range touches none)."""
    return first <= last and any(first_row(stmt) <= last and first <= stmt.end_lineno for stmt in body)


def _move(stmt: ast.stmt, delta: int, nodes: Dict[int, list]) -> None:
    """`ast.increment_lineno`, through the function node lists at hand instead of a walk."""
    if isinstance(stmt, ast.ClassDef):
        _move_header(stmt, delta)
        stmt.end_lineno += delta
        for item in stmt.body:
            _move(item, delta, nodes)
        return
    known = nodes.get(id(stmt))
    for node in known if known and known[0] is stmt else walk(stmt):
        if "lineno" in node._attributes:
            node.lineno += delta
            if node.end_lineno is not None:
                node.end_lineno += delta


def _move_header(cls: ast.ClassDef, delta: int) -> None:
    """Move a class's own line and everything but its body (decorators, bases, keywords)."""
    cls.lineno += delta
    for part in cls.decorator_list + cls.bases + cls.keywords:
        _move(part, delta, {})


def _holding(body: Sequence[ast.stmt], first: int, last: int) -> Optional[ast.stmt]:
    for stmt in body:
        if first_row(stmt) <= first and last <= stmt.end_lineno:
            return stmt
    return None


def _same_indent(old: Sequence[str], new: Sequence[str], row: int, shift: int) -> bool:
    """The statement's first line keeps its indentation (the class body's), so the stand-in
    class header sees the indentation levels the file has there."""
    def indent(line: str) -> str:
        return line[:len(line) - len(line.lstrip(" \t\f"))]
    return row + shift <= len(new) and indent(old[row - 1]) == indent(new[row + shift - 1]) != ""


def function_nodes(tree: ast.Module) -> List[ast.AST]:
    """The functions a file analysis walks on their own: top-level ones and methods of top-level classes."""
    out = []
    for stmt in tree.body:
        if isinstance(stmt, FUNCS):
            out.append(stmt)
        elif isinstance(stmt, ast.ClassDef):
            out.extend(item for item in stmt.body if isinstance(item, FUNCS))
    return out
