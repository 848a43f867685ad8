"""A module's own state flags: what construction leaves in `self.<attr>`, and which methods change it.

`if self.bypassed:` (a property returning `self._bypassed`, declared `_bypassed: bool = False`
on the class) or `if self.is_folded:` (`bool(self.folded)`, a list only `fold()` fills) test state
that a method the user calls turns on (`bypass()`, `fold()`). Unless such a method runs inside
the compiled code, the compiled module holds what its construction gave: the branch needing the
other value never runs, as a branch under a config flag that defaults off (`config_flags`). The file analysis records, per class: the truth of each
class-level constant (`flag = False`, `items = []`), of each constant `__init__` stores (None for
anything else it stores), the methods that store into or fill each attribute, and, per property,
the attribute its getter returns; per file, the attributes stored on other objects (state set
from outside the class: never decided); the project pass (`project_pass/state_flags.py`) decides.
"""
from __future__ import annotations

import ast
from typing import Dict, List, Optional, Tuple

from compilelint.analysis.astutil import FUNCS, is_self

# The pseudo-predicate of a state test: `STATE + "<dotted class>:<attr>"` in a node's guards.
STATE = "@state:"
# Methods that fill a container in place.
FILLS = frozenset({"append", "extend", "insert", "add", "update", "setdefault", "pop", "remove", "clear"})
_STORES = frozenset((ast.Assign, ast.AnnAssign, ast.AugAssign, ast.Call))  # of_kinds keeps these apart
_REBINDS = frozenset((ast.Assign, ast.AugAssign, ast.AnnAssign, ast.For))
_CALLS = frozenset((ast.Call,))


def constant_truth(value) -> Optional[bool]:
    """The truth of a constant (`False`, `0`, `None`, `""`) or an empty or literal container; None otherwise."""
    kind = value.__class__
    if kind is ast.Constant:
        return bool(value.value)
    if kind in (ast.List, ast.Tuple, ast.Set):
        return bool(value.elts)
    if kind is ast.Dict:
        return bool(value.keys)
    if kind is ast.Call and value.func.__class__ is ast.Name and value.func.id in ("list", "dict", "set", "tuple") \
            and not value.args and not value.keywords:
        return False
    return None


def class_state(class_node: ast.ClassDef, of_kinds) -> Tuple[Dict[str, bool], Dict[str, Optional[bool]],
                                                               Dict[str, Tuple[str, ...]]]:
    """(class-level constants' truth, `__init__`'s stores' truth (None: not a constant), attribute →
    the other methods storing into or filling `self.<attr>`). `of_kinds`: `FileFacts.of_kinds`."""
    defaults: Dict[str, bool] = {}
    for stmt in class_node.body:
        target = stmt.target if stmt.__class__ is ast.AnnAssign else \
            stmt.targets[0] if stmt.__class__ is ast.Assign and len(stmt.targets) == 1 else None
        if target.__class__ is ast.Name and stmt.value is not None:
            truth = constant_truth(stmt.value)
            if truth is not None:
                defaults[target.id] = truth
    init: Dict[str, Optional[bool]] = {}
    changed: Dict[str, List[str]] = {}
    for method in class_node.body:
        if not isinstance(method, FUNCS):
            continue
        for attr, value in _stores(method, of_kinds):
            if method.name == "__init__":
                truth = constant_truth(value) if value is not None else None
                init[attr] = truth if attr not in init or init[attr] == truth else None
            elif method.name not in changed.setdefault(attr, []):
                changed[attr].append(method.name)
    return defaults, init, {k: tuple(v) for k, v in changed.items()}


