"""The "fix all" source action (`source.fixAll.compilelint`): every safe fix of one document, applied
in memory in rounds as `check --fix` applies them (compilelint.fix_files), and the result as line
edits of the editor's text.

A round's result is kept only if it still parses and the findings it fixed are gone; otherwise the
rounds stop at the last good text, so the action never hands the editor a broken file.
"""
from __future__ import annotations

import difflib
from collections import Counter
from typing import List

from lsprotocol import types as lsp

from compilelint.edits import apply_fixes
from compilelint.fix_files import MAX_ROUNDS, _parses, applicable
from compilelint.server.convert import Lines
from compilelint.server.project import ProjectContext
from compilelint.source import lines_with_ends

KIND = f"{lsp.CodeActionKind.SourceFixAll.value}.compilelint"
TITLE = "compilelint: apply all safe fixes"


def fixed_text(context: ProjectContext, path: str, text: str) -> str:
    """`text` with its safe fixes applied, judged with the rest of the project."""
    findings = context.findings_with_fixes(path, text)
    for _ in range(MAX_ROUNDS):
        todo = [f for f in findings if applicable(f.fix, unsafe=False)]
        new, applied = apply_fixes(text, todo)
        if not applied or _parses(new, path) is not None:
            break
        after = context.findings_with_fixes(path, new)
        now, before = Counter(f.code for f in after), Counter(f.code for f in findings)
        if any(now[code] > before[code] - n for code, n in Counter(f.code for f in applied).items()):
            break  # a fix that does not remove its finding: keep the text before it
        text, findings = new, after
    return text


def text_edits(old: str, new: str, lines: Lines) -> List[lsp.TextEdit]:
    """The changed runs of whole lines, as edits of `old` (positions from `lines`, which is `old`'s)."""
    a, b = lines_with_ends(old), lines_with_ends(new)

    def start_of(i: int) -> lsp.Position:
        if i < len(a) or not a or a[-1].endswith(("\n", "\r")):
            return lsp.Position(line=i, character=0)
        return lines.position(len(a), len(a[-1]) + 1)  # the end of a last line without a line end

    edits = []
    for tag, i1, i2, j1, j2 in difflib.SequenceMatcher(None, a, b, autojunk=False).get_opcodes():
        if tag != "equal":
            edits.append(lsp.TextEdit(range=lsp.Range(start=start_of(i1), end=start_of(i2)), new_text="".join(b[j1:j2])))
    return edits
