"""The parsed module of each file, for the project-pass questions summaries do not answer (a
function's loops, the wrapper nested in a decorator, the arguments of one call).

Whoever runs the pass says where a file's tree comes from: the language server gives the trees of
the texts it analysed (an open buffer is not what is on disk); any other file is parsed from disk
once and kept until `forget` (the server forgets a file when it analyses it again).

What a project rule works out from one function's node it keeps with `Trees.derived`, for as long
as the node lives: the server's re-parse keeps the node of an unchanged function (moving its rows
with it) and makes a new one for a changed function. An answer holds nodes or counts, never rows
(rows move), and never the node itself (which it would keep alive).
"""
from __future__ import annotations

import ast
import warnings
import weakref
from collections import OrderedDict
from typing import Callable, Dict, Iterator, Optional

from compilelint.notebook import decode_any
from compilelint.source import SourceError

# Files parsed from disk kept at once (the old per-process cache kept as many).
DISK_TREES_KEPT = 256


def first_row(node: ast.AST) -> int:
    """A statement's first line, its decorators included."""
    decorators = getattr(node, "decorator_list", None)
    return min([node.lineno] + [d.lineno for d in decorators]) if decorators else node.lineno


ON_DISK = object()  # what `in_memory` answers for a file whose text it does not hold


class Trees:
    def __init__(self, in_memory: Callable[[str], object] = lambda path: ON_DISK):
        """`in_memory(path)`: the tree of the text the pass analysed for `path` (None: it does not
        parse), or ON_DISK when that text is the file's on disk."""
        self._in_memory = in_memory
        self._disk: "OrderedDict[str, list]" = OrderedDict()  # path → [tree, defs index]
        self.parsed: set = set()  # the files parsed from disk: what the pass read beyond the summaries
        # What rules derived from function nodes: node → {what: answer}, dropped with the node.
        self._derived: "weakref.WeakKeyDictionary[ast.AST, dict]" = weakref.WeakKeyDictionary()

    def forget(self, path: str) -> None:
        """`path` changed: parse it again when next asked."""
        self._disk.pop(path, None)

    def function(self, path: str, row: int) -> Optional[ast.AST]:
        """The `def` whose header (its decorators to its `def` line) holds `row`, the outermost one."""
        tree = self._in_memory(path)
        if tree is not ON_DISK:  # changes between passes: looked up afresh
            return _function_at(tree, row) if tree is not None else None
        entry = self._from_disk(path)
        if entry[1] is None:
            entry[1] = _defs(entry[0])
        return entry[1].get(row)

    def _from_disk(self, path: str) -> list:
        """[its tree, its defs by header row (built when first asked)]."""
        entry = self._disk.get(path)
        if entry is not None:
            self._disk.move_to_end(path)
            return entry
        entry = self._disk[path] = [_parse_file(path), None]
        self.parsed.add(path)
        while len(self._disk) > DISK_TREES_KEPT:
            self._disk.popitem(last=False)
        return entry

    def derived(self, node: ast.AST, what: str, compute: Callable[[ast.AST], object]):
        """`compute(node)`, worked out once per node (`what` names the question)."""
        answers = self._derived.get(node)
        if answers is None:
            answers = self._derived[node] = {}
        if what not in answers:
            answers[what] = compute(node)
        return answers[what]


def _defs(tree: Optional[ast.Module]) -> Dict[int, ast.AST]:
    """Header row → its `def`, for every row from a def's first decorator to its `def` line."""
    out: Dict[int, ast.AST] = {}
    # A def is a statement: only statement bodies are walked, not the expressions (most of the nodes).
    todo = list(tree.body) if tree is not None else []
    while todo:
        node = todo.pop()
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            for row in range(first_row(node), node.lineno + 1):
                out.setdefault(row, node)
        todo.extend(_bodies(node))
    return out


def _function_at(tree: ast.Module, row: int) -> Optional[ast.AST]:
    """`_defs(tree).get(row)` without indexing the whole file: down the statements holding `row`."""
    body = tree.body
    while True:
        inside = None
        for stmt in body:
            if stmt.end_lineno >= row and first_row(stmt) <= row:
                inside = stmt
                break
        if inside is None:
            return None
        if isinstance(inside, (ast.FunctionDef, ast.AsyncFunctionDef)) and row <= inside.lineno:
            return inside
        body = list(_bodies(inside))


def _bodies(stmt: ast.AST) -> Iterator[ast.AST]:
    """The statements directly inside `stmt` (an `except` clause counts as one)."""
    for name in ("body", "orelse", "finalbody", "handlers"):
        yield from getattr(stmt, name, ())
    for case in getattr(stmt, "cases", ()):  # match: its cases have no lines of their own
        yield from case.body


def _parse_file(path: str) -> Optional[ast.Module]:
    try:
        with open(path, "rb") as f:
            data = f.read()
    except OSError:
        return None
    return parse_bytes(path, data)


def parse_bytes(path: str, data: bytes) -> Optional[ast.Module]:
    """The module as the file analysis parses it (a notebook's cells as one module), None when it
    does not parse."""
    try:
        text = decode_any(path, data).text
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return ast.parse(text)
    except (SourceError, SyntaxError, ValueError, RecursionError, MemoryError):
        return None
