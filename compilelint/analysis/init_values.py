"""Tests of `self.<attr>` decided by the constructor argument it holds, when no construction passes one.

`self.layerdrop_prob = layerdrop_prob` in `__init__(self, ..., layerdrop_prob=0.0)` holds 0.0 in
every instance whose construction leaves the argument out, so `if self.training and
self.layerdrop_prob > 0.0:` never opens there, nor does the operand after `... or
self.layerdrop_prob == 0.0 or`. At walk time a class keeps the attributes `__init__` copies from
a parameter with a constant default and no method assigns otherwise (`ClassInfo.init_defaults`),
and each file keeps what its class calls pass (`FileSummary.value_constructions`: a constant, a
parameter of the calling `__init__` handed on, or something else). The project pass collects, for
the class a finding's method is written in, the values the attribute can hold: the default (the
compiled model itself is built by the user, who is taken to keep the defaults, as with a config
class's defaults), and what every construction in the project passes — a subclass's
`super().__init__(...)` included, a handed-on parameter followed to that class's own
constructions. Anything else (`Block(**cfg)`, a computed value, a subclass assigning the
attribute itself) decides nothing. A finding whose tests no collected value satisfies is dropped.
"""
from __future__ import annotations

import ast
from typing import Dict, List, Optional, Set, Tuple

from compilelint.analysis.astutil import is_class_name, is_self, is_super_init, parameter_defaults
from compilelint.analysis.parts import NOT_BUILDERS, SUPER

SELF = "self."  # the flag names `config_flags.condition_flags` writes for a plain `self.<attr>`
OTHER = ("?",)  # an argument whose value the walk does not know
CONSTANTS = (bool, int, float, str, type(None))


def _constant_defaults(fn: ast.AST) -> Dict[str, object]:
    return {a.arg: d.value for a, d in parameter_defaults(fn.args)
            if isinstance(d, ast.Constant) and type(d.value) in CONSTANTS}


def init_defaults(class_node: ast.ClassDef, nodes) -> Dict[str, Tuple[str, object]]:
    """self.<attr> → (the `__init__` parameter copied into it, its constant default), for the
    attributes the class's methods assign only that once. `nodes`: function node → its nodes."""
    init = next((m for m in class_node.body if isinstance(m, (ast.FunctionDef, ast.AsyncFunctionDef))
                 and m.name == "__init__"), None)
    if init is None:
        return {}
    defaults = _constant_defaults(init)
    copies: Dict[str, Optional[str]] = {}
    for method in class_node.body:
        if not isinstance(method, (ast.FunctionDef, ast.AsyncFunctionDef)):
            continue
        for sub in nodes(method):
            kind = sub.__class__
            if kind is ast.Assign or kind is ast.AnnAssign or kind is ast.AugAssign:
                for target in sub.targets if kind is ast.Assign else [sub.target]:
                    for t in ast.walk(target):
                        if isinstance(t, ast.Attribute) and is_self(t.value) and isinstance(t.ctx, ast.Store):
                            plain = method is init and kind is ast.Assign and target is t and \
                                isinstance(sub.value, ast.Name) and sub.value.id in defaults and t.attr not in copies
                            copies[t.attr] = sub.value.id if plain else None
    return {attr: (param, defaults[param]) for attr, param in copies.items() if param is not None}


def record(facts, node, owner: str, summary) -> None:
    """The class calls in function `node` (of class `owner`, or "") and what each passes:
    (class called or SUPER, owner, whether the call is in `owner`'s `__init__`, ((positional index
    or keyword, ("=", constant) / ("@", parameter of the caller, its default) / ("self", an
    attribute of the caller) / OTHER), ...), whether it unpacks `*args` / `**kwargs`)."""
    params = {a.arg for a in node.args.posonlyargs + node.args.args + node.args.kwonlyargs}
    defaults = _constant_defaults(node)
    in_init = bool(owner) and node.name == "__init__"
    for sub in facts.nodes(node):
        if sub.__class__ is not ast.Call or not (sub.args or sub.keywords):
            continue
        func = sub.func
        if in_init and is_super_init(func):
            callee = SUPER
        else:
            leaf = func.id if func.__class__ is ast.Name else func.attr if func.__class__ is ast.Attribute else ""
            if not leaf[:1].isupper():
                continue
            callee = facts.imports.resolve(func)
            if not callee or not is_class_name(callee) or callee.startswith(NOT_BUILDERS):
                continue  # `nn.Linear(...)`: no class of the project
        unpacks = any(a.__class__ is ast.Starred for a in sub.args) or any(k.arg is None for k in sub.keywords)
        args = [(i, _value(a, params, defaults, in_init)) for i, a in enumerate(sub.args) if a.__class__ is not ast.Starred]
        args += [(k.arg, _value(k.value, params, defaults, in_init)) for k in sub.keywords if k.arg]
        summary.value_constructions.append((callee, owner, in_init, tuple(args), unpacks))


