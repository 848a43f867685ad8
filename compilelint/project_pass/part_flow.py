"""The project pass's answer to "which classes does `self.<attr>` hold?" where `__init__` does not
construct them itself (`parts`): constructor-argument flow, builder returns, container elements.

- `@arg:p` of a class's `__init__`: the parts every constructor call in the project passes for `p`
  — a call of the class (or of a subclass that inherits that `__init__`), positional or keyword,
  and the `super().__init__(...)` of each subclass whose next `__init__` it is (a subclass that
  builds the parts and hands them to its base). What a call passes may itself be a parameter of
  the caller's own `__init__`, followed the same way.
- `@ret:f` / `@self:m`: what the returns of that function (or method, on the class) build;
- `@cls:name`: the classes of the class-level dict of classes `name` nearest in the MRO;
- `@selfarg:m:p`: what the object's own calls `self.m(...)` pass for parameter `p` of its method
  `m` — the calls written in the classes of the receiver's MRO, the instance whose members are
  asked about (a base's `add(self, layer)` that builds and stores the layer it is handed, called
  `self.add(Block)` in a subclass's `__init__`). These fill one container, so what every such
  call passes counts (no agreement asked).
A parameter given different parts by different calls answers nothing (the reached function cannot
tell which instance it runs on), nor does a builder whose return sites build different parts (the
caller's values pick one); a return under a false module-level constant does not count (`parts`);
cycles answer nothing more.
"""
from __future__ import annotations

from typing import Dict, List, Optional, Tuple

from compilelint.analysis.parts import ARG, CLASS_ATTR, RETURNS, SELF_ARG, SELF_CALL, SELF_RETURNS, SUPER


