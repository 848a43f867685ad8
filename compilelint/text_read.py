"""What the project pass read of the texts it parsed, so that an edit elsewhere in such a file can
leave the pass standing.

The pass parses a few files (`Trees`: 26 of a 3,231-file checkout's) to ask for one `def` at a time
(`Trees.function(path, row)`), and a rule works out what it needs from that node alone: its loops,
the wrapper nested in a decorator, its asserts. A `def`'s node is a function of its own lines (its
decorators to its last line): the same lines anywhere in the file parse to the same node, its line
numbers moved by one count. So `ReadTrees` notes each question and its answer's lines, and the
last pass stands for the file's new text (with its summary's rows moved by `shift`: `row_shift`)
when each question, its row moved, is answered by lines equal to the ones it read, all moved by
the shift's one count or all kept (none of them on both sides of the edit).
"""
from __future__ import annotations

import hashlib
import pickle
from typing import Dict, Optional, Tuple

from compilelint.notebook import decode_any
from compilelint.project_pass.trees import Trees, first_row, parse_bytes
from compilelint.row_shift import Shift
from compilelint.source import SourceError

# A question: (the row asked, the answer's first and last row, a digest of its lines); (row, 0, 0, "")
# when no `def` answered.
Question = Tuple[int, int, int, str]


class ReadTrees(Trees):
    """`Trees` that notes which functions of the files it parses from disk were asked for.

    It also answers from the `def` nodes an earlier process asked of the same bytes: a def's node
    is a function of the text, and unpickling the few asked for costs a fraction of parsing their
    files (36 of vLLM's, after an edit of a reached function). They come from `kept` (path → (a
    digest of the file's bytes, {row asked: its def, or None}), what `kept_defs` gives) or from
    `store`, a cache holding each text's under its bytes' digest (`defs_key`; `keep` puts the
    texts' whose questions grew: after an edit, the edited file's alone). A question not kept
    parses the file as before."""

    def __init__(self, kept: Optional[Dict[str, tuple]] = None, store=None):
        super().__init__()
        self._asked: Dict[str, Dict[int, Optional[Tuple[int, int]]]] = {}
        self._kept = kept if kept is not None else {}
        self._store = store
        self._data: Dict[str, Optional[bytes]] = {}  # the bytes of each file asked about
        self._answers: Dict[str, Dict[int, object]] = {}  # path → {row: def} asked this run
        self._grew: set = set()  # the files asked something no kept answer held
        self._path_of: Dict[int, str] = {}  # id of a def answered → its file (the def lives in `_answers`)
        self.kept_grew = False

    def function(self, path: str, row: int):
        answers = self._answers.setdefault(path, {})
        if path not in self._data:
            data = self._data[path] = _read(path)
            kept = self._kept_of(path, data) if data is not None else None
            if kept is not None:
                defs, derived = kept
                answers.update(defs)  # this text's defs as asked before, and what was derived from them
                for row, worked_out in derived.items():
                    if defs.get(row) is not None:
                        self._derived[defs[row]] = worked_out
        if row in answers and path not in self._disk:  # kept, and the file not parsed since
            node = answers[row]
            self.parsed.add(path)
        else:
            node = super().function(path, row)
            if row not in answers:
                self.kept_grew = True
                self._grew.add(path)
            answers[row] = node
        if node is not None:
            self._path_of[id(node)] = path
        if path in self.parsed:
            lines = (first_row(node), node.end_lineno) if node is not None else None
            self._asked.setdefault(path, {})[row] = lines
        return node

    def derived(self, node, what: str, compute):
        answers = self._derived.get(node)
        if (answers is None or what not in answers) and id(node) in self._path_of:
            self._grew.add(self._path_of[id(node)])  # worked out anew: kept for the next process
        return super().derived(node, what, compute)

    def _kept_of(self, path: str, data: bytes) -> Optional[tuple]:
        """({row: def}, {row: what was derived from that def}) an earlier process asked of these
        bytes (a def's derived answers are functions of its node alone), None where none is kept."""
        if self._store is not None:
            kept = self._store.get(defs_key(data))
            return kept if isinstance(kept, tuple) and len(kept) == 2 else None
        kept = self._kept.get(path)
        return (kept[1], {}) if kept is not None and kept[0] == _bytes_digest(data) else None

    def keep(self, store) -> None:
        """Put in `store` the defs of each text asked something no kept answer held, with what was
        derived from them (pickled together: an answer holding a def's nodes holds the same nodes),
        by its bytes."""
        for path in self._grew:
            if self._data.get(path) is not None:
                derived, by_node = {}, {}
                for row, node in self._answers[path].items():
                    if node is not None and node in self._derived:
                        derived[row] = by_node.setdefault(id(node), dict(self._derived[node]))
                try:
                    store.put(defs_key(self._data[path]), (self._answers[path], derived))
                except (pickle.PicklingError, TypeError, AttributeError, RecursionError):
                    pass  # an answer that does not pickle: worked out again next time

    def kept_defs(self) -> Dict[str, tuple]:
        """path → (a digest of its bytes, {row: def}) for every file asked about this run."""
        return {path: (_bytes_digest(self._data[path]), answers) for path, answers in self._answers.items()
                if self._data.get(path) is not None}

    def read(self) -> Dict[str, Optional[Tuple[Question, ...]]]:
        """Every file parsed from disk → its questions (None: it cannot be read now). The text is
        read again here: a file changed since the pass parsed it digests differently, and the next
        run runs the pass."""
        out = {}
        for path in self.parsed:
            lines = _lines(_read(path), path)  # read again: the text may have changed since
            asked = sorted(self._asked.get(path, {}).items())
            out[path] = None if lines is None else tuple(_question(row, span, lines) for row, span in asked)
        return out