def _value(node: ast.AST, params: Set[str], defaults: Dict[str, object], in_init: bool) -> tuple:
    if isinstance(node, ast.Constant) and type(node.value) in CONSTANTS:
        return ("=", node.value)
    if in_init and isinstance(node, ast.Name) and node.id in params and node.id in defaults:
        return ("@", node.id, defaults[node.id])
    if in_init and isinstance(node, ast.Attribute) and is_self(node.value):
        return ("self", node.attr)  # what the caller's own attribute holds
    return OTHER


class InitValues:
    """The project pass's answers: which values can `self.<attr>` hold, for a class."""

    def __init__(self, project):
        self.project = project
        self._sites: Optional[Dict[str, List[tuple]]] = None
        self._memo: Dict[Tuple[str, str], Optional[Set[object]]] = {}
        self._values: Dict[Tuple[str, str], Optional[Set[object]]] = {}

    def allows(self, fid: str, flags: tuple) -> bool:
        """False when some `self.<attr>` test the finding's path needs holds for no value the
        attribute can have in the class its function is written in."""
        cls = None
        for flag in flags:
            if not flag[0].startswith(SELF):
                continue
            cls = cls or self.project.defining_class(fid)
            if cls is None:
                return True
            values = self.values(cls, flag[0][len(SELF):])
            if values is not None and not any(_satisfies(v, flag) for v in values):
                return False
        return True

    def values(self, cls: str, attr: str) -> Optional[Set[object]]:
        """The values `self.<attr>` can hold in an instance of `cls` (or a subclass); None: unknown."""
        if (cls, attr) not in self._values:
            self._values[(cls, attr)] = self._find(cls, attr)
        return self._values[(cls, attr)]

    def _find(self, cls: str, attr: str) -> Optional[Set[object]]:
        project = self.project
        owner = None
        for c in project.mro(cls):
            entry = project.classes.get(c)
            if entry is None:
                continue
            if attr in entry[1].init_defaults:
                owner = c
                break
            if attr in entry[1].flags:
                return None  # assigned otherwise (a class attribute, a method)
        if owner is None:
            return None
        for c, (summary, info) in project.classes.items():  # a subclass storing it itself
            if c != owner and attr in info.flags and owner in project.mro(c):
                return None
        param, default = project.classes[owner][1].init_defaults[attr]
        init = project.method(owner, "__init__")
        return self._passed(init, param, default) if init else None

    def _passed(self, init: str, param: str, default) -> Optional[Set[object]]:
        key = (init, param)
        if key in self._memo:
            return self._memo[key]
        self._memo[key] = None  # a cycle decides nothing
        params = self.project.functions[init][1].params  # (self, ...): positional index i fills i + 1
        out: Optional[Set[object]] = {default}
        for context, in_init, args, unpacks in self.sites().get(init, ()):
            given = next((value for slot, value in args if slot == param or type(slot) is int and
                          slot + 1 < len(params) and params[slot + 1] == param), None)
            if given is None:
                if unpacks:
                    out = None  # `Block(**cfg)` may pass it
                    break
                continue
            if given[0] == "=":
                out.add(given[1])
                continue
            if given[0] == "self" and in_init and context:
                found = self.values(context, given[1])
            else:
                caller = self.project.method(context, "__init__") if given[0] == "@" and in_init and context else None
                found = self._passed(caller, given[1], given[2]) if caller else None
            if found is None:
                out = None
                break
            out |= found
        self._memo[key] = out
        return out

    def sites(self) -> Dict[str, List[tuple]]:
        """`__init__` function id → (calling class, in its `__init__`, arguments, unpacks) of the
        calls that run it."""
        if self._sites is None:
            project = self.project
            self._sites = {}
            for summary in project.summaries:
                for callee, context, in_init, args, unpacks in summary.value_constructions:
                    if callee == SUPER:
                        init = project.method(context, "__init__", skip_first=True) if context in project.classes else None
                    else:
                        target = project.canonical(callee)
                        init = project.method(target, "__init__") if target in project.classes else None
                    if init is not None:
                        self._sites.setdefault(init, []).append((context or None, in_init, args, unpacks))
        return self._sites


def _satisfies(value, flag) -> bool:
    """Does `value` take the path's branch of the test `flag` says? Unknown comparisons do."""
    if len(flag) == 2:
        return bool(value) == flag[1]
    op, bound = flag[2], flag[3]
    if type(value) not in (int, float):
        return True
    result = {">": value > bound, ">=": value >= bound, "<": value < bound, "<=": value <= bound,
              "==": value == bound, "!=": value != bound}[op]
    return result == flag[1]
