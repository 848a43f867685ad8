"""The call graph and the compile roots a file writes: what the project pass (`regions`) follows.

For each call the walker meets: the edges the function makes (`self.layer(x)`, `helper(x)`,
`self.blocks[i].forward`, functions passed as arguments), the roots it creates
(`torch.compile(model)`, `model.compile()`, `torch._dynamo.optimize(...)(fn)`) and the functions
it registers as opaque custom ops.
"""
from __future__ import annotations

import ast
import weakref
from typing import TYPE_CHECKING, Dict, List, Optional, Tuple

from compilelint.analysis import libraries
from compilelint.analysis import tensors as T
from compilelint.analysis.astutil import is_own_class, is_self, keyword, keyword_str, parameter_defaults, parameter_names, walk
from compilelint.analysis.config_flags import own_flags
from compilelint.analysis.facts import CUDAGRAPH_MODES, ITEMS, FileFacts
from compilelint.analysis.held_eval import calls_held_submodule
from compilelint.analysis.names import COMPILE_FUNCS, DYNAMO_OPTIMIZE, STDLIB, dotted
from compilelint.analysis.call_binding import DEREF
from compilelint.analysis.none_paths import result_used_as_object
from compilelint.analysis.passed_args import forwarded_params, needed_params, passed_shape, raised_after, same_args
from compilelint.summary import EVAL_HELD, Call, FileSummary, Root

# function → its `_bound_table` (per function, asked at every call of a local name)
_BOUND: "weakref.WeakKeyDictionary[ast.AST, Dict[str, Optional[List[str]]]]" = weakref.WeakKeyDictionary()
# Stands for the call's `passed_shape` in its direct targets until one is known to have an edge
_ARGS = object()
# Marks a submodule handed to a function of the file with the shape that function calls it with
HANDED = "handed"
# The nodes that bind names `_bound_table` reads (the rest of a function's nodes it skipped one by one)
_BINDING_KINDS = frozenset((ast.Assign, ast.AugAssign, ast.AnnAssign, ast.NamedExpr, ast.For, ast.AsyncFor,
                            ast.comprehension, ast.With, ast.AsyncWith))

if TYPE_CHECKING:
    from compilelint.analysis.walker import Scope

# Builtins that look at what they are given without calling it: `isinstance(block, AttnBlock)` does
# not run `AttnBlock.__init__`, `len(self.layers)` and `enumerate(self.layers)` run no layer's forward
# (they count or iterate; `map`, `filter` and `sorted(key=...)` do call what they are handed).
NOT_CALLING = frozenset(f"builtins.{n}" for n in (
    "isinstance", "issubclass", "hasattr", "getattr", "setattr", "callable", "type", "id", "repr", "str",
    "len", "iter", "next", "list", "tuple", "set", "frozenset", "dict", "enumerate", "zip", "reversed",
    "sorted", "print", "bool", "sum", "min", "max", "any", "all", "hash", "vars", "dir", "format"))


