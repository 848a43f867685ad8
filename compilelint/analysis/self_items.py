"""The arm of an `isinstance(item, Tensor)` test for items that are not tensors, over the items of a
list an object fills itself.

A registry of state kept under names chosen at run time (`setattr(self, name, [])`, then
`self.preds.append(preds)` in a method) is copied, reset or merged item by item:
`[v.clone() if isinstance(v, Tensor) else copy.deepcopy(v) for v in getattr(self, name)]`. Python
runs the `else` arm once per item that is not a tensor, and Dynamo, which decides the test from
the item's type while tracing, traces only the arm each item takes: when the object puts nothing
but tensors into its lists, the arm never runs and what breaks there is no claim
(bench/measure/snippets_self_items.out: a list of tensors is copied clean; one item that is a list
holding a tensor takes the arm and breaks).

The walker marks such an arm with the `NON_TENSOR_ITEM` guard: the test is `isinstance(x,
torch.Tensor)` (or a tuple of types with it) and `x` is the variable of a loop or comprehension over
`getattr(self, name)` with a computed name, directly or through a local bound only to such reads.
Each method records what it puts into the object's containers (`FunctionInfo.self_items`): the
argument of `.append` / `.insert`, the items of `.extend(...)` and of `+= [...]`, and the elements
of a list, tuple or set display stored on `self` (`self.xs = [a, b]`, `setattr(self, name, [a])`),
judged by tensor inference, or, for a local bound to a call of a function of another file
(`preds, target = check(preds, target)`), by that function's return annotation in the project
pass (`tensor_returns`). It records too the names it registers attributes by (`setattr(self, name,
default)` for its parameter `name`) and its calls naming attributes with constant strings
(`self.register("seen", [])`): the attributes a computed name reads are the ones the object
registers. A value stored whole under a computed name that is no display (`setattr(self, name,
default)`, `setattr(self, name, merged)`) is taken to be a tensor or one of the object's own lists
moved around, not new items. The project pass drops a finding under the guard when the root its
region names, and every other root of a class inheriting the finding's method, runs for a class
whose classes (its MRO, project classes) register names and put only tensors into the containers
so named (and into those named at run time); a region root of another class (the object is a part
of it) decides nothing.
"""
from __future__ import annotations

import ast
from typing import Optional, Tuple

from compilelint.analysis import tensors as T
from compilelint.analysis.astutil import is_self, parameter_names, self_attr, self_targets, walk

# The pseudo-predicate of the arm: (NON_TENSOR_ITEM, True) in a node's guards.
NON_TENSOR_ITEM = "non-tensor-item-of-self"
# The verdicts on what a function puts into its object's containers (`FunctionInfo.self_items`).
TENSORS, OTHER = "tensors", "other"
_COMPREHENSIONS = (ast.ListComp, ast.SetComp, ast.GeneratorExp, ast.DictComp)
_LOOPS = (ast.For, ast.AsyncFor)
_DISPLAYS = (ast.List, ast.Tuple, ast.Set)
_DISPLAY_KINDS = frozenset(_DISPLAYS)
# In `tensor_returns`: every item of the result is a tensor.
ANY_PART = -2
# Tensor methods whose result is a tensor (not a Python value, not a tuple of tensors).
_TENSOR_TO_TENSOR = (T.TENSOR_MEMBERS | {"to"}) - T.SCALAR_ATTRS - T.SCALAR_METHODS - T.SEQ_METHODS - T.SEQ_WITH_DIM


# ----- the arm ----------------------------------------------------------------------------------
def non_tensor_arm(test: ast.AST, branch: bool, stack, fn: Optional[ast.AST], resolve) -> bool:
    """`branch` of `test` runs only for an item that is not a tensor, of a value read from the
    object by a computed name."""
    if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
        return non_tensor_arm(test.operand, not branch, stack, fn, resolve)
    if branch or not (isinstance(test, ast.Call) and isinstance(test.func, ast.Name) and test.func.id == "isinstance"
                      and len(test.args) == 2 and isinstance(test.args[0], ast.Name)):
        return False
    types = test.args[1].elts if isinstance(test.args[1], ast.Tuple) else [test.args[1]]
    if not any(resolve(t) == "torch.Tensor" for t in types):
        return False
    name = test.args[0].id
    for node in reversed(stack):
        generators = node.generators if isinstance(node, _COMPREHENSIONS) else [node] if isinstance(node, _LOOPS) else []
        for g in generators:
            if isinstance(g.target, ast.Name) and g.target.id == name:
                return _read_by_computed_name(g.iter, fn)
    return False


