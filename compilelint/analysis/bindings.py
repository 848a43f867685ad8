"""What each local name of a function holds: the bindings tensor inference reads.

Parameters (annotated, or untyped in a compiled `forward`: tensors unless used like something
else), then every assignment in source order, so that `x = x * 2` reads the earlier `x`. Also the
names that hold submodules (`for layer in self.layers`) and constructed classes, which the reach
pass follows.
"""
from __future__ import annotations

import ast
import re
from dataclasses import dataclass, field
from typing import Dict, List, Optional, Set, Tuple

from compilelint.analysis import tensors as T
from compilelint.analysis.astutil import FUNCS, end, is_class_name, is_self, names_in_target, walk
from compilelint.analysis.facts import ITEMS, ClassFacts, FileFacts
from compilelint.analysis.types import annotation_class
from compilelint.analysis.names import AUTOGRAD_FUNCTIONS, COMPILE_FUNCS

# Untyped parameters of compiled functions are tensors by default, except names that say otherwise:
# `device`, `dtype`, and sizes and counts (`block_size`, `num_groups`, `seq_len`, `head_dim`, `top_k`:
# how many of the best to keep, an int in sampling and quantizer code alike).
SCALAR_PARAM = re.compile(r"^(device|dtype|(num|n)_[a-z]+|[a-z]+_(size|len|dim)|top_?k)$")


@dataclass
class Bindings:
    """What a function's names hold, as `function_bindings` computes it."""

    inference: T.TensorInference
    locals: Set[str] = field(default_factory=set)  # every name bound in the function
    locals_only: Set[str] = field(default_factory=set)  # bound here without a `global` statement
    module_locals: Dict[str, str] = field(default_factory=dict)  # local name → self attribute holding submodules
    constructed: Dict[str, str] = field(default_factory=dict)  # local name → class constructed into it
    # parameter → the project class its annotation names (`config: PreTrainedConfig | None`), never rebound
    typed: Dict[str, str] = field(default_factory=dict)


def module_call_kind(facts: FileFacts, cls: Optional[ClassFacts], key: str) -> Optional[str]:
    """What `self.sub(x)` returns: a tensor for nn layers and in-file modules annotated `-> Tensor`."""
    if cls is None or not key.startswith("self."):
        return None
    classes = cls.info.submodules.get(key[5:], [])
    if not classes:
        return None
    kinds = set()
    for name in classes:
        if name.startswith("torch.nn."):
            leaf = name.rsplit(".", 1)[-1]
            kinds.add(None if leaf in T.NN_NON_TENSOR_MODULES or leaf in ("Sequential",) else T.TENSOR)
        elif name.startswith(facts.module + ".") and name[len(facts.module) + 1:] in facts.classes:
            kinds.add(facts.classes[name[len(facts.module) + 1:]].forward_returns)
        else:
            kinds.add(None)
    return kinds.pop() if len(kinds) == 1 else None


