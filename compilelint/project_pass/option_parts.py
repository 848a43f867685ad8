"""Parts built under a constructor option that no construction chooses.

`__init__` often picks a part by an option: `if kind == "plain": self.attn = Plain(...) elif kind
== "relative": self.attn = Relative(...)`. Python runs the branch the argument selects, so
`self.attn` holds `Relative` only if some construction of the class passes (or defaults to)
"relative". Where every construction in the project passes constants, or hands on a parameter of
its own `__init__` whose constructions do (`Decoder(kind="plain")` building `Layer(kind=kind)`),
the values the option takes are known, and a part whose branch none of them selects is not one
(`ClassInfo.option_parts` records each assignment with its option tests). A class the user builds
(a compile root's), a construction with `*args`/`**kwargs` or a value of the caller's own making
leaves the option open: nothing is left out.
"""
from __future__ import annotations

from typing import Dict, FrozenSet, Optional, Tuple

from compilelint.analysis.call_binding import NONE, VALUE, argument_slot, handed_name, hands_on_varargs, receiver_offset
from compilelint.analysis.init_defaults import constructor_defaults


class OptionParts:
    def __init__(self):
        # The constructors of classes the user builds (the compile roots'): any argument.
        self.user_built: FrozenSet[str] = frozenset()
        self._values: Dict[Tuple[str, str, str, FrozenSet[str]], Optional[frozenset]] = {}

    def allows(self, project, cls: str, attr: str, part: str, receiver: str = "") -> bool:
        """Can `cls`'s `__init__` store `part` (a canonical class name) in `self.<attr>` of an
        instance of `receiver` (a subclass: its own `__init__` chain calls `cls`'s)?"""
        records = None
        for owner in project.mro(cls):  # a subclass in the same file copies its base's parts: the base's __init__ stores them
            entry = project.classes.get(owner)
            records = entry[1].option_parts.get(attr) if entry else None
            if records:
                cls = owner
                break
        if not records:
            return True
        paths = [path for classes, path in records if part in {project.canonical(c) for c in classes}]
        if not paths:
            return True  # stored by other code than a plain assignment of `__init__`
        return any(path is None or self._feasible(project, cls, path, receiver) for path in paths)

    def _feasible(self, project, cls: str, path, receiver: str) -> bool:
        """Some value each option takes passes every test of `path` on it."""
        init = f"{cls}.__init__"
        by_param: Dict[str, list] = {}
        for param, consts, branch, default in path:
            by_param.setdefault(param, []).append((consts, branch, default))
        for param, tests in by_param.items():
            values = self.values(project, init, param, tests[0][2], self._chain(project, receiver, cls))
            if values is not None and not any(all((v in consts) == branch for consts, branch, _ in tests)
                                              for v in values):
                return False
        return True

    @staticmethod
    def _chain(project, receiver: str, cls: str) -> Tuple[str, ...]:
        """The `__init__`s of `receiver`'s classes before `cls` in its MRO: for an instance of
        `receiver`, `cls.__init__` runs only through their `super().__init__(...)`."""
        if not receiver or receiver == cls:
            return ()
        mro = project.mro(receiver)
        before = mro[: mro.index(cls)] if cls in mro else []
        return tuple(f"{k}.__init__" for k in before if f"{k}.__init__" in project.functions)

    def values(self, project, init: str, param: str, default: str, chain: Tuple[str, ...] = ()) -> Optional[frozenset]:
        """The reprs of the constants parameter `param` of constructor `init` receives from every
        construction in the project (`default`: its default's repr, "" when not a constant), or
        None when some construction could give anything. `chain`: the subclass `__init__`s whose
        `super().__init__(...)` calls are the only constructions that count."""
        key = (init, param, default, chain, self.user_built)
        if key not in self._values:
            self._values[key] = None  # a cycle decides nothing
            self._values[key] = self._values_of(project, init, param, default, chain)
        return self._values[key]

    def _values_of(self, project, init: str, param: str, default: str, chain) -> Optional[frozenset]:

        if init not in project.functions or init in self.user_built and not chain:
            return None
        callee = project.functions[init][1]
        sites = constructor_defaults(project).sites().get(init, ())
        if chain:
            sites = [(caller, call) for caller, call in sites if caller in chain and call.kind == "super"]
        if not sites:
            return None  # built only outside the checked code: anything
        out = set()
        for caller, call in sites:
            if call.args is None or hands_on_varargs(call):
                return None  # `Layer(*args)`, `Layer(**cfg)`, or its caller's own *args handed on
            slot = argument_slot(call, callee, param)
            if slot is None:
                if param not in callee.params and call.args[0] > len(callee.params) - receiver_offset(call, callee):
                    return None  # extra positional arguments
                if not default:
                    return None
                out.add(default)
                continue
            own = next((name for at, name in call.forwards if at == slot), None)
            if own == NONE:
                out.add("None")
            elif own is not None and own.startswith(VALUE):
                out.add(own[len(VALUE):])
            elif own is None or own.startswith("self.") or not caller.endswith(".__init__"):
                return None  # a value of the caller's own making
            else:  # a parameter of the caller's own constructor, handed on: what its constructions give
                handed = self._handed_values(project, caller, handed_name(own))
                if handed is None:
                    return None
                out |= handed
        return frozenset(out)

    def _handed_values(self, project, caller: str, name: str) -> Optional[frozenset]:
        """The values `caller`'s parameter `name` takes, its default read from the caller's class's
        option records when one tests it (else: unknown when a construction leaves it out)."""
        cls = caller[: -len(".__init__")]
        entry = project.classes.get(cls)
        default = ""
        for records in (entry[1].option_parts.values() if entry else ()):
            for _, path in records:
                for param, _, _, d in path or ():
                    if param == name:
                        default = d
        return self.values(project, caller, name, default)