def _computed_getattr(node: ast.AST) -> bool:
    """`getattr(self, name)` with a name that is not a constant."""
    return isinstance(node, ast.Call) and _self_container(node) == "" and not isinstance(node.args[1], ast.Constant)


def _read_by_computed_name(node: ast.AST, fn: Optional[ast.AST]) -> bool:
    """`getattr(self, name)`, or a local of `fn` that every binding of it sets to one."""
    if _computed_getattr(node):
        return True
    if not isinstance(node, ast.Name) or fn is None:
        return False
    if node.id in parameter_names(fn.args, starred=True):
        return False
    values = []
    for sub in walk(fn):
        if isinstance(sub, ast.Assign):
            if any(isinstance(t, ast.Name) and t.id == node.id for t in sub.targets):
                if len(sub.targets) != 1:
                    return False
                values.append(sub.value)
            elif any(isinstance(n, ast.Name) and n.id == node.id for t in sub.targets for n in ast.walk(t)):
                return False  # unpacked into it
        elif isinstance(sub, (ast.AugAssign, ast.AnnAssign, ast.NamedExpr, ast.comprehension) + _LOOPS) and \
                any(isinstance(n, ast.Name) and n.id == node.id for n in ast.walk(sub.target)):
            return False
        elif isinstance(sub, (ast.With, ast.AsyncWith)) and any(
                isinstance(n, ast.Name) and n.id == node.id for i in sub.items if i.optional_vars is not None
                for n in ast.walk(i.optional_vars)):
            return False
    return bool(values) and all(_computed_getattr(v) for v in values)


# ----- what a function puts, and the names it registers ----------------------------------------
def _self_container(node: ast.AST) -> Optional[str]:
    """`self.xs` → "xs"; `getattr(self, name)` → its constant name, or "" when computed; else None."""
    attr = self_attr(node)
    if attr is not None:
        return attr
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "getattr" and \
            len(node.args) >= 2 and is_self(node.args[0]):
        name = node.args[1]
        return name.value if isinstance(name, ast.Constant) and isinstance(name.value, str) else ""
    return None


def _constant_name(node: ast.AST) -> Optional[str]:
    return node.value if isinstance(node, ast.Constant) and isinstance(node.value, str) else None


def put_items(node: ast.AST) -> Optional[Tuple[str, list]]:
    """(container, items) that `node` (a call or an assignment) puts into one of the object's
    containers (container: its attribute, "" when named at run time), or None: `self.xs.append(t)`
    → ("xs", [t]); `self.xs.extend(v)` → v's items (a display's elements, else v itself: a
    tensor's rows are tensors); `self.xs += [a, b]` and a display stored on self → its elements."""
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
        container, method, args = _self_container(node.func.value), node.func.attr, node.args
        if container is None:
            return None
        if method == "append" and len(args) == 1:
            return container, [args[0]]
        if method == "insert" and len(args) == 2:
            return container, [args[1]]
        if method == "extend" and len(args) == 1:
            return container, _items_of(args[0])
        return None
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "setattr" and \
            len(node.args) == 3 and is_self(node.args[0]) and isinstance(node.args[2], _DISPLAYS):
        return _constant_name(node.args[1]) or "", list(node.args[2].elts)
    if isinstance(node, ast.AugAssign) and isinstance(node.op, ast.Add) and isinstance(node.value, _DISPLAYS):
        container = _self_container(node.target)  # `self.total += n` is arithmetic: only a display is items
        return (container, list(node.value.elts)) if container is not None else None
    if isinstance(node, (ast.Assign, ast.AnnAssign)) and isinstance(node.value, _DISPLAYS):
        targets = node.targets if isinstance(node, ast.Assign) else [node.target]
        for t in targets:
            for attr, value in self_targets(t, node.value):
                if isinstance(value, _DISPLAYS):
                    return attr, list(value.elts)
    return None


