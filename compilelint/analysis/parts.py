"""Which classes a value of a function holds: the parts a module is built from.

A value names the classes it constructs (`Block(dim)`, `nn.ModuleList([Block() for _ in ...])`, a
module-level registry of classes indexed, a local list filled in a loop). Where the answer lies in
other code, it names a reference instead, which the project pass (`part_flow`) resolves over the
whole project:
- `@arg:p`: what the project's constructor calls pass for parameter `p` of this `__init__`
  (`self.heads = heads`, `self.block = block_cls(dim)`, `nn.ModuleList(layers)`);
- `@ret:pkg.mod.build_head`: what that function returns (`self.head = build_head(cfg)`);
- `@self:make_layer`: what the method of that name returns on this class (`self._make_layer(...)`);
- `@cls:layer_classes`: the classes of a class-level dict of classes read by `cls.` or `self.`
  (`for kind, layer_cls in cls.layer_classes.items()`), in the MRO of the instance the method runs for.
- `@selfarg:add:layer`: what the object's own calls of its method `add` pass for parameter `layer`
  (`def add(self, layer): self.add_module(name, layer(...))`, called `self.add(Block)`).
The same reading gives what a function returns (`returns`) and what each constructor call of a
function passes (`constructor_calls`: `Detector(backbone, heads)`, `super().__init__(rpn, heads)`,
and a method's calls of the object's own methods: `self.add(Block, dim)`).
"""
from __future__ import annotations

import ast
import sys
from typing import Dict, List, Optional, Tuple

from compilelint.analysis import installs
from compilelint.analysis.astutil import is_class_name, is_self, is_super_init, parameter_defaults, parameter_names, walk
from compilelint.analysis.names import STDLIB

ARG, RETURNS, SELF_RETURNS, CLASS_ATTR, SELF_ARG = "@arg:", "@ret:", "@self:", "@cls:", "@selfarg:"
# The callee of `super().__init__(...)` in a constructor call record: the next `__init__` in the MRO.
SUPER = "super()"
# The callee of `self.<method>(...)` in a constructor call record: "self." + the method's name.
SELF_CALL = "self."
# torch's containers of modules and Python's of values: what they are built from are their members.
CONTAINERS = frozenset({
    "torch.nn.ModuleList", "torch.nn.Sequential", "torch.nn.ModuleDict",
    "builtins.list", "builtins.tuple", "builtins.dict", "builtins.reversed",
})
# Functions of these never build a project's parts.
NOT_BUILDERS = ("builtins.", "torch.", "numpy.", "math.", "functools.", "itertools.", "copy.")


def is_ref(part: str) -> bool:
    return part.startswith("@")