def constructor_copies(class_node: ast.ClassDef, of_kinds) -> Tuple[Dict[str, str], Tuple[Tuple[object, bool], ...]]:
    """(attr → the `__init__` parameter `self.<attr>` is a plain copy of, its only store there, the
    parameter never rebound; the constants its one `super().__init__(...)` call passes, as (positional
    index or keyword, truth)): a subclass that fixes a base's option (`super().__init__(exact=True)`)
    decides what every instance of it holds (`project_pass/state_flags.py`)."""
    init = next((m for m in class_node.body if isinstance(m, FUNCS) and m.name == "__init__"), None)
    if init is None:
        return {}, ()
    args = init.args
    params = {a.arg for a in args.posonlyargs + args.args[1:] + args.kwonlyargs}
    rebound = {t.id for sub in of_kinds(init, _REBINDS)  # the function's shared node lists, not a walk
               for target in (sub.targets if sub.__class__ is ast.Assign else [sub.target])
               for t in ([target] if target.__class__ is ast.Name else ast.walk(target)) if t.__class__ is ast.Name}
    stores: Dict[str, List[Optional[ast.AST]]] = {}
    for attr, value in _stores(init, of_kinds):
        stores.setdefault(attr, []).append(value)
    copies = {attr: values[0].id for attr, values in stores.items()
              if len(values) == 1 and values[0].__class__ is ast.Name and values[0].id in params - rebound}
    supers = [sub for sub in of_kinds(init, _CALLS) if isinstance(sub.func, ast.Attribute)
              and sub.func.attr == "__init__" and isinstance(sub.func.value, ast.Call)
              and isinstance(sub.func.value.func, ast.Name) and sub.func.value.func.id == "super"]
    passed: List[Tuple[object, bool]] = []
    if len(supers) == 1:
        call = supers[0]
        for i, a in enumerate(call.args):
            if a.__class__ is ast.Starred:
                break  # the positions after it are unknown
            if a.__class__ is ast.Constant:
                passed.append((i, bool(a.value)))
        passed += [(k.arg, bool(k.value.value)) for k in call.keywords if k.arg and k.value.__class__ is ast.Constant]
    return copies, tuple(passed)


def run_time_name(name: ast.AST) -> str:
    """The attribute name `setattr(self, name, v)` stores: the constant, else "<prefix>*" for an
    f-string that starts with a constant (`f"grid_{i}"` → "grid_*": only names with that prefix),
    else "*" (any)."""
    if name.__class__ is ast.Constant and isinstance(name.value, str):
        return name.value
    if name.__class__ is ast.JoinedStr and name.values and name.values[0].__class__ is ast.Constant:
        return f"{name.values[0].value}*"
    return "*"


def may_name(pattern: str, attr: str) -> bool:
    """Can a store under `pattern` (a name, "*" or "<prefix>*": `run_time_name`) be to `attr`?"""
    return pattern == attr or pattern.endswith("*") and attr.startswith(pattern[:-1])


def _stores(method, of_kinds):
    """(attr, value or None) of each store into, fill of or `setattr` on `self` in a method
    (`setattr(self, name, v)` under a name not constant: attr "*", or "grid_*" for `f"grid_{i}"`)."""
    for sub in of_kinds(method, _STORES):
        kind = sub.__class__
        if kind is ast.Call:
            func = sub.func
            if func.__class__ is ast.Attribute and func.attr in FILLS and func.value.__class__ is ast.Attribute \
                    and is_self(func.value.value):
                yield func.value.attr, None  # self.items.append(x)
            elif func.__class__ is ast.Name and func.id == "setattr" and len(sub.args) == 3 and is_self(sub.args[0]):
                name = sub.args[1]
                yield run_time_name(name), sub.args[2]
            continue
        targets = sub.targets if kind is ast.Assign else [sub.target]
        for t in targets:
            if t.__class__ is ast.Subscript:
                t = t.value  # self.items[k] = v
                value = None
            else:
                value = sub.value if kind is ast.Assign or kind is ast.AnnAssign else None
            if t.__class__ is ast.Attribute and is_self(t.value):
                yield t.attr, value
            elif t.__class__ in (ast.Tuple, ast.List):
                for e in t.elts:
                    if e.__class__ is ast.Attribute and is_self(e.value):
                        yield e.attr, None


# `self.register_buffer(name, t)` and its kind: an attribute the module gets by a call, not a store
REGISTERS = frozenset({"register_buffer", "register_parameter", "add_module", "register_module"})


def _self_dict(node) -> bool:
    """`self.__dict__`."""
    return node.__class__ is ast.Attribute and node.attr == "__dict__" and is_self(node.value)