def function_bindings(facts: FileFacts, node, cls: Optional[ClassFacts], decorators: List[str],
                      site_kinds: Optional[Dict[str, str]] = None, call_returns=None) -> Bindings:
    """Tensor inference over a function's bindings: its parameters and locals,
    name → [((row, col), kind)] in source order, and the isinstance-narrowed ranges.
    `site_kinds`: parameter → kind every call of the function passes (`call_sites`); a Python value
    passed for a parameter annotated as a tensor makes it unknown. `call_returns`: what a call of
    a function of the file returns (`TensorInference.call_returns`).
    Function-local imports are added to the file's import table (they rebind names for the walk).
    Long because the bindings of one function are gathered in one pass over its nodes, in order."""
    resolve = facts.resolve_plain
    out = Bindings(inference=None)
    # the nodes any pass below reads, in walk order (names, constants and keywords, most nodes, are not)
    nodes = facts.of_kinds(node, _READ_NODES)  # kept: a callee's returns bind it again per argument kinds
    global_names, non_tensor_names = _usage(nodes)
    # a module's forward takes tensors; an autograd Function's takes a context and whatever its
    # `apply` is given (numbers and functions too: `Op.apply(x, self.nu, fn)`)
    tensor_by_default = (cls is not None and node.name == "forward" and
                         not any(b in AUTOGRAD_FUNCTIONS for b in cls.info.bases)) or any(
        d.split("#")[0] in COMPILE_FUNCS for d in decorators) or (
        cls is None and node.name in facts.compiled_names)  # f = torch.compile(f), torch.compile(f)(x)
    params = _parameters(node.args)
    kinds = _parameter_kinds(node.args, params, tensor_by_default, non_tensor_names, resolve, out)
    for name, kind in (site_kinds or {}).items():
        if kind == T.SCALAR:
            if kinds.get(name) == {T.TENSOR}:  # every caller passes a Python value: annotation or default is wrong
                kinds[name] = {None}
        elif kinds.get(name) in ({None}, {T.NONE}):  # untyped (or defaulting to None): what callers pass
            kinds[name] = {kind}
    assignments = _assignments(nodes, node, kinds, resolve, out)
    for _, target, _, _ in assignments:
        for name in names_in_target(target):
            out.locals.add(name)
            if name not in global_names:
                out.locals_only.add(name)
    # Function-local imports rebind names (`import torch.nn.functional as F` inside a function).
    for sub in nodes:
        if isinstance(sub, (ast.Import, ast.ImportFrom)):
            facts.imports.add_import(sub)
            for alias in sub.names:
                out.locals.discard((alias.asname or alias.name).split(".")[0])

    blocks = branch_blocks(node, nodes)
    env: Dict[str, list] = {}
    for name, ks in kinds.items():
        ks = ks - {T.NONE}
        env[name] = [((0, 0), ks.pop() if len(ks) == 1 else None)]
    inference = T.TensorInference(resolve, env, (cls.attr_kind if cls else (lambda a: None)),
                                  facts.global_kind, lambda key: module_call_kind(facts, cls, key), call_returns,
                                  cls.attr_class if cls else None)
    inference.assume_returns = True  # other files' functions: their return annotations decide later
    inference.module = facts.module
    # In source order, so each right-hand side sees the bindings made before it.
    for pos, target, value, how in sorted(assignments, key=lambda a: (getattr(a[2], "lineno", a[0][0]), a[0])):
        bound = bind(target, value, how, inference)
        assumed = bound_assumptions(target, value, inference) if inference.assumed else {}
        for name, kind in bound:
            if kind == T.NONE and env.get(name):
                continue  # `x = None` first, a tensor later: keep what we know
            env.setdefault(name, []).append((pos, kind))
            if assumed.get(name):
                inference.binding_assumes[(name, pos)] = assumed[name]
            if blocks.get(id(target)):
                inference.branches[(name, pos)] = blocks[id(target)]
            if how == "for" and isinstance(value, ast.AST):
                attr = self_attr_in(value, cls)
                if attr:
                    out.module_locals[name] = attr
        if how == "=" and isinstance(target, ast.Name):
            if isinstance(value, ast.Call):
                cname = resolve(value.func)
                if cname and is_class_name(cname) and not cname.startswith("torch."):
                    out.constructed[target.id] = cname
            attr = self_attr_in(value, cls, direct=True)
            if attr:
                out.module_locals[target.id] = attr
    for bindings in env.values():
        bindings.sort(key=lambda b: b[0])
    rebound = {n for _, target, _, _ in assignments for n in names_in_target(target)}
    out.typed = {arg.arg: cname for arg, _ in params if arg.arg not in rebound
                 for cname in [annotation_class(arg.annotation, resolve)] if cname}
    unions = {arg.arg: T.annotation_union(arg.annotation, resolve) for arg, _ in params if arg.annotation is not None}
    inference.narrowed = narrowed_ranges(nodes, unions, resolve)
    inference.forget()
    out.inference = inference
    return out