class Parts:
    """The parts of the values of one function (`method`; None at module level). `init`: the
    function is a class's `__init__`, whose parameters its callers fill (`@arg:` references).
    Long because it is one reading of a function's values: what they construct, reference, name
    as classes and return share the locals it works out once."""

    def __init__(self, facts, method, init: bool = False, methods=None, method_params: bool = False, owner: str = ""):
        self.facts = facts
        self.method = method
        self.owner = owner  # the dotted class of a method: what `self` is when handed on
        self.init = init
        # The parameters a part may be passed in: not those a number or a string fills. A method's
        # (`method_params`) are filled by the object's own calls of it (`@selfarg:`).
        self.params = _part_params(method.args) if init or method_params else frozenset()
        self.arg_ref = ARG if init else f"{SELF_ARG}{method.name}:" if method_params else ""
        self.methods = methods  # the class's own methods (`self.m(...)` calls one of them), None: any
        # What the function's locals hold, worked out when first asked (most functions never
        # construct a module: a forward's locals are not worth a walk)
        self._class_names: Optional[Dict[str, List[str]]] = None  # names holding a class
        self._local_modules: Optional[Dict[str, List[str]]] = None  # locals holding modules
        self._local_refs: Optional[Dict[str, List[str]]] = None  # locals holding references
        self._holders: Optional[set] = None  # names a local holding modules may be (`holders`)

    # ----- classes constructed ------------------------------------------------------------------
    def constructed_classes(self, value: ast.AST) -> List[str]:
        """Classes constructed anywhere in an expression (ModuleList([...]), make_layers(lambda: X()))."""
        found = []
        for sub in walk(value):
            kind = sub.__class__
            if kind is ast.Call:
                registry = self.registry_of(sub.func)
                if registry:
                    found.extend(registry)  # ATTENTION_CLASSES[cfg.impl](...)
                    continue
                if sub.func.__class__ is ast.Name and sub.func.id in self.class_names():
                    found.extend(self.class_names()[sub.func.id])  # layer_type(...), layer_type=LlamaDecoderLayer
                    continue
                name = self.facts.imports.resolve(sub.func)
                if name and is_class_name(name):
                    found.append(name)
            elif kind is ast.Name and sub.ctx.__class__ is ast.Load and sub.id in self.holders():
                found.extend(self.local_modules().get(sub.id, ()))  # nn.Sequential(*stages)
        return found

    def class_names(self) -> Dict[str, List[str]]:
        if self._class_names is None:
            self._class_names = {}  # a name read while the names are worked out holds no class yet
            self._class_names = self._class_valued_names(self.method) if self.method is not None else {}
        return self._class_names

    def local_modules(self) -> Dict[str, List[str]]:
        if self._local_modules is None:
            self._local_modules = self._find_local_modules(self.method) if self.method is not None else {}
        return self._local_modules

    def holders(self) -> set:
        """The names `_find_local_modules` may find holding modules: those assigned alone, filled
        (`xs.append(...)`) or added to (`xs += ...`). Any other name read (`nn`, a parameter)
        holds none, and spares working out the locals (a look at every assignment's value)."""
        if self._holders is None:
            names = set()
            for sub in self.facts.of_kinds(self.method, _ASSIGNS_AND_FILLS) if self.method is not None else ():
                kind = sub.__class__
                if kind is ast.Assign:
                    if len(sub.targets) == 1 and sub.targets[0].__class__ is ast.Name:
                        names.add(sub.targets[0].id)
                elif kind is ast.Call:
                    if sub.func.__class__ is ast.Attribute and sub.func.value.__class__ is ast.Name:
                        names.add(sub.func.value.id)
                elif sub.target.__class__ is ast.Name:
                    names.add(sub.target.id)
            self._holders = names
        return self._holders

    def _find_local_modules(self, method) -> Dict[str, List[str]]:
        """Locals holding modules a method builds before storing them on self: a module
        (`stage = Stage(...); self.stages.append(stage)`) or a list filled with modules
        (`stages.append(Stage(...))`, `stages += [Stage(...)]`, then `nn.Sequential(*stages)`):
        local name → the classes it holds."""
        made: Dict[str, List[str]] = {}  # local name → classes constructed into it
        out: Dict[str, List[str]] = {}
        assigns, fills = [], []  # one look at the method's nodes (asked of most methods)
        for sub in self.facts.of_kinds(method, _ASSIGNS_AND_FILLS):
            kind = sub.__class__
            if kind is ast.Assign:
                if len(sub.targets) == 1 and sub.targets[0].__class__ is ast.Name:
                    assigns.append(sub)
            elif kind is ast.Call:
                if sub.func.__class__ is ast.Attribute and sub.args and \
                        sub.func.attr in ("append", "extend", "insert") and sub.func.value.__class__ is ast.Name:
                    fills.append(sub)
            elif kind is ast.AugAssign and sub.op.__class__ is ast.Add and sub.target.__class__ is ast.Name:
                fills.append(sub)
        self._local_modules = {}
        for sub in assigns:
            found = self.constructed_classes(sub.value)
            if found:
                made.setdefault(sub.targets[0].id, []).extend(found)
        self._local_modules = made  # `blocks += [b]` after `b = Block(...)`
        for sub in fills:
            if sub.__class__ is ast.Call:
                members = out.setdefault(sub.func.value.id, [])
                members.extend(c for c in self.constructed_classes(sub.args[-1]) if c not in members)
            else:
                members = out.setdefault(sub.target.id, [])  # stages += [Stage(...)]
                members.extend(c for c in self.constructed_classes(sub.value) if c not in members)
        for name, classes in made.items():  # `stage = Stage(...); self.stages.append(stage)`
            out.setdefault(name, []).extend(c for c in classes if c not in out[name])
        return {k: v for k, v in out.items() if v}

    def registry_of(self, node) -> List[str]:
        """The classes of a module-level dict of classes indexed here (`CLASSES[cfg.impl]`, `.get(...)`),
        or the reference to a class-level one (`cls.CLASSES[kind]`, `type(self).CLASSES.get(kind)`)."""
        registries = self.facts.class_registries
        if isinstance(node, ast.Subscript):
            held = node.value
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "get":
            held = node.func.value
        else:
            return []
        return registries.get(held.id, []) if isinstance(held, ast.Name) else class_level_registry(held)

    def _class_valued_names(self, method) -> Dict[str, List[str]]:
        """Names in a method that hold a class: `layer_type: type = LlamaDecoderLayer` parameters,
        `cls = A if cond else B`, the name a loop over a dict of classes binds, what a project
        function returns (`returned_by_call`), and a name copied from one of those."""
        out: Dict[str, List[str]] = {}
        for arg, default in parameter_defaults(method.args):
            found = self.classes_of(default)
            if found:
                out[arg.arg] = found
        copies = []
        for sub in self.facts.of_kinds(method, _ASSIGN_OR_LOOP):
            if sub.__class__ is ast.For:
                name, found = iterated_classes(self.facts, sub)
                if found:
                    out.setdefault(name, []).extend(found)
            elif len(sub.targets) == 1 and isinstance(sub.targets[0], ast.Name):
                found = self.classes_of(sub.value) or returned_by_call(self.facts, sub.value)
                if found:
                    out.setdefault(sub.targets[0].id, []).extend(found)
                elif sub.value.__class__ is ast.Name:
                    copies.append((sub.targets[0].id, sub.value.id))
        for name, source in copies:  # after every loop and assignment: the walk is breadth first
            for c in out.get(source, ()):
                if c not in out.setdefault(name, []):
                    out[name].append(c)
        return out

    def classes_of(self, expr) -> List[str]:
        """The classes an expression names: `A`, `mod.A`, `A if c else B`, `REGISTRY[key]`."""
        if isinstance(expr, ast.IfExp):
            return self.classes_of(expr.body) + self.classes_of(expr.orelse)
        if isinstance(expr, ast.Subscript):
            return list(self.registry_of(expr))
        if isinstance(expr, (ast.Name, ast.Attribute)):
            name = self.facts.imports.resolve(expr)
            if name and is_class_name(name):
                return [name]
            if expr.__class__ is ast.Name and self.method is not None:
                return list(self.class_names().get(expr.id, ()))  # `return layer_cls` after `layer_cls = Linear`
            return []
        return []

    # ----- references to other code -------------------------------------------------------------
    def refs(self, value: ast.AST) -> List[str]:
        """The references of a value, read where a value flows: the value itself, both sides of
        `a if c else b` and `a or b`, the members of a list, tuple, dict, comprehension or torch
        container, a local holding them."""
        out: List[str] = []
        self._refs(value, out)
        return out

    def _refs(self, node: ast.AST, out: List[str]):
        kind = node.__class__
        if kind is ast.IfExp:
            self._refs(node.body, out)
            self._refs(node.orelse, out)
        elif kind is ast.BoolOp:
            for v in node.values:
                self._refs(v, out)
        elif kind is ast.List or kind is ast.Tuple or kind is ast.Set:
            for v in node.elts:
                self._refs(v, out)
        elif kind is ast.Starred:
            self._refs(node.value, out)
        elif kind is ast.ListComp or kind is ast.GeneratorExp or kind is ast.SetComp:
            self._refs(node.elt, out)
        elif kind is ast.DictComp:
            self._refs(node.value, out)
        elif kind is ast.Dict:
            for v in node.values:
                self._refs(v, out)
        elif kind is ast.Name and node.ctx.__class__ is ast.Load:
            if node.id in self.params:
                _add(out, self.arg_ref + node.id)  # self.heads = heads
            for r in self.local_refs().get(node.id, ()):
                _add(out, r)
        elif kind is ast.Call:
            self._call_refs(node, out)

    def _call_refs(self, call: ast.Call, out: List[str]):
        func = call.func
        if isinstance(func, ast.Name) and func.id in self.params:
            _add(out, self.arg_ref + func.id)  # a class passed in, built here: `self.block = block_cls(dim)`
            return
        if self.registry_of(func) or isinstance(func, ast.Name) and func.id in self.class_names():
            return  # a class of a registry or a local name: constructed_classes has it
        if isinstance(func, ast.Attribute) and is_self(func.value):
            if self.methods is None or func.attr in self.methods:
                _add(out, SELF_RETURNS + func.attr)  # self._make_layer(...), not self.norm(x)
            return
        name = self.facts.imports.resolve(func)
        if not name:
            return
        if name in CONTAINERS:
            for a in call.args:
                self._refs(a, out)
            for k in call.keywords:
                self._refs(k.value, out)
        elif not is_class_name(name) and not name.startswith(NOT_BUILDERS) and \
                (name.split(".", 1)[0] not in STDLIB or name.split(".", 1)[0] == self.facts.top_package):
            _add(out, RETURNS + name)  # build_head(cfg)

    def local_refs(self) -> Dict[str, List[str]]:
        """Locals holding references: `layers = make_layers(cfg)`, `heads.append(self._head(i))`."""
        if self._local_refs is None:
            self._local_refs = {}  # a local read while its own value is worked out holds nothing yet
            out: Dict[str, List[str]] = {}
            for sub in self.facts.of_kinds(self.method, _ASSIGNS_AND_FILLS) if self.method is not None else ():
                kind = sub.__class__
                if kind is ast.Assign and len(sub.targets) == 1 and sub.targets[0].__class__ is ast.Name:
                    name, found = sub.targets[0].id, self.refs(sub.value)
                elif kind is ast.Call and sub.func.__class__ is ast.Attribute and sub.args and \
                        sub.func.attr in ("append", "extend", "insert") and sub.func.value.__class__ is ast.Name:
                    name, found = sub.func.value.id, self.refs(sub.args[-1])
                elif kind is ast.AugAssign and sub.op.__class__ is ast.Add and sub.target.__class__ is ast.Name:
                    name, found = sub.target.id, self.refs(sub.value)
                else:
                    continue
                for r in found:
                    _add(out.setdefault(name, []), r)
            self._local_refs = out
        return self._local_refs

    # ----- what crosses to the project pass -----------------------------------------------------
    def value_parts(self, value: ast.AST) -> List[str]:
        """The classes a value constructs, then its references."""
        out: List[str] = []
        for part in self.constructed_classes(value) + self.refs(value):
            _add(out, part)
        return out

    def argument_parts(self, value: ast.AST) -> List[str]:
        """What an argument hands on: the parts it builds, or the class it names (`block=Block`)."""
        out = self.value_parts(value)
        for c in self.classes_of(value):
            _add(out, c)
        if self.owner and is_self(value):
            _add(out, self.owner)  # `Strategy(self, ...)`: the object hands itself to a part it builds
        if value.__class__ is ast.Name:
            for c in self.class_names().get(value.id, ()):
                _add(out, c)  # a parameter defaulting to a class: `self.add(block_cls)`, `block_cls=Block`
        return out

    def returns(self) -> Tuple[Tuple[str, ...], ...]:
        """The parts of each value the function returns, one tuple per `return` (a builder:
        `return Head(cfg)`; `return HEADS[name](cfg)`), less the returns under an `if` that a false
        module-level constant rules out (`if _USE_EXPORT and is_exportable(): return
        ExportConv(...)` with `_USE_EXPORT = False`)."""
        out: List[Tuple[str, ...]] = []
        for ret in _live_returns(self.method.body, self.facts.false_constants):
            if ret.value is not None and ret.value.__class__ is not ast.Constant:
                parts = tuple(self.argument_parts(ret.value))
                if parts and parts not in out:
                    out.append(parts)
        return tuple(out)

    def constructor_calls(self) -> List[Tuple[str, Tuple[Tuple[object, Tuple[str, ...]], ...]]]:
        """(class called, or SUPER for `super().__init__`, ((positional index or keyword, the
        parts it passes), ...)) for every call of a class here that passes parts."""
        out = []
        for sub in self.facts.of_kinds(self.method, _CALL):
            if not (sub.args or sub.keywords):
                continue
            func = sub.func
            if self.init and is_super_init(func):
                callee = SUPER
            elif func.__class__ is ast.Attribute and is_self(func.value) and self.methods:
                callee = SELF_CALL + func.attr  # self.add(Block, dim): a method of the object itself
            else:
                leaf = func.id if func.__class__ is ast.Name else func.attr if func.__class__ is ast.Attribute else ""
                if not leaf[:1].isupper():
                    continue
                callee = self.facts.imports.resolve(func)
                if not callee or not is_class_name(callee) or callee.startswith(NOT_BUILDERS):
                    continue
            args: List[Tuple[object, Tuple[str, ...]]] = []
            for i, a in enumerate(sub.args):
                if a.__class__ is ast.Starred:
                    break  # the positions after it are unknown
                parts = self.argument_parts(a)
                if parts:
                    args.append((i, tuple(parts)))
            for k in sub.keywords:
                parts = self.argument_parts(k.value) if k.arg else ()
                if parts:
                    args.append((k.arg, tuple(parts)))
            if args:
                out.append((callee, tuple(args)))
        return out