def _items_of(value: ast.AST) -> list:
    return list(value.elts) if isinstance(value, _DISPLAYS) else [value]


def registered_param(node: ast.AST, fn: Optional[ast.AST]) -> Optional[str]:
    """`setattr(self, name, value)` with `name` a parameter of `fn`: `fn` registers attributes by
    the names its callers give (the parameter)."""
    if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "setattr" and
            len(node.args) == 3 and is_self(node.args[0]) and isinstance(node.args[1], ast.Name) and fn is not None):
        return None
    return node.args[1].id if node.args[1].id in parameter_names(fn.args) else None


def named_call(node: ast.AST) -> Optional[Tuple[str, Tuple[Tuple[object, str], ...], list]]:
    """`self.m("preds", default=[])` → ("m", ((0, "preds"),), the elements of its display
    arguments): a call of a method of the object with constant strings, by position or keyword."""
    if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and is_self(node.func.value)):
        return None
    names = tuple((i, _constant_name(a)) for i, a in enumerate(node.args) if _constant_name(a)) + \
        tuple((k.arg, _constant_name(k.value)) for k in node.keywords if k.arg and _constant_name(k.value))
    if not names:
        return None
    values = [a for a in list(node.args) + [k.value for k in node.keywords] if isinstance(a, _DISPLAYS)]
    return node.func.attr, names, [e for v in values for e in v.elts]


def verdicts(items: list, is_tensor, fn: Optional[ast.AST], resolve) -> Tuple[str, ...]:
    """Per item: "tensors" (tensor inference says so), a reference `@<function>#<part>` when it is
    what a call of a function of another file returns (`a, b = helper(x)`: part 1 of its result;
    the project pass reads the function's return annotation), else "other"."""
    out = []
    for item in items:
        said = TENSORS if is_tensor(item) else _returned_by(item, fn, resolve) or OTHER
        if said not in out:
            out.append(said)
    return tuple(out)


def _returned_by(item: ast.AST, fn: Optional[ast.AST], resolve) -> Optional[str]:
    """`@pkg.helper#1` when `item` is a local whose one binding in `fn` is part 1 of `helper(...)`'s
    result (`#-1`: the whole result), or a tensor method's result on one (`preds.to(dtype)`)."""
    while isinstance(item, ast.Call) and isinstance(item.func, ast.Attribute) and item.func.attr in _TENSOR_TO_TENSOR:
        item = item.func.value  # `preds.to(dtype)`: a tensor when `preds` is one
    index = None
    if isinstance(item, ast.Subscript) and isinstance(item.slice, ast.Constant) and type(item.slice.value) is int \
            and item.slice.value >= 0:
        item, index = item.value, item.slice.value  # `state[0]` of `state = helper(x)`: part 0
    if not isinstance(item, ast.Name) or fn is None:
        return None
    found = []
    for sub in walk(fn):
        if isinstance(sub, ast.Assign) and len(sub.targets) == 1:
            target = sub.targets[0]
            if isinstance(target, ast.Name) and target.id == item.id:
                found.append((sub.value, -1))
            elif isinstance(target, ast.Tuple):
                found += [(sub.value, i) for i, e in enumerate(target.elts) if isinstance(e, ast.Name) and e.id == item.id]
        elif isinstance(sub, (ast.AugAssign, ast.AnnAssign, ast.NamedExpr, ast.comprehension) + _LOOPS) and \
                any(isinstance(n, ast.Name) and n.id == item.id for n in ast.walk(sub.target)):
            return None
    if len(found) != 1 or not isinstance(found[0][0], ast.Call) or (index is not None and found[0][1] != -1):
        return None
    name = resolve(found[0][0].func)
    return f"@{name}#{found[0][1] if index is None else index}" if name else None