# Statements `branch_blocks` does not split that hold statements (`match` from Python 3.10).
HOLDS_STATEMENTS = (ast.ClassDef,) + FUNCS + ((ast.Match,) if hasattr(ast, "Match") else ())


def branch_blocks(fn, nodes) -> Dict[int, tuple]:
    """id(assignment target) → the `if` branches around it, outermost first, each as
    (test, branch taken, first position, last position of the branch's statements).
    One pass over the function (`nodes`: its nodes, its `:=` among them): a target inside a statement the branches
    do not split (a nested `def`, a class body, an `if` test) takes the branches of the statement
    holding it. Module functions, not closures: a recursive closure is a reference cycle, which
    would keep the function's tree alive until a collection."""
    out: Dict[int, tuple] = {}
    walrus = any(n.__class__ is ast.NamedExpr for n in nodes)
    _block(getattr(fn, "body", []), (), None, out, walrus)
    return out


def _mark(node, around, out: Dict[int, tuple], walrus: bool) -> None:
    """The branches `around` for the targets a statement (or, with `:=`, an expression) assigns."""
    if around is None:
        return
    if walrus or isinstance(node, HOLDS_STATEMENTS):  # statements (or `:=`) inside
        subs = walk(node)
    elif isinstance(node, ast.stmt):
        subs = (node,)
    else:
        return  # an expression assigns nothing without `:=`
    for sub in subs:
        for target in _targets(sub):
            out[id(target)] = around


def _block(stmts, around, holder, out: Dict[int, tuple], walrus: bool) -> None:
    """`branch_blocks` of a block. `holder`: the branches of the innermost compound statement (for,
    with, try) around these statements, None at the function's top level."""
    for stmt in stmts:
        if isinstance(stmt, ast.If):
            _mark(stmt.test, holder, out, walrus)
            for branch, body in ((True, stmt.body), (False, stmt.orelse)):
                if body:
                    span = ((body[0].lineno, body[0].col_offset), end(body[-1]))
                    _block(body, around + ((stmt.test, branch) + span,), holder, out, walrus)
        elif isinstance(stmt, FUNCS):
            _mark(stmt, holder, out, walrus)
        elif hasattr(stmt, "body") and not isinstance(stmt, ast.ClassDef):
            bodies = ("body", "orelse", "finalbody", "handlers")
            for name, value in ast.iter_fields(stmt):
                if name not in bodies:
                    for part in value if isinstance(value, list) else [value]:
                        if isinstance(part, ast.AST):
                            _mark(part, around, out, walrus)
            for name in bodies[:3]:
                _block(getattr(stmt, name, []) or [], around, around, out, walrus)
            for handler in getattr(stmt, "handlers", []) or []:
                _block(handler.body, around, around, out, walrus)
        else:
            _mark(stmt, around, out, walrus)


def _targets(sub) -> list:
    if isinstance(sub, ast.Assign):
        return list(sub.targets)
    if isinstance(sub, (ast.AnnAssign, ast.AugAssign, ast.NamedExpr)):
        return [sub.target]
    return []


def _parameters(args: ast.arguments) -> List[Tuple[ast.arg, Optional[ast.AST]]]:
    """(parameter, default) pairs, positional and keyword-only."""
    positional = args.posonlyargs + args.args
    defaults = [None] * (len(positional) - len(args.defaults)) + list(args.defaults)
    return list(zip(positional, defaults)) + list(zip(args.kwonlyargs, args.kw_defaults))


# The nodes `_usage` and `_assignments` look at (most nodes are names, constants and operators).
_USAGE_NODES = frozenset((ast.If, ast.While, ast.IfExp, ast.BoolOp, ast.UnaryOp, ast.Attribute, ast.Subscript,
                          ast.Call, ast.Global, ast.Nonlocal, ast.Assign))
