"""Source text as reports show it: rows (split by `source.lines_with_ends`) and terminal widths."""
from __future__ import annotations

import unicodedata
from typing import List, Optional

from compilelint.source import lines_with_ends


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