def class_attributes(class_node: ast.ClassDef, of_kinds) -> Tuple[str, ...]:
    """Every attribute name the class gives its instances: names bound in its body (constants,
    annotations, methods, nested classes), stores into `self.<attr>` and registrations
    (`self.register_buffer("mean", t)`) in its methods; "*" when a method may give any name
    (`setattr(self, name, v)`, `self.register_buffer(name, t)` under a run-time name, `self.__dict__`,
    `vars(self)`). `state_flags` reads it: an attribute no class of the MRO gives is missing."""
    out = set()
    for stmt in class_node.body:
        if isinstance(stmt, FUNCS + (ast.ClassDef,)):
            out.add(stmt.name)
        for t in stmt.targets if stmt.__class__ is ast.Assign else [stmt.target] if stmt.__class__ in (
                ast.AnnAssign, ast.AugAssign) else []:
            for e in t.elts if t.__class__ in (ast.Tuple, ast.List) else [t]:
                if e.__class__ is ast.Name:
                    out.add(e.id)
    for method in class_node.body:
        if not isinstance(method, FUNCS):
            continue
        out.update(attr for attr, _ in _stores(method, of_kinds))
        for sub in of_kinds(method, _STORES):
            if sub.__class__ is not ast.Call:  # `self.__dict__[k] = v`
                targets = sub.targets if sub.__class__ is ast.Assign else [sub.target]
                if any(t.__class__ is ast.Subscript and _self_dict(t.value) for t in targets):
                    out.add("*")
                continue
            func = sub.func
            if func.__class__ is ast.Name and func.id == "vars" and sub.args and is_self(sub.args[0]):
                out.add("*")
            elif func.__class__ is ast.Attribute and _self_dict(func.value):  # `self.__dict__.update(kw)`
                out.add("*")
            elif func.__class__ is ast.Attribute and func.attr in REGISTERS and is_self(func.value) and sub.args:
                name = sub.args[0]
                out.add(name.value if name.__class__ is ast.Constant and isinstance(name.value, str) else "*")
    return tuple(sorted(out))


def foreign_stores(fn, of_kinds) -> List[str]:
    """Attributes a function stores on objects other than `self` (`module.flag = True`,
    `setattr(module, "flag", on)`): state that code outside the class sets, never decided."""
    out: List[str] = []
    for sub in of_kinds(fn, _STORES):
        kind = sub.__class__
        if kind is ast.Call:
            func = sub.func
            if func.__class__ is ast.Name and func.id == "setattr" and len(sub.args) == 3 and \
                    not is_self(sub.args[0]) and sub.args[1].__class__ is ast.Constant and isinstance(sub.args[1].value, str):
                out.append(sub.args[1].value)
            continue
        for t in sub.targets if kind is ast.Assign else [sub.target]:
            for e in t.elts if t.__class__ in (ast.Tuple, ast.List) else [t]:
                if e.__class__ is ast.Attribute and not is_self(e.value):
                    out.append(e.attr)
    return out


def returned_attr(fn) -> str:
    """The `self` attribute a getter returns plainly: `return self._flag`, `return bool(self.items)`,
    `return len(self.items) > 0`; "" otherwise."""
    body = [s for s in fn.body if not (s.__class__ is ast.Expr and s.value.__class__ is ast.Constant)]
    if len(body) != 1 or body[0].__class__ is not ast.Return or body[0].value is None:
        return ""
    value = body[0].value
    if value.__class__ is ast.Compare and len(value.ops) == 1 and value.ops[0].__class__ is ast.Gt and \
            value.comparators[0].__class__ is ast.Constant and value.comparators[0].value == 0:
        value = value.left
    if value.__class__ is ast.Call and value.func.__class__ is ast.Name and value.func.id in ("bool", "len") and \
            len(value.args) == 1 and not value.keywords:
        value = value.args[0]
    return value.attr if value.__class__ is ast.Attribute and is_self(value.value) else ""


def state_guards(test, branch: bool, owner: str) -> List[Tuple[str, bool]]:
    """The state guards of one branch of `if test:` in a method of class `owner` (dotted): a bare
    `self.<attr>` (not `self.training`), under `not`, and the operands of an `and` taken (an `or`
    not taken)."""
    if test.__class__ is ast.UnaryOp and test.op.__class__ is ast.Not:
        return state_guards(test.operand, not branch, owner)
    if test.__class__ is ast.BoolOp:
        if (test.op.__class__ is ast.And) == branch:
            return [g for v in test.values for g in state_guards(v, branch, owner)]
        return []
    if test.__class__ is ast.Attribute and is_self(test.value) and test.attr != "training":
        return [(f"{STATE}{owner}:{test.attr}", branch)]
    return []
