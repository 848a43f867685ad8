"""The modules a class installs at run time into the models it holds (`analysis/installs.py`), as
classes: what may run when it calls a held model whose classes the project does not know
(`self.model(x)` on a model passed in from outside, its layers replaced by the class's own).

Read in the MRO of the instance (`cls`): each method it runs (the nearest definition of each
name) gives what it installs itself, and, at each call `self.m(...)` / `cls.m(...)`, the parts it
passes for the parameters `m` installs (`@param:p`). Parts resolve as the instance sees them:
`@self:m` the returns of its own `m`, `@cls:name` its class-level dict of classes, `@ret:f` the
returns of `f`. Every return counts (each installed module is an instance of its own, unlike one
attribute), and only module classes are kept.
"""
from __future__ import annotations

from typing import Dict, List

from compilelint.analysis.installs import PARAM
from compilelint.analysis.parts import ARG, CLASS_ATTR, RETURNS, SELF_RETURNS

DEPTH = 4  # builders calling builders: deeper chains are not followed


class Installed:
    """Kept by the project index, which passes itself to each question (see `PartFlow`)."""

    def __init__(self):
        self._memo: Dict[str, List[str]] = {}

    def classes(self, project, cls: str) -> List[str]:
        if cls not in self._memo:
            self._memo[cls] = []  # a cycle answers nothing more
            found: List[str] = []
            for fid in self._methods(project, cls):
                info = project.functions[fid][1]
                self._resolve(project, cls, [p for p in info.installs if not p.startswith(PARAM)], found, 0)
                for method, args in info.self_calls:
                    self._passed(project, cls, method, args, found)
            self._memo[cls] = [c for c in found if c in project.classes and project.is_module_class(c)]
        return self._memo[cls]

    @staticmethod
    def _methods(project, cls: str) -> List[str]:
        """The methods an instance of `cls` runs by each name: the nearest in its MRO."""
        out, seen = [], set()
        for c in project.mro(cls):
            entry = project.classes.get(c)
            for name in entry[1].methods if entry else ():
                if name not in seen:
                    seen.add(name)
                    out.append(f"{c}.{name}")
        return [fid for fid in out if fid in project.functions]

    def _passed(self, project, cls: str, method: str, args, found: List[str]):
        """What a call `self.<method>(...)` passes for the parameters that method installs."""
        callee = project.method(cls, method)
        entry = project.functions.get(callee) if callee else None
        if entry is None:
            return
        wanted = {p[len(PARAM):] for p in entry[1].installs if p.startswith(PARAM)}
        if not wanted:
            return
        params = entry[1].params
        shift = 1 if params[:1] in (("self",), ("cls",)) else 0  # a staticmethod has no receiver
        for slot, parts in args:
            name = slot if type(slot) is str else params[slot + shift] if slot + shift < len(params) else None
            if name in wanted:
                self._resolve(project, cls, parts, found, 0)

    def _resolve(self, project, cls: str, parts, found: List[str], depth: int):
        for part in parts:
            if part.startswith(SELF_RETURNS) or part.startswith(RETURNS):
                if depth >= DEPTH:
                    continue
                fid = project.method(cls, part[len(SELF_RETURNS):]) if part.startswith(SELF_RETURNS) else \
                    project.canonical(part[len(RETURNS):])
                entry = project.functions.get(fid) if fid else None
                for returned in entry[1].returns_parts if entry else ():
                    self._resolve(project, cls, returned, found, depth + 1)
            elif part.startswith(CLASS_ATTR):
                found.extend(c for c in project.class_registry(cls, part[len(CLASS_ATTR):]) if c not in found)
            elif not part.startswith(ARG) and not part.startswith("@"):
                c = project.canonical(part)
                if c not in found:
                    found.append(c)