_ASSIGNING_NODES = frozenset((ast.Assign, ast.AnnAssign, ast.AugAssign, ast.For, ast.AsyncFor, ast.ListComp,
                              ast.SetComp, ast.GeneratorExp, ast.DictComp, ast.NamedExpr, ast.With, ast.AsyncWith,
                              ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ExceptHandler))
# Every node `function_bindings`' passes read: those two, imports, and the `if`s `narrowed_ranges` reads.
_READ_NODES = _USAGE_NODES | _ASSIGNING_NODES | {ast.Import, ast.ImportFrom, ast.If, ast.IfExp}


def _usage(nodes) -> Tuple[Set[str], Set[str]]:
    """(names declared global or nonlocal, names used like a config, container or flag:
    `p.seq_lens`, `p["k"]`, `p()`, `device=p`, `if p:`, `p and q`, `not p`, `h, w = p`)."""
    global_names: Set[str] = set()
    non_tensor_names: Set[str] = set()
    for sub in nodes:
        cls = sub.__class__
        if cls not in _USAGE_NODES:
            continue
        # A bare name tested for truth is a flag or an optional: a tensor of more than one element
        # raises there, so code tests tensors with `is not None` or `.any()` (`if output_attentions:`).
        if cls is ast.If or cls is ast.While or cls is ast.IfExp:
            if isinstance(sub.test, ast.Name):
                non_tensor_names.add(sub.test.id)
        elif cls is ast.BoolOp:
            non_tensor_names.update(t.id for t in sub.values if isinstance(t, ast.Name))
        elif cls is ast.UnaryOp:
            if isinstance(sub.op, ast.Not) and isinstance(sub.operand, ast.Name):
                non_tensor_names.add(sub.operand.id)
        elif cls is ast.Attribute:
            if isinstance(sub.value, ast.Name) and sub.attr not in T.TENSOR_MEMBERS and not sub.attr.startswith("__"):
                non_tensor_names.add(sub.value.id)
        elif cls is ast.Subscript:
            if isinstance(sub.value, ast.Name) and isinstance(sub.slice, ast.Constant) and isinstance(sub.slice.value, str):
                non_tensor_names.add(sub.value.id)
        elif cls is ast.Call:
            for k in sub.keywords:  # `.to(device=device)`: a device or dtype, not data
                if k.arg in ("device", "dtype") and isinstance(k.value, ast.Name):
                    non_tensor_names.add(k.value.id)
            if isinstance(sub.func, ast.Name):
                non_tensor_names.add(sub.func.id)
                if sub.func.id in ("isinstance", "callable", "hasattr") and sub.args and isinstance(sub.args[0], ast.Name):
                    non_tensor_names.add(sub.args[0].id)
        elif cls is ast.Assign:
            # `height, width = input_dimensions`: a parameter unpacked whole is a tuple (of sizes, mostly).
            if isinstance(sub.value, ast.Name) and any(isinstance(t, (ast.Tuple, ast.List)) for t in sub.targets):
                non_tensor_names.add(sub.value.id)
        else:  # global, nonlocal
            global_names.update(sub.names)
    return global_names, non_tensor_names


def _parameter_kinds(args: ast.arguments, params, tensor_by_default: bool, non_tensor_names: Set[str], resolve,
                     out: Bindings) -> Dict[str, Set[Optional[str]]]:
    """What each parameter holds: its annotation, its default, or a tensor in compiled code."""
    kinds: Dict[str, Set[Optional[str]]] = {}
    for arg, default in params:
        name = arg.arg
        out.locals.add(name)
        if name in ("self", "cls"):
            continue
        kind = T.annotation_kind(arg.annotation, resolve)
        if kind is None and arg.annotation is None:
            if default is not None and not (isinstance(default, ast.Constant) and default.value is None):
                kind = T.SCALAR if isinstance(default, (ast.Constant, ast.Tuple, ast.List)) else None
            elif tensor_by_default and name not in non_tensor_names and not SCALAR_PARAM.match(name):
                kind = T.TENSOR
        kinds[name] = {kind}
    for extra in (args.vararg, args.kwarg):
        if extra is not None:
            out.locals.add(extra.arg)
            kinds[extra.arg] = {None}
    return kinds