def tensor_returns(fn: ast.AST, resolve, of_kinds) -> Tuple[int, ...]:
    """The parts of `fn`'s result its return annotation says are tensors: -1 the whole result
    (`-> Tensor`), i the i-th item of a tuple (`-> tuple[Tensor, int]`: (0,)), ANY_PART every item
    (`-> list[Tensor]`, `-> Union[Tensor, tuple[Tensor, Tensor]]`: an item of either is a tensor).
    `of_kinds`: `FileFacts.of_kinds`, the function's nodes of some classes (walked once per function)."""
    ann = getattr(fn, "returns", None)
    if ann is None:
        return (-1,) if _returns_own_tensors(fn, of_kinds) else ()
    kind = T.annotation_kind(ann, resolve)
    if kind in T.TENSORISH:
        return (-1,)
    is_tuple = isinstance(ann, ast.Subscript) and (resolve(ann.value) or "") in ("builtins.tuple", "typing.Tuple", "tuple")
    if kind == T.SEQ and not is_tuple:
        return (ANY_PART,)
    if is_tuple:
        items = ann.slice.elts if isinstance(ann.slice, ast.Tuple) else [ann.slice]
        if not any(isinstance(i, ast.Constant) and i.value is Ellipsis for i in items):
            return tuple(i for i, e in enumerate(items) if T.annotation_kind(e, resolve) in T.TENSORISH)
    return ()


# nn.Module's own tables of tensors: what `register_buffer` / `register_parameter` fill.
_TENSOR_TABLES = ("_buffers", "_parameters")


_RETURNS = frozenset((ast.Return,))


def _returns_own_tensors(fn: ast.AST, of_kinds) -> bool:
    """Does every `return` of the method give an item of its module's own buffers or parameters
    (`return self._buffers[key]`: a container's `__getitem__`)?"""
    returns = [n.value for n in of_kinds(fn, _RETURNS)]
    return bool(returns) and all(
        isinstance(v, ast.Subscript) and isinstance(v.value, ast.Attribute) and v.value.attr in _TENSOR_TABLES
        and isinstance(v.value.value, ast.Name) and v.value.value.id == "self" for v in returns)


def merge(pairs: Tuple[Tuple[str, str], ...], key: str, said: Tuple[str, ...]) -> Tuple[Tuple[str, str], ...]:
    """(container, verdict) pairs with `said` for `key` added."""
    return pairs + tuple((key, v) for v in said if (key, v) not in pairs)


def _is_tensor_verdict(project, said: str) -> bool:
    """"tensors", or a reference to a part the function's return annotation says is a tensor."""
    if said == TENSORS or said == "":
        return True
    if not said.startswith("@"):
        return False
    name, _, part = said[1:].rpartition("#")
    found = project.functions.get(project.canonical(name))
    parts = found[1].tensor_returns if found is not None else ()
    return int(part) in parts or (int(part) >= 0 and ANY_PART in parts)


def note(node: ast.AST, info, fn: Optional[ast.AST], is_tensor, resolve) -> None:
    """What `node` puts into the object's containers, the names it registers attributes by and its
    calls naming some, into `info` (the walked function's `FunctionInfo`)."""
    if info is None:
        return
    # Most nodes asked about say nothing: a call of a plain name but `setattr` (`f(x)`), and an
    # assignment of anything but a list, tuple or set display
    kind = node.__class__
    if kind is ast.Call:
        if node.func.__class__ is ast.Name and node.func.id != "setattr":
            return
    elif node.value.__class__ not in _DISPLAY_KINDS:
        return
    put = put_items(node)
    if put is not None:
        info.self_items = merge(info.self_items, put[0], verdicts(put[1], is_tensor, fn, resolve))
    if node.__class__ is ast.Call:
        param = registered_param(node, fn)
        if param is not None and param not in info.registers:
            info.registers += (param,)
        named = named_call(node)
        if named is not None:
            info.named_calls += ((named[0], named[1], verdicts(named[2], is_tensor, fn, resolve)),)


def grown_every_call(fn: ast.AST) -> Tuple[str, ...]:
    """The object's containers `fn` grows on every run of its body, by attribute name: a statement
    `self.xs.append(v)` (`.extend`, `.insert`, `self.xs += [v]`) not under an `if`, a `while`, an
    `except` or a nested function (a `for` or `with` body counts: it runs). A growth under a
    branch depends on the object's options (`if self.per_sample: self.xs.append(v)`)."""
    out: list = []
    todo = list(fn.body)
    while todo:
        stmt = todo.pop(0)
        node = stmt.value if isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call) and \
            isinstance(stmt.value.func, ast.Attribute) else stmt if isinstance(stmt, ast.AugAssign) else None
        put = put_items(node) if node is not None else None
        if put is not None and put[0] and put[0] not in out:
            out.append(put[0])
        if isinstance(stmt, (ast.For, ast.AsyncFor, ast.With, ast.AsyncWith)):
            todo.extend(stmt.body)
        elif isinstance(stmt, ast.Try):
            todo.extend(stmt.body)
    return tuple(out)


