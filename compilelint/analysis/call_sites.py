"""Parameter kinds of a function from its calls in the same file.

A helper like VITS's `_unconstrained_rational_quadratic_spline(inputs, widths, ...)` has untyped
parameters, so on its own nothing in it is known to be a tensor, and `inputs[inside_mask]` says
nothing. When every call of it in its file passes a tensor for a parameter (`spline(second_half,
...)` from a `forward`), the parameter holds a tensor. The other way round, an annotation every
call contradicts is not trusted: Moonshine's `_get_feat_extract_output_lengths(self, input_lengths:
torch.LongTensor)` is only ever called with `attention_mask.shape[-1]`, an int, so `int(...)` of it
is not a tensor's `int()`. A method's callers are the `self.name(...)` calls of its class, of its
in-file bases and of its in-file subclasses; a `forward`'s also the `self.attr(...)` calls of the
in-file classes whose attribute holds the module, when that attribute is only ever called there
(ProphetNet's `self.position_embeddings((batch_size, sequence_length), device=...)` passes sizes,
not a tensor); only methods a call can contradict are typed so (`typed_by_callers`). Bindings are
computed once per function and shared with the walk; a helper called only from helpers is
resolved through them (cycles stop).

The other way round, a call of a function or method of the file returns what the callee's body
returns, with its parameters bound to the kinds the call passes (`returns`): `should_stop(self, x):
return (x.abs() > 10).all()` called with a tensor returns a tensor, so `if self.should_stop(x):`
branches on data; `sample(self, x): return {"perm": torch.randperm(n)}` returns a dict of tensors.
"""
from __future__ import annotations

import ast
from collections import Counter
from typing import Dict, List, Optional, Tuple

from compilelint.analysis import tensors as T
from compilelint.analysis.astutil import FUNCS, is_self, walk
from compilelint.analysis.bindings import Bindings, function_bindings
from compilelint.analysis.facts import CALLS, ClassFacts, FileFacts


