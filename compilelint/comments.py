"""The comments of a Python file, as the tokenizer sees them: a `# noqa` inside a string is text,
not a directive (`s = "# noqa"` must not silence its line)."""
from __future__ import annotations

import io
import re
import tokenize
from typing import Iterator, Tuple


def comments(text: str) -> Iterator[Tuple[int, str]]:
    """(1-based row, comment text from its `#`) for every comment in `text`. A file that Python
    parses but the tokenizer rejects (rare) falls back to its lines, as if each were a comment."""
    found = []
    try:
        for tok in tokenize.generate_tokens(io.StringIO(text).readline):
            if tok.type == tokenize.COMMENT:
                found.append((tok.start[0], tok.string))
    except (tokenize.TokenError, SyntaxError):
        found = list(enumerate(re.split(r"\r\n|\r|\n", text), 1))
    return iter(found)
