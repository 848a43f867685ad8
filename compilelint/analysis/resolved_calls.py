"""Each function's calls with the project functions they may run (`Project.callees`): the costly
part of following calls, asked for by several parts of the project pass (frames, the calls that
reach a function).

An answer is kept per function summary entry (the same `FunctionInfo` object: the same calls) for
as long as the project index answers name questions as before. `check` makes one per pass; the
language server keeps one between edits while it patches the index, and starts a new one when it
rebuilds the index.
"""
from __future__ import annotations

from typing import Dict, List, Tuple

from compilelint.summary import Call


class ResolvedCalls:
    def __init__(self):
        self._by_fid: Dict[str, Tuple[object, List[Tuple[Call, List[str]]]]] = {}  # fid → (info, answer)

    def of(self, project, fid: str) -> List[Tuple[Call, List[str]]]:
        """(call, its callees) for every call of function `fid`, in order."""
        info = project.functions[fid][1]
        entry = self._by_fid.get(fid)
        if entry is not None and entry[0] is info:
            return entry[1]
        answer = [(call, project.callees(fid, call)) for call in info.calls]
        self._by_fid[fid] = (info, answer)
        return answer