def _assignments(nodes, node, kinds, resolve, out: Bindings) -> List[Tuple[Tuple[int, int], ast.AST, ast.AST, str]]:
    """Every binding in the function: (where it takes effect, target, value expr, how).
    Annotated locals add their kind to `kinds`; nested parameters and `except ... as e` are locals."""
    assignments: List[Tuple[Tuple[int, int], ast.AST, ast.AST, str]] = []
    for sub in nodes:
        if sub.__class__ not in _ASSIGNING_NODES or sub is node:
            continue
        if isinstance(sub, ast.Assign):
            for t in sub.targets:
                assignments.append((end(sub), t, sub.value, "="))
        elif isinstance(sub, ast.AnnAssign):
            ann = T.annotation_kind(sub.annotation, resolve)
            if isinstance(sub.target, ast.Name) and ann:
                kinds.setdefault(sub.target.id, set()).add(ann)
            if sub.value is not None:
                assignments.append((end(sub), sub.target, sub.value, "="))
        elif isinstance(sub, ast.AugAssign):
            value = ast.BinOp(left=sub.target, op=sub.op, right=sub.value)
            value.in_place = True  # `keep &= other`: a tensor's in-place op keeps its dtype (tensors.py)
            assignments.append((end(sub), sub.target, value, "="))
        elif isinstance(sub, (ast.For, ast.AsyncFor)):
            assignments.append(((sub.target.lineno, sub.target.col_offset), sub.target, sub.iter, "for"))
        elif isinstance(sub, (ast.ListComp, ast.SetComp, ast.GeneratorExp, ast.DictComp)):
            for gen in sub.generators:  # the element is written before the `for` that binds it
                assignments.append(((sub.lineno, sub.col_offset), gen.target, gen.iter, "for"))
        elif isinstance(sub, ast.NamedExpr):
            assignments.append((end(sub), sub.target, sub.value, "="))
        elif isinstance(sub, (ast.With, ast.AsyncWith)):
            for item in sub.items:
                if item.optional_vars is not None:
                    assignments.append((end(item.optional_vars), item.optional_vars, item.optional_vars, "unknown"))
        elif isinstance(sub, FUNCS + (ast.Lambda,)):
            a = sub.args
            for p in a.posonlyargs + a.args + a.kwonlyargs + [x for x in (a.vararg, a.kwarg) if x]:
                out.locals.add(p.arg)
                ann = T.annotation_kind(p.annotation, resolve) if isinstance(sub, FUNCS) else None
                if ann in (None, T.NONE):
                    assignments.append(((sub.lineno, sub.col_offset), ast.Name(id=p.arg), p, "unknown"))
                    continue
                # a nested def's annotated parameter holds its annotation's kind in the def's body;
                # after the def the name holds again what it held before it (`OuterKind`)
                assignments.append(((sub.lineno, sub.col_offset), ast.Name(id=p.arg), ann, "kind"))
                assignments.append((end(sub), ast.Name(id=p.arg), OuterKind(sub.lineno, sub.col_offset), "outer"))
        elif isinstance(sub, ast.ExceptHandler) and sub.name:
            out.locals.add(sub.name)
            assignments.append(((sub.lineno, sub.col_offset), ast.Name(id=sub.name), sub, "unknown"))
    return assignments