# ----- the project pass's decision --------------------------------------------------------------
def only_tensor_items(project, roots, fid: str, region_root: str) -> bool:
    """The root the function's region names (`region_root`) and every other root that runs for a
    class inheriting `fid`'s method run for classes whose computed-name attributes hold only tensor
    items: the arm for other items never runs. A region root of another class (the object is a part
    of it, of a class unknown here) decides nothing."""
    classes = _root_classes(project, roots, fid, region_root)
    return bool(classes) and all(_tensor_items(project, cls) for cls in classes)


def _root_classes(project, roots, fid: str, region_root: str) -> set:
    """The classes inheriting `fid`'s method that the roots run for; empty when the region's own
    root runs for another class (the object is a part of it, of a class unknown here)."""
    defining = project.defining_class(fid) if fid in project.functions else None
    if defining is None or region_root not in project.functions:
        return set()
    classes = set()
    for root in roots:
        cls = root[4] or (project.defining_class(root[0]) if root[0] in project.functions else None)
        if cls is not None and defining in project.mro(cls):
            classes.add(cls)
        elif root[0] == region_root:
            return set()
    return classes


def _methods(project, cls: str, every: bool = False) -> dict:
    """Method name → (its function id, its function info), the nearest class of `cls`'s MRO first;
    `every`: keyed by function id, the methods of every class of the MRO (an overridden
    `__init__` that calls `super().__init__()` runs its base's too)."""
    methods = {}
    for c in project.mro(cls):
        entry = project.classes.get(c)
        for m in entry[1].methods if entry else ():
            found = project.functions.get(f"{c}.{m}")
            if found is not None:
                methods.setdefault(f"{c}.{m}" if every else m, (f"{c}.{m}", found[1]))
    return methods


def _registered(methods: dict, callers: Optional[dict] = None) -> Optional[dict]:
    """{name the object registers an attribute by: the verdicts of the display arguments of the
    call naming it}, "" (names given at run time) included; None when it registers nothing by name.
    `callers`: the methods whose calls name them (default: `methods`)."""
    registrars = {m: (info.registers[0], info.params) for m, (_, info) in methods.items() if info.registers}
    if not registrars:
        return None  # nothing registered by name: what a computed name reads is not known here
    names = {"": ()}
    for _, info in (callers or methods).values():
        for m, passed, said in info.named_calls:
            if m not in registrars:
                continue
            param, params = registrars[m]
            position = params.index(param) - 1 if param in params else -1
            for where, name in passed:
                if where == param or where == position:
                    names[name] = names.get(name, ()) + tuple(said)
    return names


def _tensor_items(project, cls: str) -> bool:
    """The attributes an instance of `cls` registers by name, and the containers it names at run
    time, get only tensor items from its classes' methods (and it registers some)."""
    methods = _methods(project, cls)
    names = _registered(methods)
    if names is None or not all(_is_tensor_verdict(project, v) for said in names.values() for v in said):
        return False
    return all(_is_tensor_verdict(project, said) for _, info in methods.values()
               for container, said in info.self_items if container in names)


def grows_registered_lists(project, roots, fid: str, region_root: str, reached) -> bool:
    """Every root that runs `fid` for a class inheriting its method (the region's own root among
    them) runs for a class whose compiled code grows a list it registers by name
    (`self.add("seen", [])`, then `self.seen.append(x)` in a reached method): such a frame fails
    the list's length guard on every call, and Dynamo names one failing guard per recompile."""
    classes = _root_classes(project, roots, fid, region_root)
    return bool(classes) and all(_grows_registered(project, cls, reached) for cls in classes)


def _grows_registered(project, cls: str, reached) -> bool:
    every = _methods(project, cls, every=True)
    names = _registered(_methods(project, cls), every)
    return names is not None and any(
        container in names for method_id, info in every.values() if method_id in reached
        for container in info.grows)
