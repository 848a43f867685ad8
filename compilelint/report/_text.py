"""Source text helpers: Python's line ends, 1-based (row, col) to offsets, applying edits in memory."""
from __future__ import annotations

import re
import unicodedata
from typing import Iterable, List, Optional

_LINE = re.compile(r"[^\r\n]*(?:\r\n|\r|\n)|[^\r\n]+$")


def lines_with_ends(text: str) -> List[str]:
    """Split where Python's tokenizer does (\\r\\n, \\r, \\n), not at form feeds or U+2028."""
    return _LINE.findall(text)


def lines(text: str) -> List[str]:
    return [line.rstrip("\r\n") for line in lines_with_ends(text)]


def read_source(path: str, sources: Optional[dict]) -> Optional[str]:
    if sources is not None and path in sources:
        return sources[path]
    if path.endswith(".ipynb"):  # the cells as the engine saw them: one module
        from compilelint.notebook import decode
        from compilelint.source import SourceError

        try:
            with open(path, "rb") as f:
                return decode(path, f.read()).text
        except (OSError, SourceError):
            return None
    try:
        with open(path, encoding="utf-8", newline="") as f:
            return f.read()
    except (OSError, UnicodeDecodeError):
        return None


def apply_edits(text: str, edits: Iterable) -> str:
    """Each edit replaces its span (1-based rows/cols, end exclusive) with its content."""
    starts = [0]
    for line in lines_with_ends(text):
        starts.append(starts[-1] + len(line))

    def offset(row: int, col: int) -> int:
        row = min(max(row, 1), len(starts))
        return min(starts[row - 1] + col - 1, len(text))

    out, pos = [], 0
    for edit in sorted(edits, key=lambda e: (e.span.row, e.span.col, e.span.end_row, e.span.end_col)):
        start, end = offset(edit.span.row, edit.span.col), offset(edit.span.end_row, edit.span.end_col)
        if start < pos:  # overlapping edits: keep the first, as a fixer would
            continue
        out += [text[pos:start], edit.content]
        pos = end
    out.append(text[pos:])
    return "".join(out)


def width(text: str) -> int:
    """Terminal columns: East Asian wide and full-width characters take two, combining marks none."""
    total = 0
    for ch in text:
        if unicodedata.combining(ch):
            continue
        total += 2 if unicodedata.east_asian_width(ch) in ("W", "F") else 1
    return total


def pad_to(prefix: str) -> str:
    """Blank space as wide as `prefix`, keeping its tabs so a caret line lines up under it."""
    return "".join("\t" if ch == "\t" else " " * width(ch) for ch in prefix)