# The kinds of nodes each look over a function's nodes reads (`FileFacts.of_kinds`).
_ASSIGN = frozenset((ast.Assign,))
_ASSIGN_OR_LOOP = frozenset((ast.Assign, ast.For))
_CALL = frozenset((ast.Call,))
_CALL_OR_RETURN = frozenset((ast.Call, ast.Return))
_ASSIGNS_AND_FILLS = frozenset((ast.Assign, ast.Call, ast.AugAssign))  # `x = ...`, `xs.append(...)`, `xs += ...`

# Annotations of parameters that hold no part.
SCALAR_ANNOTATIONS = frozenset({"int", "float", "bool", "str", "tuple", "Tuple", "complex"})


def iterated_classes(facts, loop) -> Tuple[Optional[str], List[str]]:
    """(the name bound to each class, the classes) of a loop over a dict of classes:
    `for kind, layer_cls in cls.CLASSES.items()`, `for layer_cls in self.CLASSES.values()`,
    `for layer_cls in CLASSES.values()` (module level); (None, []) otherwise."""
    it, target = loop.iter, loop.target
    if not (isinstance(it, ast.Call) and isinstance(it.func, ast.Attribute) and not it.args):
        return None, []
    if it.func.attr == "items" and isinstance(target, ast.Tuple) and len(target.elts) == 2:
        target = target.elts[1]
    elif it.func.attr != "values":
        return None, []
    if not isinstance(target, ast.Name):
        return None, []
    held = it.func.value
    if isinstance(held, ast.Name):
        return target.id, list(facts.class_registries.get(held.id, ()))
    if isinstance(held, ast.Attribute) and isinstance(held.value, ast.Name) and held.value.id in ("cls", "self"):
        return target.id, [CLASS_ATTR + held.attr]
    return None, []