def still_answered(path: str, questions: Optional[Tuple[Question, ...]], data: Optional[bytes], shift: Shift) -> bool:
    """Whether the file's new text answers each question as before, its rows moved by `shift`."""
    lines = _lines(data, path)
    tree = parse_bytes(path, data) if lines is not None else None
    if questions is None or tree is None:
        return False
    trees = Trees(lambda p: tree)
    for row, first, last, digest in questions:
        node = trees.function(path, shift.row(row))
        if not digest:
            if node is not None:
                return False
            continue
        if node is None or not (last <= shift.after or first > shift.after):
            return False  # gone, or the edit falls inside its lines
        now_first, now_last = first_row(node), node.end_lineno
        if (now_first, now_last) != (shift.row(first), shift.row(last)):
            return False
        if _digest(lines[now_first - 1:now_last]) != digest:
            return False
    return True


def moved_questions(questions: Optional[Tuple[Question, ...]], shift: Shift):
    """The questions as the file's moved text answers them (`still_answered` held)."""
    if questions is None:
        return None
    return tuple((shift.row(row), shift.row(first) if digest else 0, shift.row(last) if digest else 0, digest)
                 for row, first, last, digest in questions)


def _question(row: int, span, lines) -> Question:
    if span is None:
        return (row, 0, 0, "")
    first, last = span
    return (row, first, last, _digest(lines[first - 1:last]))


def _digest(lines) -> str:
    return hashlib.blake2b("\n".join(lines).encode("utf-8", "surrogateescape"), digest_size=16).hexdigest()


def defs_key(data: bytes) -> str:
    """The cache key of the defs asked of a text with these bytes (a content key, like a summary's,
    kept as long; named apart so that a run can be made without them: `bench/big_checkout.py`)."""
    return "defs-" + hashlib.blake2b(data, digest_size=20).hexdigest()


def _bytes_digest(data: bytes) -> str:
    return hashlib.blake2b(data, digest_size=16).hexdigest()


def _read(path: str) -> Optional[bytes]:
    try:
        with open(path, "rb") as f:
            return f.read()
    except OSError:
        return None


def _lines(data: Optional[bytes], path: str):
    if data is None:
        return None
    try:
        return decode_any(path, data).text.split("\n")
    except (SourceError, ValueError):
        return None