class CallSites:
    """Bindings of the functions of one file, with parameters typed by their callers in the file."""

    def __init__(self, facts: FileFacts):
        self.facts = facts
        self._bindings: Dict[int, Bindings] = {}
        # name → (calling function, its class's name or None, the call), for module functions and methods
        self._calls: Optional[Dict[str, List[Tuple[ast.AST, Optional[str], ast.Call]]]] = None
        self._method_calls: Dict[str, List[Tuple[ast.AST, Optional[str], ast.Call]]] = {}
        self._methods: set = set()  # ids of the methods of the file's top-level classes
        self._method_nodes: Dict[Tuple[str, str], ast.AST] = {}  # (class, method name) → its node
        self._module_functions: Dict[str, ast.AST] = {}  # name → the module function's node
        self._parents: Dict[str, List[str]] = {}  # class → its bases defined in the file
        self._busy: set = set()
        self._self_reads: Dict[str, Counter] = {}  # class → how often its methods read each `self.attr`
        self._returns: Dict[tuple, Optional[str]] = {}  # (callee, kinds passed) → what it returns
        self._returns_assumed: Dict[tuple, frozenset] = {}  # … and the assumed returns that rests on
        self._returning: set = set()  # callees whose returns are being worked out (a cycle: unknown)
        # id(function) → (is it a generator, its own returns' values): asked at each of its calls
        self._bodies: Dict[int, Tuple[bool, List[Optional[ast.AST]]]] = {}

    def forget(self) -> None:
        """Drop the bindings kept (they hold this object: what a call of the file returns)."""
        self._bindings.clear()

    def bindings(self, node, cls: Optional[ClassFacts], decorators: List[str]) -> Bindings:
        key = id(node)
        if key not in self._bindings:
            self._busy.add(key)
            sites = self._parameter_kinds(node, cls)
            self._bindings[key] = function_bindings(self.facts, node, cls, decorators, sites,
                                                    self._returns_for(cls))
            self._busy.discard(key)
        return self._bindings[key]

    def _returns_for(self, cls: Optional[ClassFacts]):
        return lambda call, inference: self.returns(call, inference, cls)

    def returns(self, call: ast.Call, inference, cls: Optional[ClassFacts]) -> Optional[str]:
        """What `call` (a module function of the file by name, or `self.name(...)` from a method of
        `cls`) returns: the one kind every `return` of the callee gives (TENSOR, BOOL, SEQ or DICT),
        its parameters bound to the kinds this call passes; None when unknown."""
        found = self._callee(call, cls)
        if found is None:
            return None
        fn, owner, bound = found
        values = self._body(fn)[1]
        if not values or any(v is None for v in values):
            return None  # a bare `return` (or falling off the end of a branch) gives None
        positional = [a.arg for a in fn.args.posonlyargs + fn.args.args][1 if bound else 0:]
        if any(isinstance(a, ast.Starred) for a in call.args) or any(k.arg is None for k in call.keywords) \
                or len(call.args) > len(positional):
            return None
        passed = list(zip(positional, call.args)) + [(k.arg, k.value) for k in call.keywords]
        sites = {p: k for p, k in ((p, inference.certain_kind(v)) for p, v in passed) if k in (T.TENSOR, T.BOOL, T.SCALAR)}
        key = (id(fn), tuple(sorted(sites.items())))
        if key not in self._returns:
            if id(fn) in self._returning:
                return None  # recursion: decide nothing
            self._returning.add(id(fn))
            try:
                b = function_bindings(self.facts, fn, owner, [], sites, self._returns_for(owner))
                kinds = {b.inference.kind(v) for v in values}
                assumed = frozenset().union(*(b.inference.assumed.get(id(v), ()) for v in values))
            finally:
                self._returning.discard(id(fn))
            kind = kinds.pop() if len(kinds) == 1 else (T.TENSOR if kinds == {T.TENSOR, T.BOOL} else None)
            self._returns[key] = kind if kind in (T.TENSOR, T.BOOL, T.SEQ, T.DICT) else None
            self._returns_assumed[key] = assumed if self._returns[key] is not None else frozenset()
        inference.assume(self._returns_assumed[key])  # what the callee's returns rest on, its caller's too
        return self._returns[key]

    def _callee(self, call: ast.Call, cls: Optional[ClassFacts]):
        """(function node, the ClassFacts of its class or None, whether the receiver fills its first
        parameter) for a call of a plain function of the file: no decorator but staticmethod or
        classmethod, not a generator; a method no in-file subclass of `cls` overrides."""
        self._callers()
        func = call.func
        if isinstance(func, ast.Name):
            fn, owner = self._module_functions.get(func.id), None
        elif cls is not None and isinstance(func, ast.Attribute) and is_self(func.value):
            mine = cls.info.qualname
            if any(c != mine and mine in self._ancestors(c) and (c, func.attr) in self._method_nodes
                   for c in self._parents):
                return None  # a subclass may run another body
            order, fn, owner, seen = [mine], None, None, set()
            while order and fn is None:  # the class, then its in-file bases, depth first
                name = order.pop(0)
                if name in seen:
                    continue  # a file that redefines classes can name them in a cycle
                seen.add(name)
                fn = self._method_nodes.get((name, func.attr))
                owner = self.facts.classes.get(name)
                order = self._parents.get(name, []) + order
        else:
            return None
        if fn is None or isinstance(fn, ast.AsyncFunctionDef) or self._body(fn)[0]:
            return None
        decorators = {d.id for d in fn.decorator_list if isinstance(d, ast.Name)}
        if len(decorators) != len(fn.decorator_list) or decorators - {"staticmethod", "classmethod"}:
            return None
        return fn, owner, owner is not None and "staticmethod" not in decorators

    def _body(self, fn) -> Tuple[bool, List[Optional[ast.AST]]]:
        """(is `fn` a generator, `_own_returns(fn)`): two walks of its body, once per function."""
        found = self._bodies.get(id(fn))
        if found is None:
            found = self._bodies[id(fn)] = (self.facts.is_generator(fn), _own_returns(fn))
        return found

    def _callers(self):
        """(module function name → its calls by name, method name → its `self.name(...)` calls),
        each call as (calling function, its class, the call)."""
        if self._calls is None:
            self._calls, self._method_calls = {}, {}
            functions = []
            for stmt in self.facts.top:
                if isinstance(stmt, FUNCS):
                    functions.append((stmt, None))
                elif isinstance(stmt, ast.ClassDef) and stmt.name in self.facts.classes:
                    functions += [(m, stmt.name) for m in stmt.body if isinstance(m, FUNCS)]
                    # `class Layer(Layer):` derives from the name's earlier binding (an import), not itself
                    self._parents[stmt.name] = [b.id for b in stmt.bases if isinstance(b, ast.Name)
                                                and b.id in self.facts.classes and b.id != stmt.name]
            self._methods = {id(fn) for fn, cname in functions if cname is not None}
            self._method_nodes = {(cname, fn.name): fn for fn, cname in functions if cname is not None}
            self._module_functions = {fn.name: fn for fn, cname in functions if cname is None}
            defs = self.facts.module_defs
            for fn, cname in functions:
                for sub in self.facts.of_kinds(fn, CALLS):  # in walk order, like every node's list
                    if isinstance(sub.func, ast.Name) and sub.func.id in defs:
                        self._calls.setdefault(sub.func.id, []).append((fn, cname, sub))
                    elif cname is not None and isinstance(sub.func, ast.Attribute) and is_self(sub.func.value):
                        self._method_calls.setdefault(sub.func.attr, []).append((fn, cname, sub))
        return self._calls, self._method_calls

    def _ancestors(self, cname: str) -> set:
        """The class and its in-file bases, and theirs."""
        out, todo = set(), [cname]
        while todo:
            name = todo.pop()
            if name not in out:
                out.add(name)
                todo += self._parents.get(name, [])
        return out

    def _method_callers(self, node, cls: ClassFacts):
        """The `self.name(...)` calls that may call this method: from its class, the classes it
        derives from (in the file), and the in-file classes derived from it."""
        mine = cls.info.qualname
        bases = self._ancestors(mine)
        out = [(fn, cname, call) for fn, cname, call in self._callers()[1].get(node.name, [])
               if cname in bases or mine in self._ancestors(cname)]
        if node.name == "forward":
            out += self._submodule_callers(cls)
        return out

    def _submodule_callers(self, cls: ClassFacts):
        """The `self.attr(...)` calls of the file's classes whose `attr` holds this module. None is
        taken when such an attribute is also used otherwise (`self.layers[i](x)`, `for layer in
        self.layers`): calls the file does not show as calls would be missed."""
        dotted_name = f"{self.facts.module}.{cls.info.qualname}"
        calls = self._callers()[1]
        out = []
        for cname, holder in self.facts.classes.items():
            for attr, built in holder.info.submodules.items():
                if dotted_name not in built:
                    continue
                mine = [(fn, c, call) for fn, c, call in calls.get(attr, []) if c == cname]
                if self._uses(cname, attr) != len(mine):
                    return []
                out += mine
        return out

    def _uses(self, cname: str, attr: str) -> int:
        """How often the methods of a class read `self.attr` outside `__init__`, other than for
        another of its attributes (`self.position_embeddings._forward(ids)` does not call forward)."""
        if cname not in self._self_reads:  # once per class: asked for each forward it holds
            node = next((s for s in self.facts.top if isinstance(s, ast.ClassDef) and s.name == cname), None)
            reads: Counter = Counter()
            for m in node.body if node is not None else ():
                if not isinstance(m, FUNCS) or m.name == "__init__":
                    continue
                attrs = [sub for sub in self.facts.nodes(m) if sub.__class__ is ast.Attribute]
                inner = {id(sub.value) for sub in attrs if sub.attr != "forward"}
                reads.update(sub.attr for sub in attrs if is_self(sub.value) and sub.ctx.__class__ is ast.Load
                             and id(sub) not in inner)
            self._self_reads[cname] = reads
        return self._self_reads[cname][attr]

    def _parameter_kinds(self, node, cls: Optional[ClassFacts]) -> Dict[str, str]:
        """Parameter → TENSOR/BOOL when every call in the file that passes it passes one (module
        functions), SCALAR when every one passes a Python value."""
        positional = [a.arg for a in node.args.posonlyargs + node.args.args]
        if cls is None:
            if not any(node is stmt for stmt in self.facts.top):
                return {}  # nested helpers: their calls are the enclosing function's business
            calls = self._callers()[0].get(node.name, [])
        else:
            if not typed_by_callers(node, method=True):
                return {}
            self._callers()  # knows the methods
            if id(node) not in self._methods:
                return {}  # nested functions: their calls are the enclosing method's business
            calls = self._method_callers(node, cls)
            if "staticmethod" not in self._decorators(node):
                positional = positional[1:]  # self.name(a, b) binds the parameters after self/cls
        names = set(positional) | {a.arg for a in node.args.kwonlyargs}
        seen: Dict[str, set] = {}
        for caller, cname, call in calls:
            if id(caller) in self._busy or caller is node:
                return {}  # a cycle: decide nothing
            if any(isinstance(a, ast.Starred) for a in call.args) or any(k.arg is None for k in call.keywords):
                return {}
            caller_cls = self.facts.classes[cname] if cname is not None else None
            inference = self.bindings(caller, caller_cls, self._decorators(caller)).inference
            passed = list(zip(positional, call.args)) + [(k.arg, k.value) for k in call.keywords if k.arg in names]
            for param, value in passed:
                seen.setdefault(param, set()).add(inference.certain_kind(value))
        out = {}
        for param, kinds in seen.items():
            if kinds == {T.SCALAR}:
                out[param] = T.SCALAR
            elif kinds and kinds <= set(T.TENSORISH) and cls is None:
                out[param] = T.BOOL if kinds == {T.BOOL} else T.TENSOR
        return out

    def _decorators(self, fn) -> List[str]:
        return [d for d in (self.facts.decorator_name(x) for x in fn.decorator_list) if d]


