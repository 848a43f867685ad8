"""Does a test of a module's own state hold in the compiled module? (`analysis/state.py`)

`self.<attr>` holds what construction left there — the constant `__init__` stores, else the
class-level constant nearest in the MRO — as long as no method that the module's `forward` runs
(its own methods, followed through `self.m(...)`, `super().m(...)` and property reads) stores
into or fills it: only a method the user calls between construction and the compiled call
changes it (`fold()`, `bypass()`), which the default use does not. A property whose
getter returns an attribute plainly (`return bool(self.folded)`) stands for that
attribute. Anything else (a value `__init__` computes, a `setattr(self, name, v)` under a run-time
name, an attribute some code stores on another object: `module.checkpointing = True`) is
undecided.

The forward's own calls may sit under such tests (`if self.is_folded: self.unfold()`, and
`unfold` empties the list): the values are decided together, as the largest set of attributes
that keep their construction value when every call under a test that those values rule out is
left out (none of them changed first, none can change: by induction over the calls).
"""
from __future__ import annotations

from typing import Dict, List, Optional, Set

from compilelint.analysis.state import STATE

DEPTH = 3  # properties returning properties


class StateFlags:
    """Kept by the project index, which passes itself to each question (see `PartFlow`)."""

    def __init__(self):
        self._kept: Dict[str, Dict[str, bool]] = {}
        self._subclasses: Optional[Dict[str, List[str]]] = None
        self._foreign: Optional[Set[str]] = None

    def ruled_out(self, project, guards) -> bool:
        """Does a state guard among `guards` need what construction did not leave, in an instance
        of the module class testing it and of each of its subclasses (a subclass may declare
        another default: the guard does not say which one runs)?"""
        for name, needed in guards:
            if name.startswith(STATE):
                cls, _, attr = name[len(STATE):].rpartition(":")
                if cls not in project.classes or not project.is_module_class(cls):
                    continue
                values = {self.value(project, c, attr) for c in self.subclasses(project, cls)}
                if None not in values and needed not in values:
                    return True
        return False

    def value(self, project, cls: str, attr: str) -> Optional[bool]:
        """What `self.<attr>` holds in the compiled module of class `cls`; None: undecided."""
        plain = self.plain_attr(project, cls, attr)
        return self.kept(project, cls).get(plain) if plain else None

    @staticmethod
    def plain_attr(project, cls: str, attr: str) -> str:
        """The data attribute `self.<attr>` reads: itself, or what a property getter returns; "" for a method."""
        for _ in range(DEPTH):
            getter = project.method(cls, attr)
            if getter is None:
                return attr
            attr = project.functions[getter][1].returns_attr if project.is_property(getter) else ""
            if not attr:
                return ""
        return ""

    def kept(self, project, cls: str) -> Dict[str, bool]:
        """The attributes of `cls` that keep their construction value, with that value."""
        if cls in self._kept:
            return self._kept[cls]
        self._kept[cls] = {}  # a cycle decides nothing
        if self._foreign is None:  # attributes some code stores on other objects: never decided
            self._foreign = {a for summary in project.summaries for a in summary.foreign_stores}
        chain = [c for c in project.mro(cls) if c in project.classes]
        infos = [project.classes[c][1] for c in chain]
        if any("*" in i.state_changes or "*" in i.init_state for i in infos):
            return {}  # `setattr(self, name, v)`: any attribute may change
        held: Dict[str, bool] = {}
        for a in ({a for i in infos for a in i.state_defaults} | {a for i in infos for a in i.init_state}) - self._foreign:
            stored = [i.init_state[a] for i in infos if a in i.init_state]  # nearest `__init__` first
            if None in stored:
                continue  # an `__init__` stores something else than a constant
            held[a] = stored[0] if stored else next(i.state_defaults[a] for i in infos if a in i.state_defaults)
        changers: Dict[str, Set[str]] = {}
        for c, i in zip(chain, infos):
            for a, methods in i.state_changes.items():
                changers.setdefault(a, set()).update(f"{c}.{m}" for m in methods)
        while True:
            run = self._forward_runs(project, cls, held)
            changed = [a for a in held if changers.get(a, set()) & run]
            if not changed:
                break
            for a in changed:
                del held[a]
        self._kept[cls] = held
        return held

    def _forward_runs(self, project, cls: str, held: Dict[str, bool]) -> Set[str]:
        """The methods of `cls` its `forward` (and `__call__`) runs through its own-method calls,
        less the calls under a state test that `held` rules out."""
        seen: Set[str] = set()
        own = set(project.mro(cls))
        todo = list(project.called(cls))
        while todo:
            fid = todo.pop()
            if fid in seen or fid not in project.functions:
                continue
            seen.add(fid)
            for call in project.functions[fid][1].calls:
                if call.kind not in ("self", "property", "super") or self._against(project, cls, call.guards, held):
                    continue
                todo.extend(f for f in project.callees(fid, call, cls) if project.defining_class(f) in own)
        return seen

    def _against(self, project, cls: str, guards, held: Dict[str, bool]) -> bool:
        for name, needed in guards:
            if name.startswith(STATE):
                attr = self.plain_attr(project, cls, name[len(STATE):].rpartition(":")[2])
                if attr in held and held[attr] != needed:
                    return True
        return False

    def subclasses(self, project, cls: str) -> List[str]:
        """`cls` and the project's classes that have it in their MRO."""
        if self._subclasses is None:
            self._subclasses = {}
            for c in project.classes:
                for base in project.mro(c):
                    self._subclasses.setdefault(base, []).append(c)
        return self._subclasses.get(cls, [cls])
