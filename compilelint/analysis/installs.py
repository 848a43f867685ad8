"""Modules a method installs into another object at run time, and what its calls of its own
methods pass.

A class may build modules in a method and put them into a model it holds rather than on `self`:
`setattr(parent, name, new_module)`, `parent.add_module(name, new_module)`, `parent._modules[name]
= new_module` (a layer replaced in place). Calling that model then runs them. The value installed
is often a parameter of a helper (`def _replace(self, parent, name, new_module)`), filled by the
class's other methods (`self._replace(parent, name, self._build(target))`): `@param:<name>` stands
for it, and the project pass (`project_pass/installed.py`) joins it with what each
`self.<method>(...)` / `cls.<method>(...)` call of the class passes there.
"""
from __future__ import annotations

import ast
from typing import List, Tuple

from compilelint.analysis.astutil import is_self, parameter_names

PARAM = "@param:"
# Methods of a module that register a child module under a name.
ADD_CHILD = frozenset({"add_module", "register_module"})
_CALL_OR_ASSIGN = frozenset((ast.Call, ast.Assign))
_CALL = frozenset((ast.Call,))


def _installed_values(facts, method) -> List[ast.AST]:
    """The values installed into an object other than `self` in a method."""
    out = []
    for sub in facts.of_kinds(method, _CALL_OR_ASSIGN):
        if sub.__class__ is ast.Call:
            func = sub.func
            if func.__class__ is ast.Name and func.id == "setattr" and len(sub.args) == 3 and not is_self(sub.args[0]):
                out.append(sub.args[2])
            elif func.__class__ is ast.Attribute and func.attr in ADD_CHILD and len(sub.args) == 2 and \
                    not is_self(func.value):
                out.append(sub.args[1])
        elif len(sub.targets) == 1:
            t = sub.targets[0]  # parent._modules[name] = module
            if t.__class__ is ast.Subscript and t.value.__class__ is ast.Attribute and t.value.attr == "_modules" and \
                    not is_self(t.value.value):
                out.append(sub.value)
    return out


def installs(facts, method, parts) -> Tuple[str, ...]:
    """The parts of what `method` installs into another object; `@param:p` for a parameter."""
    values = _installed_values(facts, method)
    if not values:
        return ()
    params = parameter_names(method.args)
    out: List[str] = []
    for value in values:
        found = parts.value_parts(value)
        if value.__class__ is ast.Name and value.id in params:
            found.append(PARAM + value.id)
        out.extend(p for p in found if p not in out)
    return tuple(out)


def self_calls(facts, method, parts) -> Tuple[Tuple[str, tuple], ...]:
    """(method, ((position or keyword, parts), ...)) of each `self.m(...)` / `cls.m(...)` call that
    passes a local holding parts or a call building some (`self._replace(parent, name, new)`)."""
    out = []
    for sub in facts.of_kinds(method, _CALL):
        func = sub.func
        if func.__class__ is not ast.Attribute or func.value.__class__ is not ast.Name or \
                func.value.id not in ("self", "cls"):
            continue
        args = []
        for slot, value in [(i, a) for i, a in enumerate(sub.args)] + [(k.arg, k.value) for k in sub.keywords if k.arg]:
            if value.__class__ is ast.Starred:
                break
            if value.__class__ is ast.Call or value.__class__ is ast.Name and value.id in parts.holders():
                found = parts.value_parts(value)
                if found:
                    args.append((slot, tuple(found)))
        if args:
            out.append((func.attr, tuple(args)))
    return tuple(out)
