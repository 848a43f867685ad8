"""Settings a module keeps at its constructor's default, when no construction in the project changes it.

`def __init__(self, ..., looped=False): self.looped = looped` makes `self.looped` whatever the
construction gave, and False when it gave nothing. If `__init__` is the only place that assigns
`self.looped` (in the class, its bases and its subclasses) and no call in the project that runs
this `__init__` passes `looped` — a call of the class, a subclass's `super().__init__(...)`, either
one handing on an argument of its caller's that is itself never given — then every instance holds
the default, and a branch that needs `self.looped` true (or `self.ignore_index is not None`, or
`self.mode == "fast"`) never runs. The same for a helper handed the attribute: `fmt(x,
ignore_index=self.ignore_index)` gives `ignore_index` only when a construction gave it.

A class whose `__new__` picks the class to build (`def __new__(cls, kind, ignore_index=None,
**kwargs): kwargs.update(ignore_index=ignore_index); return Binary(**kwargs)`) hands on what its
own constructions gave. A class no function of the project constructs is built elsewhere (by the
user, in a script's module-level code, from a configuration file) with arguments unknown: nothing
is decided (a `--entry` model class is such a class: the truth corpus builds `BinaryConfusionMatrix(
normalize="true")`, which the checked library does not show). So is the `--entry` class itself when
the project builds it too: the instance compiled is the user's, whatever the project's own
`Block(dim)` leaves out (`user_inits`: the constructors a call of the entry class runs). An
`__init__` parameter rebound in `__init__`, or an attribute any other method assigns, decides nothing.
"""
from __future__ import annotations

import ast
import weakref
from typing import Dict, List, Optional, Tuple

from compilelint.analysis.astutil import FUNCS, is_self, parameter_defaults, self_targets
from compilelint.analysis.call_binding import NONE, argument_slot, handed_name, hands_on_varargs, is_required, receiver_offset


def init_defaults(class_node: ast.ClassDef, nodes, of_kinds=None) -> Dict[str, str]:
    """self attribute → the `__init__` parameter it is a plain copy of, for parameters defaulting
    to a false constant (None, False, 0, "") and never rebound, when that copy is the attribute's
    only assignment in the class. `nodes`: function node → all its nodes; `of_kinds`: (function,
    kinds) → its nodes of those kinds (`FileFacts.of_kinds`), read for the other methods, whose
    assignments and calls are all that counts."""
    init = next((m for m in class_node.body if isinstance(m, FUNCS) and m.name == "__init__"), None)
    if init is None:
        return {}
    optional = {a.arg for a, d in parameter_defaults(init.args) if isinstance(d, ast.Constant) and not d.value}
    if not optional:
        return {}
    copies: Dict[str, str] = {}
    assigned: Dict[str, int] = {}
    for method in class_node.body:
        if not isinstance(method, FUNCS):
            continue
        for sub in nodes(method) if method is init or of_kinds is None else of_kinds(method, _STORES_AND_CALLS):
            cls = sub.__class__
            if cls is ast.Assign or cls is ast.AnnAssign or cls is ast.AugAssign:
                targets = sub.targets if cls is ast.Assign else [sub.target]
                for t in targets:
                    if method is init and cls is not ast.AugAssign and isinstance(t, ast.Name):
                        optional.discard(t.id)  # `flag = flag or default`: not the argument any more
                    for attr, value in self_targets(t, sub.value if sub.value is not None else t):
                        assigned[attr] = assigned.get(attr, 0) + 1
                        if method is init and cls is not ast.AugAssign and isinstance(value, ast.Name):
                            copies[attr] = value.id
            elif cls is ast.Call and isinstance(sub.func, ast.Name) and sub.func.id == "setattr" and sub.args and \
                    is_self(sub.args[0]):
                name = sub.args[1] if len(sub.args) > 1 else None
                key = name.value if isinstance(name, ast.Constant) and isinstance(name.value, str) else "*"
                assigned[key] = assigned.get(key, 0) + 2
            elif method is init and (cls is ast.For or cls is ast.NamedExpr or cls is ast.comprehension):
                for t in ast.walk(sub.target):
                    if isinstance(t, ast.Name):
                        optional.discard(t.id)
    if "*" in assigned:  # setattr(self, name, value): any attribute
        return {}
    return {attr: param for attr, param in copies.items() if param in optional and assigned.get(attr) == 1}


# What a method other than `__init__` is read for.
_STORES_AND_CALLS = frozenset((ast.Assign, ast.AnnAssign, ast.AugAssign, ast.Call))

CONSTRUCTORS = (".__init__", ".__new__")  # the functions a class call runs, which its user may call too
_DEFAULTS: "weakref.WeakKeyDictionary[object, Tuple[tuple, ConstructorDefaults]]" = weakref.WeakKeyDictionary()


