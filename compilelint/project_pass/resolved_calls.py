"""Each function's calls with the project functions they may run (`Project.callees`): the costly
part of following calls, asked for by several parts of the project pass (frames, the calls that
reach a function).

An answer is kept per function for as long as its calls are the same (the same `FunctionInfo`, or
one the language server made again for an edit elsewhere in its file) and the project index
answers name questions as before. A call's place (row, column) is not part of the question: calls
moved by lines added or removed above them keep their callees, paired with the moved calls.
`check` makes one per pass; the language server keeps one between edits while it patches the
index, and starts a new one when it rebuilds the index.
"""
from __future__ import annotations

from typing import Dict, List, Optional, Tuple

from compilelint.project_pass.inverse import Inverse
from compilelint.summary import Call

ON_SELF = ("self", "super", "attr", "property")  # the call kinds a receiver resolves


class ResolvedCalls:
    def __init__(self):
        self._by_fid: Dict[str, Tuple[List[Call], List[Tuple[Call, List[str]]]]] = {}  # fid → (its calls, answer)
        self._by_receiver: Dict[Tuple[str, str], Tuple[List[Call], List[Tuple[Call, List[str]]]]] = {}
        self._callers = Inverse(_by_callee)  # the calls reaching each function, kept between passes
        self._callers_over = (None, None)  # the (project, reached) `_callers` was last brought up to date for
        self._merged: Dict[str, tuple] = {}  # fid → (the answers merged, the merged answer): `_for_receivers`
        # fid or (fid, receiver) → each call's callees, in order, as a previous process resolved
        # them over the same call graph, set by `check` (None: not kept, as in the language
        # server, whose graph changes under one memo); `kept_grew`: an answer was made here that
        # the table lacked.
        self.kept: Optional[Dict[object, tuple]] = None
        self.kept_grew = False

    def of(self, project, fid: str, receiver: Optional[str] = None) -> List[Tuple[Call, List[str]]]:
        """(call, its callees) for every call of function `fid`, in order; with `receiver`, for
        method `fid` run on an instance of that subclass (`Project.receiver`)."""
        if receiver is not None:
            return self._of_receiver(project, fid, receiver)
        calls = project.functions[fid][1].calls
        entry = self._by_fid.get(fid)
        if entry is not None:
            if entry[0] is calls or entry[0] == calls:
                return entry[1]
            if len(entry[0]) == len(calls) and all(a.unplaced() == b.unplaced() for a, b in zip(entry[0], calls)):
                answer = [(call, callees) for call, (_, callees) in zip(calls, entry[1])]
                self._by_fid[fid] = (calls, answer)
                return answer
        answer = self._answer(fid, calls, lambda call: project.callees(fid, call))
        self._by_fid[fid] = (calls, answer)
        return answer

    def _answer(self, key, calls: List[Call], callees) -> List[Tuple[Call, List[str]]]:
        """(call, `callees(call)`) for each call, or the kept callees under `key` (the same graph,
        so the same calls in the same order)."""
        kept = self.kept.get(key) if self.kept is not None else None
        if kept is not None and len(kept) == len(calls):
            return [(call, list(found)) for call, found in zip(calls, kept)]
        answer = [(call, callees(call)) for call in calls]
        if self.kept is not None:
            self.kept[key] = tuple(tuple(found) for _, found in answer)
            self.kept_grew = True
        return answer

    def _of_receiver(self, project, fid: str, receiver: str) -> List[Tuple[Call, List[str]]]:
        """`of`, the calls on `self` (`self.m`, `super().m`, `self.attr.m`) resolved for `receiver`."""
        calls = project.functions[fid][1].calls
        entry = self._by_receiver.get((fid, receiver))
        if entry is not None and entry[0] is calls:
            return entry[1]
        own = dict((id(call), callees) for call, callees in self.of(project, fid))
        answer = self._answer((fid, receiver), calls, lambda call: project.callees(fid, call, receiver)
                              if call.kind in ON_SELF else own[id(call)])
        self._by_receiver[(fid, receiver)] = (calls, answer)
        return answer

    def callers(self, project, reached) -> Dict[str, List[Tuple[str, Call]]]:
        """callee → [(caller, call)] for the calls of the functions in `reached` (a dict), in
        the order of `reached` and of each one's calls. Asked again in the same pass (the same
        index and reach), the answer is the one just made."""
        if self._callers_over[0] is project and self._callers_over[1] is reached:
            return self._callers.by_target
        self._callers_over = (project, reached)
        return self._callers.over(reached, ((caller, self._for_receivers(project, caller, reached[caller]))
                                            for caller in reached)).by_target

    def _for_receivers(self, project, fid: str, reach) -> List[Tuple[Call, List[str]]]:
        """`of`, each call's callees for the function's own class and for every subclass it was
        reached for (`Reach.receivers`): a base's `forward` calling `self.update(x)` reaches each
        subclass's `update`. The same object while its parts are."""
        answer = self.of(project, fid)
        receivers = getattr(reach, "receivers", ())
        if not receivers:
            return answer
        parts = [answer] + [self.of(project, fid, r) for r in receivers]
        kept = self._merged.get(fid)
        if kept is not None and len(kept[0]) == len(parts) and all(a is b for a, b in zip(kept[0], parts)):
            return kept[1]
        merged = [(call, list(dict.fromkeys(c for part in parts for c in part[i][1])))
                  for i, (call, _) in enumerate(answer)]
        self._merged[fid] = (parts, merged)
        return merged


def _by_callee(answer):
    return ((callee, call) for call, callees in answer for callee in callees)