def class_level_registry(held) -> List[str]:
    """`cls.CLASSES` / `type(self).CLASSES`: the reference to that class-level dict of classes."""
    owner = held.value if isinstance(held, ast.Attribute) else None
    if isinstance(owner, ast.Name) and owner.id == "cls" or is_call_to_type_of_self(owner):
        return [CLASS_ATTR + held.attr]
    return []


def is_call_to_type_of_self(node) -> bool:
    """`type(self)`."""
    return isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "type" and \
        len(node.args) == 1 and is_self(node.args[0])


def _part_params(args: ast.arguments) -> frozenset:
    """An `__init__`'s parameters after `self`, less those annotated as (or defaulting to) a
    number, a string, a bool or a tuple of them: `dim: int`, `eps=1e-6`, `kernel=(3, 3)`."""
    scalar = set()
    for arg, default in parameter_defaults(args):
        if default.__class__ is ast.Constant and default.value is not None or default.__class__ is ast.Tuple and \
                all(e.__class__ is ast.Constant for e in default.elts):
            scalar.add(arg.arg)
    for arg in args.posonlyargs + args.args + args.kwonlyargs:
        note = arg.annotation
        if note.__class__ is ast.Subscript:
            note = note.value
        if note.__class__ is ast.Name and note.id in SCALAR_ANNOTATIONS:
            scalar.add(arg.arg)
    return frozenset(a.arg for a in args.posonlyargs + args.args[1:] + args.kwonlyargs if a.arg not in scalar)