class CallRecorder:
    """Writes edges into the current function's `FunctionInfo.calls` and roots into the summary."""

    def __init__(self, facts: FileFacts, summary: FileSummary):
        self.facts = facts
        self.summary = summary

    def record(self, node: ast.Call, scope: "Scope"):
        func = node.func
        name = scope.resolve(func)
        if name in COMPILE_FUNCS or name in DYNAMO_OPTIMIZE:
            self._compile_site(node, name, scope)
        if isinstance(func, ast.Call) and scope.resolve(func.func) in DYNAMO_OPTIMIZE and node.args:
            self._root_for(node.args[0], "torch._dynamo.optimize(...)(fn)", node, False, scope)
        self._record_opaque(node, name, scope)
        if isinstance(func, ast.Attribute) and func.attr == "compile" and not node.args and name not in COMPILE_FUNCS:
            cls = self._class_of_expr(func.value, scope)
            if cls:
                self.summary.roots.append(Root(cls, "forward", "model.compile()", node.lineno))
        if scope.info is None:
            return
        direct = list(self._call_targets(func, scope))
        default_needs: Tuple[str, ...] = ()
        if not direct and isinstance(func, ast.Name) and not (name and name.startswith("builtins.")):
            # (a builtin's name is no parameter or local here: those resolve to None)
            # `reduce_fn(x)` of a parameter defaulting to a function: that function runs whenever a
            # call gives no `reduce_fn` (the edge needs one call leaving it out: "-reduce_fn")
            default = self._function_default(func.id, scope)
            if default:
                direct, default_needs = [("name", default, "", func.id)], ("-" + func.id,)
            else:  # `fn = fast if small else slow; fn(x)`: a local bound only to functions runs one of them
                direct = [("name", f, "", func.id) for f in self._bound_functions(func.id, scope)]
        targets = [(kind, target, member, label, _ARGS) for kind, target, member, label in direct]
        parent = scope.stack[-2] if len(scope.stack) > 1 else None
        if isinstance(parent, ast.withitem) and parent.context_expr is node:
            # `with Flag(True):` runs the instance's `__enter__` and `__exit__` too (when it is a class)
            targets += [("method", target, hook, f"{label}.{hook}", None)
                        for kind, target, member, label in direct if kind == "name" for hook in ("__enter__", "__exit__")]
        targets += self._argument_targets(node, name, scope)
        # never a function of the checked project (`math.ceil(x)`): left out before the arguments are looked at
        targets = [t for t in targets if t[0] != "name" or not self._stdlib(t[1])]
        if not targets:
            return  # most calls (`x.view(...)`, `torch.cat(...)`): no edge, so nothing it would carry
        args = passed_shape(node, scope.node)  # the direct targets' (`_ARGS`), the others' None
        targets = [(kind, target, member, label, args if passed is _ARGS else passed)
                   for kind, target, member, label, passed in targets]
        guards = self._guards(node, scope)
        needs = needed_params(scope.exits + scope.conditions, scope.node, self.facts.nodes,
                              self.facts.none_tests) + default_needs
        own = own_flags(scope.exits + scope.conditions) if scope.cls is not None else ()
        # kept with unknown arguments too (`f(x, flag=True, **kw)`): its keywords are still known
        forwards = forwarded_params(node, scope.node, self.facts.nodes) + raised_after(node, scope.stack, scope.node) + \
            (((DEREF, DEREF),) if result_used_as_object(node, scope.stack) else ())
        tensors = _tensor_args(node, scope) if args is not None and direct else ()
        same = same_args(node) if args is not None and direct else ()
        for kind, target, member, label, passed in targets:
            given = tensors if passed is not None else ()
            alike, handed_on = (same if passed is not None else ()), forwards
            if isinstance(passed, tuple) and passed[:1] == (HANDED,):  # the helper's call: none of this one's
                passed, given, alike, handed_on = passed[1], (), (), ()
            key = (kind, target, member, guards, passed, needs, handed_on, given, alike, own)
            if key not in scope.seen_calls:  # one edge per callee and arguments is all reach needs
                scope.seen_calls.add(key)
                scope.info.calls.append(Call.of(kind, target, member, node.lineno, node.col_offset + 1, label, guards,
                                                passed, needs, handed_on, given, alike, own))

    def _argument_targets(self, node: ast.Call, name: Optional[str], scope: "Scope") -> list:
        """Functions and submodules passed as arguments are called too (checkpoint(self.block, x));
        a submodule with the arguments a function of this file calls it with (`handed_call_shape`)."""
        out = []
        for i, arg in enumerate(node.args if name not in NOT_CALLING else ()):
            if isinstance(arg, ast.Attribute) and is_self(arg.value):
                shape = handed_call_shape(self.facts, name, i)
                out.append(("self", arg.attr, "forward", f"self.{arg.attr}", shape and (HANDED, shape)))
            elif isinstance(arg, ast.Name) and arg.id in self.facts.module_defs and arg.id not in scope.locals:
                out.append(("name", f"{self.facts.module}.{arg.id}", "", arg.id, None))
        return out

    def _guards(self, node: ast.Call, scope: "Scope") -> tuple:
        """The guards around the call, and `EVAL_HELD` on a call of a submodule the function put in
        eval mode above it (`held_eval`)."""
        guards = tuple(scope.guards)
        if calls_held_submodule(node, scope.node, self.facts.nodes):
            guards += ((EVAL_HELD, True),)
        return guards

    def _stdlib(self, target: str) -> bool:
        """Is the dotted name in the standard library (and the checked project not one of its names)?"""
        top = target.split(".", 1)[0]
        return top in STDLIB and top != self.facts.top_package

    def record_read(self, node: ast.Attribute, scope: "Scope"):
        """`self.attr` read without being called: a property's getter runs there (the project pass
        follows it when `attr` is a property of the receiver's class). So does `dist.attr` of a
        name whose class is known (`dist: Normal` annotated, or `dist = Normal(...)` built here) and
        `Normal(...).attr`: a "read" edge, followed only when `attr` is a property of that class."""
        if not isinstance(node.ctx, ast.Load):
            return
        value = node.value
        if is_self(value):
            kind, target, member = "property", node.attr, ""
        elif value.__class__ is ast.Name and (value.id in scope.typed or value.id in scope.constructed):
            kind, target, member = "read", scope.typed.get(value.id) or scope.constructed[value.id], node.attr
        elif value.__class__ is ast.Call and self._class_of_expr(value, scope):  # `Box(x).area`
            kind, target, member = "read", self._class_of_expr(value, scope), node.attr
        else:
            return
        parent = scope.stack[-2] if len(scope.stack) > 1 else None
        if isinstance(parent, ast.Call) and parent.func is node:
            return  # a method call: `record` made its edge
        guards = tuple(scope.guards)
        key = (kind, target, member, guards)
        if key not in scope.seen_calls:
            scope.seen_calls.add(key)
            scope.info.calls.append(Call.of(kind, target, member, node.lineno, node.col_offset + 1,
                                            f"{dotted(node) or node.attr}", guards))

    def _record_opaque(self, node: ast.Call, name: Optional[str], scope: "Scope"):
        """Functions registered as custom ops are opaque to Dynamo: reach stops there."""
        op = None
        registrar = libraries.CUSTOM_OP_REGISTRARS.get(name.rsplit(".", 1)[-1]) if name else None
        if registrar is not None:
            op_keyword, position = registrar
            op = keyword(node, op_keyword) or (node.args[position] if len(node.args) > position else None)
        elif isinstance(node.func, ast.Call) and (scope.resolve(node.func.func) or "").endswith(("library.custom_op", "allow_in_graph")) and node.args:
            op = node.args[0]
        elif name in ("torch._dynamo.allow_in_graph", "torch.compiler.allow_in_graph") and node.args:
            op = node.args[0]
        if op is not None:
            target = scope.resolve(op)
            if target:
                self.summary.opaque.append(target)

    def _call_targets(self, func, scope: "Scope"):
        if is_self(func):  # `self(x)`: Module.__call__ runs the receiver's forward
            return [("self", "__call__", "", "self")]
        if isinstance(func, ast.Name):
            if func.id in scope.module_locals:
                attr = scope.module_locals[func.id]
                return [("attr", attr, "forward", _member(attr))]
            name = scope.resolve(func)
            if name and not name.startswith("builtins."):
                return [("name", name, "", func.id)]
            return []
        if isinstance(func, ast.Subscript):
            base = func.value
            if is_self(base):  # self[f"expert_{i}"](x) in an nn.ModuleDict subclass
                return [("attr", ITEMS, "forward", "self[...]")]
            if isinstance(base, ast.Attribute) and is_self(base.value):
                return [("attr", base.attr, "forward", f"self.{base.attr}[i]")]
            return []
        if not isinstance(func, ast.Attribute):
            return []
        value = func.value
        if is_self(value):
            return [("self", func.attr, "forward", f"self.{func.attr}")]
        if is_own_class(value, scope.node):  # `self.__class__.m()`, `type(self).m()`, `cls.m()`: the receiver's class's method
            return [("self", func.attr, "", f"{ast.unparse(value)}.{func.attr}")]
        if isinstance(value, ast.Call) and isinstance(value.func, ast.Name) and value.func.id == "super":
            return [("super", func.attr, "", f"super().{func.attr}")]
        if isinstance(value, ast.Attribute) and is_self(value.value):
            return [("attr", value.attr, func.attr, f"self.{value.attr}.{func.attr}")]
        if isinstance(value, ast.Subscript) and isinstance(value.value, ast.Attribute) and is_self(value.value.value):
            return [("attr", value.value.attr, func.attr, f"self.{value.value.attr}[i].{func.attr}")]
        chain = _self_chain(value)
        if chain:  # `self.model.strategy.kl()`: a method of a part of a part
            return [("chain", chain, func.attr, f"self.{chain}.{func.attr}")]
        if isinstance(value, ast.Name) and value.id in scope.module_locals:
            attr = scope.module_locals[value.id]
            return [("attr", attr, func.attr, f"{_member(attr)}.{func.attr}")]
        if isinstance(value, ast.Name) and value.id in scope.typed:  # config.get_text_config(...)
            return [("method", scope.typed[value.id], func.attr, f"{value.id}.{func.attr}")]
        if isinstance(value, ast.Name) and value.id in scope.constructed:  # `b = Box(x); b.peak()`
            return [("built", scope.constructed[value.id], func.attr, f"{value.id}.{func.attr}")]
        built = self._class_of_expr(value, scope) if isinstance(value, ast.Call) else None
        if built is not None:  # `Box(x).peak()`
            return [("built", built, func.attr, f"{dotted(value.func) or '...'}(...).{func.attr}")]
        name = scope.resolve(func)
        if name and not name.startswith(("builtins.", "torch.")):
            return [("name", name, "", dotted(func) or func.attr)]
        return []

    def _function_default(self, param: str, scope: "Scope") -> Optional[str]:
        """The function a parameter of the walked function defaults to (`reduce_fn: Callable =
        _reduce`), when the function never rebinds it: dotted, or None."""
        fn = scope.node
        if not isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)):
            return None
        default = next((d for a, d in parameter_defaults(fn.args) if a.arg == param), None)
        if not isinstance(default, (ast.Name, ast.Attribute)) or any(
                isinstance(sub, (ast.Assign, ast.AugAssign, ast.AnnAssign, ast.NamedExpr)) and
                any(isinstance(t, ast.Name) and t.id == param for t in ast.walk(sub))
                for sub in self.facts.nodes(fn)):
            return None
        if isinstance(default, ast.Name) and default.id in self.facts.module_defs:
            return f"{self.facts.module}.{default.id}"
        name = self.facts.resolve_plain(default)
        return name if name and not name.startswith(("builtins.", "torch.")) and \
            name.rpartition(".")[2].lstrip("_")[:1].islower() else None

    def _bound_functions(self, name: str, scope: "Scope") -> List[str]:
        """The functions a local of the walked function is bound to, when every binding of it is a
        plain `name = f`, `name = f if c else g` (or in branches) of module functions: dotted."""
        fn = scope.node
        if not isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)) or name in parameter_names(fn.args):
            return []
        table = _BOUND.get(fn)
        if table is None:  # once per function: asked at every call of a local name
            table = _BOUND[fn] = self._bound_table(fn)
        return table.get(name) or []

    def _bound_table(self, fn: ast.AST) -> Dict[str, Optional[List[str]]]:
        """Each name the function binds → the module functions its plain bindings name, or None
        when one binding is not such (unpacked, looped over, augmented, any other value)."""
        table: Dict[str, Optional[List[str]]] = {}
        for sub in self.facts.of_kinds(fn, _BINDING_KINDS):  # the answer does not depend on their order
            targets = sub.targets if isinstance(sub, ast.Assign) else [sub.target] if isinstance(
                sub, (ast.AugAssign, ast.AnnAssign, ast.NamedExpr, ast.For, ast.AsyncFor, ast.comprehension)) else \
                [item.optional_vars for item in sub.items] if isinstance(sub, (ast.With, ast.AsyncWith)) else []
            named = {n.id for t in targets if isinstance(t, ast.AST) for n in walk(t) if n.__class__ is ast.Name}
            if not named:
                continue
            plain = isinstance(sub, ast.Assign) and len(sub.targets) == 1 and isinstance(sub.targets[0], ast.Name)
            values = ([sub.value.body, sub.value.orelse] if isinstance(sub.value, ast.IfExp) else [sub.value]) \
                if plain else []
            functions = [f"{self.facts.module}.{v.id}" for v in values if isinstance(v, ast.Name) and
                         v.id in self.facts.module_defs and v.id[:1].lower() == v.id[:1]]
            for n in named:
                if not plain or len(functions) != len(values):
                    table[n] = None
                elif table.get(n, []) is not None:
                    table[n] = sorted(set(table.get(n, [])) | set(functions))
        return table

    def _compile_site(self, node: ast.Call, name: str, scope: "Scope"):
        target = node.args[0] if node.args else keyword(node, "model")
        if target is None or name in DYNAMO_OPTIMIZE:
            return
        mode = keyword_str(node, "mode")
        self._root_for(target, "torch.compile(...)", node, mode in CUDAGRAPH_MODES, scope)

    def _root_for(self, target: ast.AST, via: str, site: ast.AST, cudagraph: bool, scope: "Scope"):
        # torch.no_grad()(model.forward), functools.partial(f, ...): look through the wrapper.
        while isinstance(target, ast.Call) and target.args and (isinstance(target.func, ast.Call) or scope.resolve(target.func) == "functools.partial"):
            target = target.args[0]
        row = site.lineno
        add = self.summary.roots.append
        module = self.facts.module
        if isinstance(target, ast.Attribute):
            owner = target.value
            if is_self(owner) and scope.cls is not None:
                if target.attr in scope.cls.info.methods:
                    add(Root(f"{module}.{scope.cls.info.qualname}", target.attr, via, row, cudagraph))
                else:
                    add(Root(f"{module}.{scope.cls.info.qualname}", None, via, row, cudagraph, self_attr_of=target.attr))
                return
            if isinstance(owner, ast.Attribute) and is_self(owner.value) and scope.cls is not None:
                add(Root(f"{module}.{scope.cls.info.qualname}", target.attr, via, row, cudagraph, self_attr_of=owner.attr))
                return
            cls = self._class_of_expr(owner, scope)
            if cls:
                add(Root(cls, target.attr, via, row, cudagraph))
                return
            name = scope.resolve(target)
            if name:
                add(Root(name, None, via, row, cudagraph))
            return
        cls = self._class_of_expr(target, scope)
        if cls:
            add(Root(cls, "forward", via, row, cudagraph))
            return
        if isinstance(target, ast.Name):
            name = scope.resolve(target)
            if name:
                add(Root(name, None, via, row, cudagraph))

    def _class_of_expr(self, node: ast.AST, scope: "Scope") -> Optional[str]:
        """`MyModel(...)` or a name bound to one in this scope or at module level."""
        if isinstance(node, ast.Call):
            name = scope.resolve(node.func)
            if name and name.rsplit(".", 1)[-1][:1].isupper() and not name.startswith(("builtins.", "torch.")):
                return name
            return None
        if isinstance(node, ast.Name):
            return scope.constructed.get(node.id) or self.facts.module_constructed().get(node.id)
        return None