def narrowed_ranges(nodes, unions: Dict[str, set], resolve) -> Dict[str, list]:
    """Where `isinstance` has narrowed a parameter to a tensor: the body of
    `isinstance(x, torch.Tensor)`, or the other branch of `isinstance(x, list)` when x is annotated
    `Tensor | list[...] | None` (`sizes if isinstance(sizes, list) else sizes.tolist()`)."""
    out: Dict[str, list] = {}
    for sub in nodes:
        if sub.__class__ is not ast.If and sub.__class__ is not ast.IfExp:
            continue
        test, negated = sub.test, False
        while isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
            test, negated = test.operand, not negated
        if not (isinstance(test, ast.Call) and isinstance(test.func, ast.Name) and test.func.id == "isinstance"
                and len(test.args) == 2 and isinstance(test.args[0], ast.Name)):
            continue
        name = test.args[0].id
        types = test.args[1].elts if isinstance(test.args[1], ast.Tuple) else [test.args[1]]
        names = {T.CONTAINER_NAMES.get(resolve(t) or "", "") for t in types}
        if any(T.annotation_kind(t, resolve) == T.TENSOR for t in types):
            branch = sub.body  # isinstance(x, torch.Tensor): a tensor inside
        elif name in unions and unions[name] - {"none"} - names == {"tensor"} and "" not in names:
            branch = sub.orelse  # the one alternative left is the tensor
        else:
            continue
        if negated:
            branch = sub.orelse if branch is sub.body else sub.body
        parts = branch if isinstance(branch, list) else [branch]
        if parts:
            start = (parts[0].lineno, parts[0].col_offset)
            end = (parts[-1].end_lineno, parts[-1].end_col_offset)
            out.setdefault(name, []).append((start, end))
    return out


class OuterKind:
    """Where a nested def starts: after the def, its parameter's name holds what it held there."""

    def __init__(self, row: int, col: int):
        self.row, self.col = row, col  # no `lineno`: sorted by the end of the def, where it binds


def bind(target, value, how, inference: T.TensorInference):
    """(name, kind) pairs an assignment binds."""
    if how == "unknown":
        return [(n, None) for n in names_in_target(target)]
    if how == "kind":  # `value` is the kind (a nested def's annotated parameter)
        return [(target.id, value)]
    if how == "outer":  # the kind the name had right before the nested def (`OuterKind`)
        before = ast.Name(id=target.id, ctx=ast.Load(), lineno=value.row, col_offset=value.col)
        return [(target.id, inference.kind(before))]
    if how == "for":
        it = inference.kind(value)
        if isinstance(value, ast.Call) and isinstance(value.func, ast.Name) and value.func.id in ("range",):
            elem = T.SCALAR
        elif isinstance(value, ast.Call) and isinstance(value.func, ast.Attribute) and value.func.attr == "tolist":
            elem = T.SCALAR
        elif isinstance(value, ast.Call) and isinstance(value.func, ast.Name) and value.func.id == "enumerate" and value.args:
            inner = inference.kind(value.args[0])
            if isinstance(target, ast.Tuple) and len(target.elts) == 2:
                return pairs(target.elts[0], T.SCALAR) + pairs(target.elts[1], T.TENSOR if inner in (T.SEQ, T.TENSOR) else None)
            elem = None
        elif isinstance(value, ast.Call) and isinstance(value.func, ast.Name) and value.func.id == "zip" and \
                isinstance(target, ast.Tuple) and len(target.elts) == len(value.args) and \
                all(k.arg == "strict" for k in value.keywords):
            out = []  # `for a, b in zip(xs, ys)`: each name takes an element of its own sequence
            for t, arg in zip(target.elts, value.args):
                out.extend(pairs(t, _element(inference.kind(arg))))
            return out
        elif it in (T.SEQ, T.TENSOR, T.BOOL):
            elem = _element(it)
        else:
            elem = None
        return pairs(target, elem)
    if isinstance(target, ast.Name):
        return [(target.id, inference.kind(value))]
    if isinstance(target, (ast.Tuple, ast.List)):
        if isinstance(value, (ast.Tuple, ast.List)) and len(value.elts) == len(target.elts):
            out = []
            for t, v in zip(target.elts, value.elts):
                out.extend(bind(t, v, how, inference))
            return out
        vk = inference.kind(value)
        # Unpacking a tensor iterates its first dimension: `height, width = image_sizes[idx]`.
        elem = T.TENSOR if vk in (T.SEQ, T.TENSOR) else {T.SCALAR: T.SCALAR, T.BOOL: T.BOOL}.get(vk)
        return pairs(target, elem)
    if isinstance(target, ast.Starred):
        return pairs(target.value, None)
    return []