class PartFlow:
    """Kept by the project index, which passes itself to each question (the index holding a flow
    that held the index would be a cycle: every summary freed only by the cyclic collector)."""

    def __init__(self):
        self._sites: Optional[Dict[str, List[Tuple[Optional[str], tuple]]]] = None
        self._self_sites: Dict[str, List[Tuple[str, tuple]]] = {}  # method name → (calling class, arguments)
        self._memo: Dict[Tuple[str, str], List[str]] = {}
        self._built: Optional[set] = None  # the classes constructor calls build (`builds`)

    def resolve(self, project, context: Optional[str], parts, receiver: Optional[str] = None) -> List[str]:
        """The classes `parts` stand for, read in the code of class `context` (None: a module
        function) run for an instance of `receiver` (None: of `context`)."""
        out: List[str] = []
        for part in parts:
            if part.startswith(SELF_ARG):
                method, _, param = part[len(SELF_ARG):].partition(":")
                found = self._self_passed(project, receiver or context, method, param) if context else []
            elif part.startswith(ARG):
                found = self._param(project, context, part[len(ARG):], receiver) if context else []
            elif part.startswith(RETURNS):
                found = self._returns(project, project.canonical(part[len(RETURNS):]))
            elif part.startswith(SELF_RETURNS):
                method = project.method(context, part[len(SELF_RETURNS):]) if context else None
                found = self._returns(project, method) if method else []
            elif part.startswith(CLASS_ATTR):
                found = project.class_registry(context, part[len(CLASS_ATTR):]) if context else []
            else:
                found = [project.canonical(part)]
            out.extend(c for c in found if c not in out)
        return out

    def _remembered(self, key: Tuple[str, str], work) -> List[str]:
        if key not in self._memo:
            self._memo[key] = []  # a cycle answers nothing more
            self._memo[key] = work()
        return self._memo[key]

    def _returns(self, project, fid: str) -> List[str]:
        entry = project.functions.get(fid)
        if entry is None or not entry[1].returns_parts:
            return []
        summary, info = entry
        owner = f"{summary.module}.{info.qualname.rsplit('.', 1)[0]}" if "." in info.qualname else None
        context = owner if owner in project.classes else None
        return self._remembered(("ret", fid), lambda: self._agreed(project, context, info.returns_parts))

    def _agreed(self, project, context: Optional[str], sites) -> List[str]:
        """What the return sites build when they all build the same: a builder that picks among
        classes by its arguments (`get_block(name)`, one `return` per kind) is decided by the
        caller's values, which the project pass does not know — so it gives none."""
        out: List[str] = []
        for parts in sites:
            found = self.resolve(project, context, parts)
            if found and out and set(found) != set(out):
                return []
            out = out or found
        return out

    def _param(self, project, cls: str, param: str, receiver: Optional[str] = None) -> List[str]:
        init = project.method(cls, "__init__")
        if init is None:
            return []
        key = (init, f"{param}@{receiver or ''}")
        return self._remembered(key, lambda: self._passed(project, init, param, receiver))

    def _passed(self, project, init: str, param: str, receiver: Optional[str] = None) -> List[str]:
        """What the project's constructor calls that run `init` pass for `param`, when they all
        pass the same: a base class that each subclass gives other parts (a cache whose every
        kind hands its own layers to the base's `layers`) holds, in one instance, only one
        subclass's, which the function reached cannot tell — so it is given none. For an instance
        of `receiver`, only the calls that build one count (a call of that class, the
        `super().__init__` of a class of its MRO), where the project has any."""
        params = project.functions[init][1].params  # (self, ...): positional index i fills i + 1
        sites = self.sites(project).get(init, ())
        if receiver:
            chain = project.mro(receiver)
            own = [site for site in sites if site[2] == receiver or site[2] in chain and site[3]]
            sites = own or sites
        out: List[str] = []
        for context, args, _, _ in sites:
            for slot, parts in args:
                if slot == param or type(slot) is int and slot + 1 < len(params) and params[slot + 1] == param:
                    found = self.resolve(project, context, parts, receiver if receiver and context in project.mro(receiver) else None)
                    if found and out and set(found) != set(out):
                        return []
                    out = out or found
        return out

    def _self_passed(self, project, receiver: str, method: str, param: str) -> List[str]:
        """What the calls `self.<method>(...)` written in the receiver's classes pass for `param`."""
        fid = project.method(receiver, method)
        if fid is None:
            return []

        def work():
            self.sites(project)
            params = project.functions[fid][1].params
            chain = set(project.mro(receiver))
            out: List[str] = []
            for context, args in self._self_sites.get(method, ()):
                if context not in chain:
                    continue  # a sibling class's calls fill its own instances
                for slot, parts in args:
                    if slot == param or type(slot) is int and slot + 1 < len(params) and params[slot + 1] == param:
                        out.extend(c for c in self.resolve(project, context, parts, receiver) if c not in out)
            return out
        return self._remembered((f"{receiver}:{method}", param), work)

    def builds(self, project, cls: str) -> bool:
        """Does a constructor call of the project build an instance of `cls` itself, passing parts?"""
        if self._built is None:
            self._built = {site[2] for found in self.sites(project).values() for site in found if not site[3]}
        return cls in self._built

    def sites(self, project) -> Dict[str, List[Tuple[Optional[str], tuple, Optional[str], bool]]]:
        """`__init__` function id → (calling class or None, arguments, the class whose instance the
        call builds, whether it is a `super().__init__`) of the calls that run it."""
        if self._sites is None:
            self._sites = {}
            for summary in project.summaries:
                for callee, context, args in summary.constructions:
                    if callee.startswith(SELF_CALL):
                        self._self_sites.setdefault(callee[len(SELF_CALL):], []).append((context, args))
                        continue
                    if callee == SUPER:  # the next `__init__` after the calling class's
                        known = context in project.classes
                        init = project.method(context, "__init__", skip_first=True) if known else None
                        built = context
                    else:
                        target = project.canonical(callee)
                        init = project.method(target, "__init__") if target in project.classes else None
                        built = target
                    if init is not None:
                        self._sites.setdefault(init, []).append((context or None, args, built, callee == SUPER))
        return self._sites