def _own_returns(fn) -> List[Optional[ast.AST]]:
    """The values of the function's own `return`s (None for a bare one), nested functions and
    classes left out; a body that can end without one adds None. A `return` is a statement: only
    the statements are walked (the blocks of `if`, loops, `with`, `try` and its handlers, `match`
    and its cases), never the expressions, most of a function's nodes."""
    out: List[Optional[ast.AST]] = []
    todo = list(fn.body)
    while todo:
        node = todo.pop()
        if isinstance(node, ast.Return):
            out.append(node.value)
        elif not isinstance(node, FUNCS + (ast.ClassDef,)):
            for block in ("body", "orelse", "finalbody", "handlers", "cases"):
                todo.extend(getattr(node, block, ()))
    if out and not _ends(fn.body):
        out.append(None)
    return out


def _ends(body: List[ast.stmt]) -> bool:
    """Does every path through these statements end in a `return` or a `raise`?"""
    if not body:
        return False
    last = body[-1]
    if isinstance(last, (ast.Return, ast.Raise)):
        return True
    if isinstance(last, ast.If):
        return _ends(last.body) and _ends(last.orelse)
    if isinstance(last, (ast.With, ast.AsyncWith)):
        return _ends(last.body)
    if isinstance(last, ast.Try):
        return (_ends(last.body) or _ends(last.orelse)) and all(_ends(h.body) for h in last.handlers)
    return False