def _add(out: List[str], part: str):
    if part not in out:
        out.append(sys.intern(part))  # a name repeated in a file is pickled once


def record(facts, node, owner: str, info, summary, methods=None):
    """A function's return parts (`FunctionInfo.returns_parts`) and its constructor calls that pass
    parts (`FileSummary.constructions`). `owner`: the dotted class of a method, else ""; `methods`:
    its class's methods. A `forward` builds no parts (it runs every call), nor do the other dunders."""
    name = node.name
    if name == "forward" or name.startswith("__") and name.endswith("__") and name != "__init__":
        return
    parts = Parts(facts, node, init=bool(owner) and name == "__init__", methods=methods, owner=owner)
    if name != "__init__" and _may_build(facts, node):
        info.returns_parts = parts.returns()
    for callee, args in parts.constructor_calls():
        summary.constructions.append((sys.intern(callee), sys.intern(owner), args))
    if owner:  # what it installs elsewhere, and hands its own methods (`self.m` of any class of the MRO)
        anywhere = Parts(facts, node, init=parts.init)
        info.installs = installs.installs(facts, node, anywhere)
        info.self_calls = installs.self_calls(facts, node, anywhere)


def _may_build(facts, node) -> bool:
    """Can the function return a part? It calls a class (`Block(...)`, `REGISTRY[name](...)`), a
    parameter (`block_fn(...)`), or returns what a function it calls returns (`return _create(...)`).
    Most functions (tensor code) do none of these, and their returns are not worth a look."""
    params = parameter_names(node.args)
    for sub in facts.of_kinds(node, _CALL_OR_RETURN):
        kind = sub.__class__
        if kind is ast.Call:
            func = sub.func
            leaf = func.id if func.__class__ is ast.Name else func.attr if func.__class__ is ast.Attribute else ""
            if func.__class__ is ast.Subscript or leaf[:1].isupper() or func.__class__ is ast.Name and leaf in params:
                return True
        elif kind is ast.Return and sub.value.__class__ is ast.Name and _assigns_class(facts, node, sub.value.id):
            return True  # `layer_cls = Linear ... return layer_cls`
        elif kind is ast.Return and sub.value.__class__ is ast.Call:
            func = sub.value.func
            if func.__class__ is ast.Name and func.id not in params:
                return True
            name = facts.imports.resolve(func) if func.__class__ is ast.Attribute else None
            if name and not name.startswith(NOT_BUILDERS):  # `return layers.make(cfg)`, not `x.view(...)`
                return True
    return False


