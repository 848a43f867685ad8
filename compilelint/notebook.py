"""Jupyter notebooks: the code cells as one Python module, and back.

Read with the standard library's `json`, not nbformat: nbformat's validation pulls jsonschema,
referencing, rpds-py (a compiled extension), jupyter_core and traitlets into every environment that
runs the linter (pre-commit's included), and all that is needed here is `cells[*].source`.

The module is every code cell after a marker line (`# <compilelint cell N>`, N counting every cell
from 1, as Ruff and Jupyter's cell order do), so a cell's rows stay together, a fix that adds lines
(a guard, an `import torch` at the top) still splits back into the right cell, and the rest of the
notebook (markdown, outputs, metadata) is written back as it was. IPython syntax is not Python:
a line magic or shell escape (`%time`, `!pip`, `x = !ls`, `obj?`) reads as `pass`, a cell magic's
cell (`%%timeit`) as comments, and both are restored verbatim when the notebook is written.
"""
from __future__ import annotations

import json
import re
from typing import List, Optional, Tuple

from compilelint.source import SourceError, SourceFile, decode as decode_python

SUFFIX = ".ipynb"
MARKER = "# <compilelint cell {}>"
_MARKER = re.compile(r"^# <compilelint cell (\d+)>$")
LINE_MAGIC = "pass  # <compilelint magic>"
CELL_MAGIC = "# <compilelint magic>"
_MAGIC = re.compile(r"^\s*(?:[%!]|[\w.]+\s*=\s*[%!])|^\s*[\w.]*\?\??\s*$|^\s*\?")
_LINE = re.compile(r"[^\r\n]*(?:\r\n|\r|\n)|[^\r\n]+$")  # where Python's tokenizer ends a line
_PLACEHOLDER = re.compile(r"^(\s*)(?:pass  )?# <compilelint magic>$")


def is_notebook(path: str) -> bool:
    return path.endswith(SUFFIX)


def decode_any(path: str, data: bytes) -> SourceFile:
    """A notebook's cells as one module, or a Python file's text."""
    return decode(path, data) if is_notebook(path) else decode_python(path, data)


class NotebookSource(SourceFile):
    """A notebook's code as one module; `encode` writes edited text back into the notebook."""

    def __init__(self, path: str, text: str, data: dict, code_cells: List[int], magics: List[str],
                 cells: Tuple[Tuple[int, int], ...], trailing_newline: bool):
        super().__init__(path, text, "utf-8", "\n", False)
        self.data = data
        self.code_cells = code_cells  # indices into data["cells"]
        self.magics = magics  # the original lines behind each placeholder, in order
        self.cells = cells  # (cell number, module row of its first line)
        self.trailing_newline = trailing_newline

    def to_bytes(self, text: str) -> bytes:
        """The notebook with each code cell's source replaced by its part of `text`."""
        parts = _split(text)
        magics = iter(self.magics)
        data = json.loads(json.dumps(self.data))  # a copy: this source may be written again
        for index in self.code_cells:
            cell = data["cells"][index]
            lines = parts.get(index + 1, [])
            restored = []
            for line in lines:
                m = _PLACEHOLDER.match(line.rstrip("\n"))
                restored.append((next(magics, line.rstrip("\n")) + ("\n" if line.endswith("\n") else ""))
                                if m else line)
            source = "".join(restored)
            if source.endswith("\n") and not _text(cell["source"]).endswith("\n"):
                source = source[:-1]  # the newline the module needed after the cell's last line
            cell["source"] = _lines(source) if isinstance(cell["source"], list) else source
        out = json.dumps(data, indent=1, ensure_ascii=False)
        return (out + ("\n" if self.trailing_newline else "")).encode("utf-8")


def decode(path: str, data: bytes) -> NotebookSource:
    try:
        nb = json.loads(data.decode("utf-8-sig"))
        cells = nb["cells"]
        if not isinstance(cells, list):
            raise TypeError("cells is not a list")
    except (ValueError, KeyError, TypeError, UnicodeDecodeError) as e:
        raise SourceError(f"not a Jupyter notebook ({type(e).__name__}: {e})") from None
    pieces: List[str] = []
    code_cells, magics, starts = [], [], []
    row = 1
    for index, cell in enumerate(cells):
        if not isinstance(cell, dict) or cell.get("cell_type") != "code":
            continue
        source = _text(cell.get("source", ""))
        lines = source.split("\n")
        if source.endswith("\n"):
            lines = lines[:-1]
        cell_magic = bool(lines) and lines[0].lstrip().startswith("%%")
        python = []
        for line in lines:
            if cell_magic:
                magics.append(line)
                python.append(CELL_MAGIC)
            elif _MAGIC.match(line):
                magics.append(line)
                python.append(line[: len(line) - len(line.lstrip())] + LINE_MAGIC)
            else:
                python.append(line)
        code_cells.append(index)
        starts.append((index + 1, row + 1))
        pieces.append(MARKER.format(index + 1) + "\n" + "".join(line + "\n" for line in python))
        row += 1 + len(python)
    text = "".join(pieces)
    return NotebookSource(path, text, nb, code_cells, magics, tuple(starts), data.rstrip(b" ").endswith(b"\n"))


def cell_at(cells: Tuple[Tuple[int, int], ...], row: int) -> Optional[Tuple[int, int]]:
    """(cell number, its first row) of the cell holding module `row`."""
    found = None
    for number, first in cells:
        if first - 1 <= row:  # the marker line counts as its cell's
            found = (number, first)
    return found or (cells[0] if cells else None)


def locate(findings: list, summaries: list) -> list:
    """Findings in notebooks, told which cell they are in."""
    cells = {s.path: s.cells for s in summaries if getattr(s, "cells", None)}
    if not cells:
        return findings
    return [f.with_(cell=cell_at(cells[f.path], f.span.row)) if f.path in cells else f for f in findings]


def _split(text: str) -> dict:
    """Cell number -> its lines (with ends); text before the first marker joins the first cell."""
    parts: dict = {}
    current, before = None, []
    for line in _LINE.findall(text):
        m = _MARKER.match(line.rstrip("\r\n"))
        if m:
            current = int(m.group(1))
            parts[current] = before if not parts else []
            before = []
        elif current is None:
            before.append(line)
        else:
            parts[current].append(line)
    return parts


def _text(source) -> str:
    return "".join(source) if isinstance(source, list) else str(source)


def _lines(source: str) -> List[str]:
    return re.findall(r"[^\n]*\n|[^\n]+$", source)  # Jupyter splits at \n only
