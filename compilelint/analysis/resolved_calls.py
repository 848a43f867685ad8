"""Each function's calls with the project functions they may run (`Project.callees`): the costly
part of following calls, asked for by several parts of the project pass (frames, the calls that
reach a function).

An answer is kept per function for as long as its calls are the same (the same `FunctionInfo`, or
one the language server made again for an edit elsewhere in its file) and the project index
answers name questions as before. `check` makes one per pass; the
language server keeps one between edits while it patches the index, and starts a new one when it
rebuilds the index.
"""
from __future__ import annotations

from typing import Dict, List, Tuple

from compilelint.summary import Call


class ResolvedCalls:
    def __init__(self):
        self._by_fid: Dict[str, Tuple[List[Call], List[Tuple[Call, List[str]]]]] = {}  # fid → (its calls, answer)

    def of(self, project, fid: str) -> List[Tuple[Call, List[str]]]:
        """(call, its callees) for every call of function `fid`, in order."""
        calls = project.functions[fid][1].calls
        entry = self._by_fid.get(fid)
        if entry is not None and (entry[0] is calls or entry[0] == calls):
            return entry[1]
        answer = [(call, project.callees(fid, call)) for call in calls]
        self._by_fid[fid] = (calls, answer)
        return answer
