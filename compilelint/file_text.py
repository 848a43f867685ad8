"""Source text as the fixers see it: lines split where Python's tokenizer splits them, character
columns, offsets, and what the tokenizer knows (comments, rows that start inside a string, rows
that end inside one or with a backslash)."""
from __future__ import annotations

import ast
import io
import tokenize
from typing import List, Optional, Set, Tuple

from compilelint.finding import Span
from compilelint.source import lines_with_ends


class FileText:
    def __init__(self, text: str):
        self.text = text
        self.lines = lines_with_ends(text)
        self.starts = [0]
        for line in self.lines:
            self.starts.append(self.starts[-1] + len(line))
        self._tokens_done = False
        self.tokens_ok = False
        self.comments: List[Tuple[int, int]] = []  # (row, 1-based char col)
        self.comment_text: dict = {}  # row -> (1-based char col, text) of the comment ending it
        self.starts_in_string: Set[int] = set()  # rows whose first character is inside a string
        self.ends_in_string: Set[int] = set()  # rows whose line end is inside a string

    # ----- rows and columns -----------------------------------------------------------------------
    def line(self, row: int) -> str:
        """Row `row` (1-based) without its line end; '' past the end."""
        if 1 <= row <= len(self.lines):
            return self.lines[row - 1].rstrip("\r\n")
        return ""

    def char_col(self, row: int, byte_col: int) -> int:
        """0-based character column of ast's 0-based UTF-8 byte offset."""
        line = self.line(row)
        if line.isascii():
            return byte_col
        return len(line.encode("utf-8")[:byte_col].decode("utf-8", errors="replace"))

    def span(self, node: ast.AST) -> Span:
        row, end_row = node.lineno, node.end_lineno or node.lineno
        end = node.end_col_offset if node.end_col_offset is not None else node.col_offset
        return Span(row, self.char_col(row, node.col_offset) + 1, end_row, self.char_col(end_row, end) + 1)

    def offset(self, row: int, col: int) -> int:
        """Offset into the text of a 1-based (row, col); clamped to the text."""
        if row < 1:
            return 0
        if row > len(self.lines):
            return len(self.text)
        return min(self.starts[row - 1] + col - 1, len(self.text))

    def position(self, offset: int) -> Tuple[int, int]:
        """1-based (row, col) of an offset."""
        import bisect

        i = bisect.bisect_right(self.starts, offset) - 1
        i = max(0, min(i, len(self.lines) - 1)) if self.lines else 0
        return i + 1, offset - self.starts[i] + 1

    def segment(self, span: Span) -> str:
        return self.text[self.offset(span.row, span.col):self.offset(span.end_row, span.end_col)]

    def indent_of(self, row: int) -> str:
        line = self.line(row)
        return line[: len(line) - len(line.lstrip(" \t\f"))]

    # ----- tokens ---------------------------------------------------------------------------------
    def _tokenize(self):
        if self._tokens_done:
            return
        self._tokens_done = True
        try:
            for tok in tokenize.generate_tokens(io.StringIO(self.text).readline):
                if tok.type == tokenize.COMMENT:
                    self.comments.append((tok.start[0], tok.start[1] + 1))
                    self.comment_text[tok.start[0]] = (tok.start[1] + 1, tok.string)
                elif tok.type == tokenize.STRING and tok.end[0] > tok.start[0]:
                    for r in range(tok.start[0] + 1, tok.end[0] + 1):
                        self.starts_in_string.add(r)
                    for r in range(tok.start[0], tok.end[0]):
                        self.ends_in_string.add(r)
            self.tokens_ok = True
        except (tokenize.TokenError, SyntaxError, IndentationError):
            self.tokens_ok = False

    def comments_in(self, span: Span, keep: List[Span] = ()) -> bool:
        """Whether a comment starts inside `span` but outside every span in `keep`."""
        if "#" not in self.segment(span):
            return False  # no comment starts without one (spares tokenizing the whole file)
        self._tokenize()
        if not self.tokens_ok:
            return True  # unknown: assume the worst
        for pos in self.comments:
            if _inside(pos, span) and not any(_inside(pos, k) for k in keep):
                return True
        return False

    def comment_on(self, row: int):
        """(1-based col, text) of the comment on `row`, or None; tokenizes first."""
        if "#" not in self.line(row):
            return None  # no comment starts without one (spares tokenizing the whole file)
        self._tokenize()
        return self.comment_text.get(row)

    def row_starts_in_string(self, row: int) -> bool:
        if self._tokens_done:
            return row in self.starts_in_string
        # Only a string that starts above `row` can hold its start: tokenize up to there (the
        # `import torch` row asked about is near the top of the file).
        try:
            for tok in tokenize.generate_tokens(io.StringIO(self.text).readline):
                if tok.start[0] >= row:
                    break
                if tok.type == tokenize.STRING and tok.end[0] >= row:
                    return True
        except (tokenize.TokenError, SyntaxError, IndentationError):
            pass  # as the whole file's tokens: the strings before the error
        return False

    def rows_starting_in_string(self, row: int, end_row: int) -> Optional[Set[int]]:
        """The rows of a whole statement (`row`..`end_row`) that start inside one of its strings, or None
        when its text does not tokenize. Tokenizes those rows alone: a statement is complete, so its
        strings are too (tokenizing the whole file for each multi-line statement was most of the cost
        of building log guards)."""
        out: Set[int] = set()
        try:  # an indented first line is fine for the tokenizer (only the parser minds)
            for tok in tokenize.generate_tokens(io.StringIO("".join(self.lines[row - 1:end_row])).readline):
                if tok.type == tokenize.STRING and tok.end[0] > tok.start[0]:
                    out.update(range(row + tok.start[0], row + tok.end[0]))
        except (tokenize.TokenError, SyntaxError, IndentationError):
            return None
        return out

    def row_ends_in_string(self, row: int) -> Optional[bool]:
        self._tokenize()
        if not self.tokens_ok:
            return None
        return row in self.ends_in_string


def _inside(pos: Tuple[int, int], span: Span) -> bool:
    return (span.row, span.col) <= pos < (span.end_row, span.end_col)