def _self_chain(node, depth: int = 3) -> str:
    """"a.b" for `self.a.b` (two attributes or more, up to `depth`), else ""."""
    names = []
    while isinstance(node, ast.Attribute) and len(names) < depth:
        names.append(node.attr)
        node = node.value
    return ".".join(reversed(names)) if is_self(node) and len(names) > 1 else ""


def _member(attr: str) -> str:
    """How a reach path shows one member of a container: `self.layers[i]`, or `self[i]` for the
    object's own members (`for layer in self.values()`)."""
    return "self[i]" if attr == ITEMS else f"self.{attr}[i]"


def _tensor_args(node: ast.Call, scope: "Scope") -> Tuple[object, ...]:
    """The arguments of `node` its function knows to be tensors: positional indexes, keyword names."""
    kind = scope.inference.certain_kind  # an assumed return's tensor is not handed on as one
    out: List[object] = [i for i, a in enumerate(node.args) if kind(a) in T.TENSORISH]
    out += [k.arg for k in node.keywords if k.arg and kind(k.value) in T.TENSORISH]
    return tuple(out)


def handed_call_shape(facts: FileFacts, name: Optional[str], index: int) -> Optional[Tuple[int, Tuple[str, ...]]]:
    """(positional count, keyword names) a module function of this file calls its `index`-th
    positional parameter with, when calling it that one way is all the function does with it:
    `def log_prob(model, seq): return model(seq[:, :-1])` → (1, ()). None otherwise (the
    parameter read another way, rebound, called with `*`/`**` or two ways, or shadowed)."""
    prefix = facts.module + "."
    if not name or not name.startswith(prefix) or name[len(prefix):] not in facts.module_defs:
        return None
    fn = next((f for f in facts.top if isinstance(f, (ast.FunctionDef, ast.AsyncFunctionDef))
               and f.name == name[len(prefix):]), None)
    positional = fn.args.posonlyargs + fn.args.args if fn is not None else []
    if index >= len(positional):
        return None
    param = positional[index].arg
    loads, calls, shapes = 0, 0, set()
    for sub in ast.walk(fn):
        if sub is not fn and isinstance(sub, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)) and \
                param in parameter_names(sub.args):
            return None
        if isinstance(sub, ast.Name) and sub.id == param:
            if not isinstance(sub.ctx, ast.Load):
                return None
            loads += 1
        elif isinstance(sub, ast.Call) and isinstance(sub.func, ast.Name) and sub.func.id == param:
            if any(isinstance(a, ast.Starred) for a in sub.args) or any(k.arg is None for k in sub.keywords):
                return None
            shapes.add((len(sub.args), tuple(k.arg for k in sub.keywords)))
            calls += 1
    return shapes.pop() if len(shapes) == 1 and calls == loads else None
