"""Reading a Python file the way Python would: its encoding (cookie or BOM), and its line endings.

`ast` reports columns as UTF-8 byte offsets into a line; findings use character columns, so
`char_col` converts, only for lines that are not pure ASCII.
"""
from __future__ import annotations

import errno
import io
import os
import re
import stat
import tokenize
from dataclasses import dataclass
from typing import List


# Rows as `ast` counts them: split at \r\n, \r and \n only. `str.splitlines` also splits at form
# feeds, \x0b, \x1c-\x1e, \x85 and U+2028/9, which shifts every later row (noqa, columns).
_LINE = re.compile(r"[^\r\n]*(?:\r\n|\r|\n)|[^\r\n]+$")


def lines_with_ends(text: str) -> List[str]:
    """The text's rows with their line ends, split where Python's tokenizer and `ast` split them.
    The one line splitter of the project: analysis, fixes and reports all count rows with it.
    A text with none of the other separators `str.splitlines` knows (most files) is split by it:
    the same rows, at a fraction of the expression's cost."""
    if not any(c in text for c in _OTHER_SEPARATORS):
        return text.splitlines(keepends=True)
    return _LINE.findall(text)


# What `str.splitlines` splits at besides "\n", "\r\n" and "\r": characters that `ast` and the
# tokenizer never take for a line end.
_OTHER_SEPARATORS = ("\x0b", "\x0c", "\x1c", "\x1d", "\x1e", "\x85", "\u2028", "\u2029")


class SourceError(Exception):
    """The file can't be read as Python source; the message is one line for the user."""


@dataclass
class SourceFile:
    path: str
    text: str
    encoding: str
    newline: str  # "\n", "\r\n" or "\r": the first line ending, kept when fixes write the file
    bom: bool

    @property
    def lines(self) -> List[str]:
        try:
            return self._lines
        except AttributeError:
            self._lines = lines_with_ends(self.text)
            return self._lines

    def char_col(self, row: int, byte_col: int) -> int:
        """0-based character column of a 0-based UTF-8 byte offset on 1-based `row`."""
        lines = self.lines
        if row - 1 >= len(lines):
            return byte_col
        line = lines[row - 1]
        if line.isascii():
            return byte_col
        return len(line.encode("utf-8")[:byte_col].decode("utf-8", errors="replace"))


def decode(path: str, data: bytes) -> SourceFile:
    if b"\0" in data[:8192]:
        raise SourceError("binary file, not Python source")
    try:
        encoding, _ = tokenize.detect_encoding(io.BytesIO(data).readline)
    except SyntaxError as e:
        raise SourceError(f"cannot determine encoding: {e}") from None
    bom = data.startswith(b"\xef\xbb\xbf")
    try:
        text = data.decode(encoding)
    except (UnicodeDecodeError, LookupError) as e:
        reason = getattr(e, "reason", str(e))
        raise SourceError(f"not valid {encoding}: {reason}") from None
    if text.startswith("\ufeff"):
        text = text[1:]
    return SourceFile(path, text, encoding, _first_newline(text), bom)


def read_bytes(path: str) -> bytes:
    """The file's bytes; OSError for what can't be read, including what isn't a regular file (a
    FIFO or a device named `x.py` would block the run forever or never end)."""
    fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_BINARY", 0))
    try:
        st = os.fstat(fd)
        if stat.S_ISDIR(st.st_mode):
            raise IsADirectoryError(errno.EISDIR, "is a directory", path)
        if not stat.S_ISREG(st.st_mode):
            raise OSError(errno.EINVAL, "not a regular file (a FIFO, socket or device)", path)
        with os.fdopen(fd, "rb", closefd=True) as f:
            fd = -1
            return f.read()
    finally:
        if fd != -1:
            os.close(fd)


def read(path: str) -> SourceFile:
    try:
        data = read_bytes(path)
    except IsADirectoryError:
        raise SourceError("is a directory") from None
    except FileNotFoundError:
        raise SourceError("no such file") from None
    except PermissionError:
        raise SourceError("permission denied") from None
    except OSError as e:
        raise SourceError(e.strerror or str(e)) from None
    return decode(path, data)


def encode(source: SourceFile, text: str) -> bytes:
    """Bytes for `text` in the file's own encoding and BOM (used when fixes write the file); a
    notebook's source writes the text back into its cells."""
    to_bytes = getattr(source, "to_bytes", None)
    if to_bytes is not None:
        return to_bytes(text)
    data = text.encode(source.encoding)
    if source.bom and not data.startswith(b"\xef\xbb\xbf"):
        data = b"\xef\xbb\xbf" + data
    return data


def _first_newline(text: str) -> str:
    i = text.find("\n")
    j = text.find("\r")
    if j != -1 and (i == -1 or j < i):
        return "\r\n" if text[j : j + 2] == "\r\n" else "\r"
    return "\n"
