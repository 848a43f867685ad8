"""verify --fix, step 3 of 6 (copy → run before → apply → run after → judge → write): write a chosen
set of fixes into the copy of the code, never into the user's files.

Each fixed file is written from its original text, and the files an earlier set touched are
restored first, so the copy holds exactly the fixes asked for (all of them, one alone, the proven
ones). A file whose fixes overlap or whose result does not parse keeps its original text.
"""
from __future__ import annotations

import shutil
from typing import Dict, List, Optional, Sequence, Set, Tuple

from compilelint.finding import Finding
from compilelint.fix_files import _parses, apply_fixes, atomic_write, line_map
from compilelint.source import decode, encode
from compilelint.verify import match as M
from compilelint.verify.code_copy import Copy


class FixedCopy:
    """The copy, holding the fixes of the last `hold` call."""

    def __init__(self, copy: Copy):
        self.copy = copy
        self.touched: Set[str] = set()  # original paths whose copy a fix rewrote

    def hold(self, fixes: Sequence[Finding]) -> Tuple[List[Finding], Dict[str, list]]:
        """Undo the fixes written before, write `fixes`. Returns the fixes applied and, per original
        file, the line map of its new text (old row and whether a fix wrote the line, by new row)."""
        for path in self.touched:
            shutil.copyfile(path, self.copy.to_copy(path))
        by_file: Dict[str, List[Finding]] = {}
        for f in fixes:
            by_file.setdefault(M.norm(f.path), []).append(f)
        applied, maps = [], {}
        for path, todo in by_file.items():
            done = write_fixed(path, todo, self.copy.to_copy(path))
            if done is not None:
                applied += done[0]
                maps[path] = done[1]
                self.touched.add(path)
        return applied, maps


def write_fixed(path: str, fixes: Sequence[Finding], dest: str) -> Optional[Tuple[List[Finding], list]]:
    """Write `path`'s text with `fixes` applied to `dest` (its copy, or the file itself), keeping its
    encoding and line ends: the fixes applied and the line map, or None when none applied or the
    result does not parse (nothing is written then)."""
    with open(path, "rb") as f:
        source = decode(path, f.read())
    text, done = apply_fixes(source.text, list(fixes))
    if not done or _parses(text, path) is not None:
        return None
    atomic_write(dest, encode(source, text))
    return done, line_map(source.text, text)