def constructor_defaults(project) -> "ConstructorDefaults":
    """The one `ConstructorDefaults` of this project index over these summaries."""
    key = tuple(map(id, project.summaries))
    got = _DEFAULTS.get(project)
    if got is None or got[0] != key:
        got = (key, ConstructorDefaults(project))
        _DEFAULTS[project] = got
    return got[1]


class ConstructorDefaults:
    """Answers "does `self.<attr>`, read in method `fid`, hold its constructor default?" over the
    project's calls (every function's, traced or not: constructions run in `__init__`s)."""

    def __init__(self, project):
        # Weakly: `_DEFAULTS` keeps this object while its key, the project, lives, so a strong
        # reference back would keep the project and every summary alive to the end of the process
        # (and every later collection would traverse them).
        self._project = weakref.ref(project)
        self._sites: Optional[Dict[str, List[tuple]]] = None
        self._subclasses: Optional[Dict[str, List[str]]] = None
        self._given: Dict[Tuple[str, str, frozenset], bool] = {}
        self._memo: Dict[Tuple[str, str, frozenset], bool] = {}

    @property
    def project(self):
        return self._project()

    def at_default(self, fid: str, attr: str, user_inits: frozenset = frozenset()) -> bool:
        """`user_inits`: constructors the user calls with arguments unknown (the `--entry` class's)."""
        project = self.project
        cls = project.defining_class(fid) if fid in project.functions else None
        if cls is None:
            return False
        key = (cls, attr, user_inits)
        if key not in self._memo:
            self._memo[key] = False  # a cycle decides nothing
            self._memo[key] = self._decide(cls, attr, user_inits)
        return self._memo[key]

    def _decide(self, cls: str, attr: str, user_inits: frozenset) -> bool:
        project = self.project
        owners = [c for c in project.mro(cls) + self.subclasses(cls)
                  if c in project.classes and attr in project.classes[c][1].flags]
        if len(owners) != 1:  # assigned by no class seen (a base outside the project), or by two
            return False
        owner = owners[0]
        param = project.classes[owner][1].init_defaults.get(attr)
        init = f"{owner}.__init__"
        if param is None or init not in project.functions:
            return False
        return not self.given(init, param, user_inits)

    def given(self, fid: str, param: str, user_inits: frozenset = frozenset()) -> bool:
        """Could a call in the project give `param` to function `fid`? For an `__init__`, calls
        that construct its class (and the user, for one of `user_inits`); for another function,
        unknown callers (a method called through `self`) could: only the constructors' chains are
        followed."""
        key = (fid, param, user_inits)
        if key in self._given:
            return self._given[key]
        self._given[key] = True  # a cycle: given
        self._given[key] = self._any_site_gives(fid, param, user_inits)
        return self._given[key]

    def _any_site_gives(self, fid: str, param: str, user_inits: frozenset) -> bool:

        if not fid.endswith(CONSTRUCTORS) or fid in user_inits:
            return True
        callee = self.project.functions[fid][1]
        sites = self.sites().get(fid, ())
        if not sites:
            return True  # built only outside the checked code (by the user, at module level): anything
        for caller, call in sites:
            if call.args is None:
                return True  # `Block(*args)`, `Block(**cfg)`: anything
            slot = argument_slot(call, callee, param)
            if slot is None and param not in callee.params and call.args[0] > len(callee.params) - receiver_offset(call, callee):
                return True  # extra positional arguments, which its `*args` may hand on
            if slot is None:
                if hands_on_varargs(call) and self.given(caller, param, user_inits):
                    return True  # its caller's own *args/**kwargs, handed on
                continue
            own = next((name for at, name in call.forwards if at == slot), None)
            if own == NONE:
                continue
            if own is None or own.startswith("=") or is_required(own):
                return True  # a value of the caller's own making, or a constant
            if own.startswith("self."):
                if not self.at_default(caller, own[5:], user_inits):
                    return True
            elif self.given(caller, handed_name(own), user_inits):
                return True
        return False

    def sites(self) -> Dict[str, List[tuple]]:
        """`__init__` (or `__new__`) id → (caller, call) for every construction and
        `super().__init__(...)` call."""
        if self._sites is None:
            project = self.project
            self._sites = {}
            for fid, (_, info) in project.functions.items():
                for call in info.calls:
                    if call.kind == "name" or (call.kind == "super" and call.target in ("__init__", "__new__")):
                        callees = project.callees(fid, call)
                        target = project.canonical(call.target) if call.kind == "name" else ""
                        new = project.method(target, "__new__") if target in project.classes else None
                        for callee in callees + ([new] if new else []):
                            if callee.endswith(CONSTRUCTORS):
                                self._sites.setdefault(callee, []).append((fid, call))
        return self._sites

    def subclasses(self, cls: str) -> List[str]:
        if self._subclasses is None:
            project = self.project
            self._subclasses = {}
            for c in project.classes:
                for base in project.mro(c)[1:]:
                    self._subclasses.setdefault(base, []).append(c)
        return self._subclasses.get(cls, [])