def returned_by_call(facts, value) -> List[str]:
    """What a call of a project function returns, as a reference (`layer_cls =
    pick_layer_class(target)`, then `layer_cls(...)` builds what it returns)."""
    if value.__class__ is ast.Call and value.func.__class__ is ast.Name:
        name = facts.imports.resolve(value.func)
        if name and not is_class_name(name) and not name.startswith(NOT_BUILDERS) and \
                name.split(".", 1)[0] == facts.top_package:
            return [RETURNS + name]
    return []


def _assigns_class(facts, node, name: str) -> bool:
    """Does the function bind `name` to a name with a capital leaf (`layer_cls = Linear`)?"""
    for sub in facts.of_kinds(node, _ASSIGN):
        if len(sub.targets) == 1 and sub.targets[0].__class__ is ast.Name and sub.targets[0].id == name:
            v = sub.value
            leaf = v.id if v.__class__ is ast.Name else v.attr if v.__class__ is ast.Attribute else ""
            if leaf[:1].isupper():
                return True
    return False


def false_constants(top, text: str) -> frozenset:
    """Module-level names bound once to a false constant (`_USE_EXPORT_CONV = False`), in a file
    with no `global` statement (no function rebinds them). `top`: the module's statements."""
    if "global" in text:
        return frozenset()
    bound: Dict[str, int] = {}
    false = set()
    for stmt in top:
        if stmt.__class__ is ast.Assign:
            for t in stmt.targets:
                if t.__class__ is ast.Name:
                    bound[t.id] = bound.get(t.id, 0) + 1
                    if stmt.value.__class__ is ast.Constant and not stmt.value.value:
                        false.add(t.id)
    return frozenset(n for n in false if bound[n] == 1)


def _never(test, false) -> bool:
    """Is this test false whatever runs: a false constant, or an `and` with one in it?"""
    if test.__class__ is ast.Name:
        return test.id in false
    if test.__class__ is ast.Constant:
        return not test.value
    if test.__class__ is ast.BoolOp and test.op.__class__ is ast.And:
        return any(_never(v, false) for v in test.values)
    return False


def _live_returns(stmts, false):
    """The `return` statements of a body (nested functions and classes left out) that can run."""
    for stmt in stmts:
        kind = stmt.__class__
        if kind is ast.Return:
            yield stmt
        elif kind is ast.If:
            if not _never(stmt.test, false):
                yield from _live_returns(stmt.body, false)
            yield from _live_returns(stmt.orelse, false)
        elif kind in (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda):
            continue
        else:
            for field in ("body", "orelse", "finalbody", "handlers"):
                inner = getattr(stmt, field, None)
                if inner:
                    yield from _live_returns(inner, false)
            for case in getattr(stmt, "cases", ()):
                yield from _live_returns(case.body, false)