def _element(kind):
    """What iterating a value of `kind` gives: a tensor's rows (a boolean tensor's are boolean), a
    sequence's tensors."""
    return T.BOOL if kind == T.BOOL else T.TENSOR if kind in (T.SEQ, T.TENSOR) else None


def bound_assumptions(target, value, inference: T.TensorInference) -> Dict[str, frozenset]:
    """name → the assumed returns of other files' functions its binding's kind rests on
    (`TensorInference.assume_returns`): `a, b = helper(x)` binds `b` to part 1 of helper's result;
    any other binding rests on every assumption read inside its value."""
    if not isinstance(value, ast.AST):
        return {}
    if isinstance(target, (ast.Tuple, ast.List)):
        if isinstance(value, (ast.Tuple, ast.List)) and len(value.elts) == len(target.elts):
            out: Dict[str, frozenset] = {}
            for t, v in zip(target.elts, value.elts):
                out.update(bound_assumptions(t, v, inference))
            return out
        function = inference.external.get(id(value))
        if function is not None and not any(isinstance(t, ast.Starred) for t in target.elts):
            return {n: frozenset({f"{function}#{i}"}) for i, t in enumerate(target.elts) for n in names_in_target(t)}
    read = [value] + (list(value.args) if isinstance(value, ast.Call) and isinstance(value.func, ast.Name)
                      and value.func.id in ("enumerate", "zip") else [])  # what `bind` read the kinds of
    found = frozenset().union(*(inference.assumed.get(id(n), ()) for n in read))
    return {n: found for n in names_in_target(target)} if found else {}


def pairs(target, kind):
    return [(n, kind) for n in names_in_target(target)]


def self_attr_in(value: ast.AST, cls: Optional[ClassFacts], direct: bool = False) -> Optional[str]:
    """The submodule attribute an expression draws from: `self.layers`, `enumerate(self.blocks)`."""
    if cls is None:
        return None
    # Submodules `__init__` builds here, or that other code decides (`parts`: a builder's returns,
    # a constructor argument), which the project pass resolves.
    held = lambda attr: attr in cls.info.submodules or attr in cls.info.parts  # noqa: E731
    if not direct and held(ITEMS) and _own_members(value):
        return ITEMS  # `for layer in self.values()` of a container that holds its layers itself
    if direct:
        node = value.value if isinstance(value, ast.Subscript) else value
        if isinstance(node, ast.Attribute) and is_self(node.value) and held(node.attr):
            return node.attr
        return None
    # The first one written: `islice(self.layers, self.start_layer, self.end_layer)` iterates layers.
    found = [sub for sub in walk(value)
             if isinstance(sub, ast.Attribute) and is_self(sub.value) and held(sub.attr)]
    return min(found, key=lambda n: (n.lineno, n.col_offset)).attr if found else None


# The methods of a container of modules that iterate its own members (`nn.ModuleDict.values()`).
MEMBER_ITERATORS = frozenset({"values", "children", "items"})


def _own_members(value: ast.AST) -> bool:
    """`self`, `self.values()`, `self.children()`, `self.items()`: the members of the object itself."""
    if is_self(value):
        return True
    return value.__class__ is ast.Call and not value.args and value.func.__class__ is ast.Attribute and \
        value.func.attr in MEMBER_ITERATORS and is_self(value.func.value)