def typed_by_callers(node, method: bool) -> bool:
    """Can the calls of this function in its file change how its parameters are typed (and so its
    walk: the language server walks it again when they change)? Module functions: yes. Methods:
    only those with a parameter a call can contradict, one annotated as a tensor or a tensor by
    default (`forward`, a decorated method); never the dunders, whose calls `self.name(...)` does
    not show."""
    if not method:
        return True
    name, args = node.name, node.args
    if name.startswith("__") and name.endswith("__"):
        return False
    params = args.posonlyargs + args.args + args.kwonlyargs
    return len(params) > 1 and (name == "forward" or bool(node.decorator_list) or
                                any(_names_a_tensor(a.annotation) for a in params[1:]))


def _names_a_tensor(annotation) -> bool:
    """Does the annotation name a tensor class (`torch.Tensor`, `LongTensor | None`)? Read from the
    text, not through the imports, so the language server can ask it of a method alone."""
    if annotation is None:
        return False
    for sub in walk(annotation):
        if isinstance(sub, ast.Name) and sub.id.endswith("Tensor") or \
                isinstance(sub, ast.Attribute) and sub.attr.endswith("Tensor") or \
                isinstance(sub, ast.Constant) and isinstance(sub.value, str) and "Tensor" in sub.value:
            return True
    return False
