"""What each local name of a function holds: the bindings tensor inference reads.

Parameters (annotated, or untyped in a compiled `forward`: tensors unless used like something
else), then every assignment in source order, so that `x = x * 2` reads the earlier `x`. Also the
names that hold submodules (`for layer in self.layers`) and constructed classes, which the reach
pass follows.
"""
from __future__ import annotations

import ast
import re
from typing import TYPE_CHECKING, Dict, List, Optional, Set, Tuple

from compilelint import tensors as T
from compilelint.astutil import FUNCS, end, is_class_name, is_self, names_in_target
from compilelint.names import COMPILE_FUNCS

if TYPE_CHECKING:
    from compilelint.analyze import ClassFacts, FileAnalyzer, Scope

# Untyped parameters of compiled functions are tensors by default, except names that say otherwise:
# `device`, `dtype`, and sizes and counts (`block_size`, `num_groups`, `seq_len`, `head_dim`).
SCALAR_PARAM = re.compile(r"^(device|dtype|(num|n)_[a-z]+|[a-z]+_(size|len|dim))$")


def module_call_kind(analyzer: FileAnalyzer, cls: Optional[ClassFacts], key: str) -> Optional[str]:
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
        elif name.startswith(analyzer.module + ".") and name[len(analyzer.module) + 1:] in analyzer.classes:
            kinds.add(analyzer.classes[name[len(analyzer.module) + 1:]].forward_returns)
        else:
            kinds.add(None)
    return kinds.pop() if len(kinds) == 1 else None


def function_inference(analyzer: FileAnalyzer, node, cls: Optional[ClassFacts], scope: Scope) -> T.TensorInference:
    """Tensor inference over a function's bindings: its parameters and locals,
    name → [((row, col), kind)] in source order, and the isinstance-narrowed ranges."""
    resolve = analyzer._resolve_plain
    args = node.args
    positional = args.posonlyargs + args.args
    defaults = [None] * (len(positional) - len(args.defaults)) + list(args.defaults)
    params = list(zip(positional, defaults)) + list(zip(args.kwonlyargs, args.kw_defaults))
    decorators = scope.info.decorators if scope.info is not None else []
    tensor_by_default = (cls is not None and node.name == "forward") or any(
        d.split("#")[0] in COMPILE_FUNCS for d in decorators) or (
        cls is None and node.name in getattr(analyzer, "compiled_names", ()))  # f = torch.compile(f)
    kinds: Dict[str, Set[Optional[str]]] = {}  # parameters
    nodes = analyzer.nodes(node)
    global_names: Set[str] = set()
    non_tensor_names: Set[str] = set()  # used like a config or container: `p.seq_lens`, `p["k"]`, `p()`
    for sub in nodes:
        if isinstance(sub, ast.Attribute):
            if isinstance(sub.value, ast.Name) and sub.attr not in T.TENSOR_MEMBERS and not sub.attr.startswith("__"):
                non_tensor_names.add(sub.value.id)
        elif isinstance(sub, ast.Subscript):
            if isinstance(sub.value, ast.Name) and isinstance(sub.slice, ast.Constant) and isinstance(sub.slice.value, str):
                non_tensor_names.add(sub.value.id)
        elif isinstance(sub, ast.Call):
            for k in sub.keywords:  # `.to(device=device)`: a device or dtype, not data
                if k.arg in ("device", "dtype") and isinstance(k.value, ast.Name):
                    non_tensor_names.add(k.value.id)
            if isinstance(sub.func, ast.Name):
                non_tensor_names.add(sub.func.id)
                if sub.func.id in ("isinstance", "callable", "hasattr") and sub.args and isinstance(sub.args[0], ast.Name):
                    non_tensor_names.add(sub.args[0].id)
        elif isinstance(sub, (ast.Global, ast.Nonlocal)):
            global_names.update(sub.names)
    for arg, default in params:
        name = arg.arg
        scope.locals.add(name)
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
            scope.locals.add(extra.arg)
            kinds[extra.arg] = {None}

    # (where the binding takes effect, target, value expr, how)
    assignments: List[Tuple[Tuple[int, int], ast.AST, ast.AST, str]] = []
    for sub in nodes:
        if sub is node:
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
            assignments.append((end(sub), sub.target, ast.BinOp(left=sub.target, op=sub.op, right=sub.value), "="))
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
        elif isinstance(sub, FUNCS + (ast.Lambda,)) and sub is not node:
            a = sub.args
            for p in a.posonlyargs + a.args + a.kwonlyargs + [x for x in (a.vararg, a.kwarg) if x]:
                scope.locals.add(p.arg)
                assignments.append(((sub.lineno, sub.col_offset), ast.Name(id=p.arg), p, "unknown"))
        elif isinstance(sub, ast.ExceptHandler) and sub.name:
            scope.locals.add(sub.name)
            assignments.append(((sub.lineno, sub.col_offset), ast.Name(id=sub.name), sub, "unknown"))

    for _, target, _, _ in assignments:
        for name in names_in_target(target):
            scope.locals.add(name)
            if name not in global_names:
                scope.locals_only.add(name)
    # Function-local imports rebind names (`import torch.nn.functional as F` inside a function).
    for sub in nodes:
        if isinstance(sub, (ast.Import, ast.ImportFrom)):
            analyzer.imports.add_import(sub)
            for alias in sub.names:
                scope.locals.discard((alias.asname or alias.name).split(".")[0])

    env: Dict[str, list] = {}
    for name, ks in kinds.items():
        ks = ks - {T.NONE}
        env[name] = [((0, 0), ks.pop() if len(ks) == 1 else None)]
    inference = T.TensorInference(resolve, env, (cls.attr_kind if cls else (lambda a: None)),
                                  analyzer.global_kind, lambda key: module_call_kind(analyzer, cls, key))
    # In source order, so each right-hand side sees the bindings made before it.
    for pos, target, value, how in sorted(assignments, key=lambda a: (getattr(a[2], "lineno", a[0][0]), a[0])):
        for name, kind in bind(target, value, how, inference):
            if kind == T.NONE and env.get(name):
                continue  # `x = None` first, a tensor later: keep what we know
            env.setdefault(name, []).append((pos, kind))
            if how == "for" and isinstance(value, ast.AST):
                attr = self_attr_in(value, cls)
                if attr:
                    scope.module_locals[name] = attr
        if how == "=" and isinstance(target, ast.Name):
            if isinstance(value, ast.Call):
                cname = resolve(value.func)
                if cname and is_class_name(cname) and not cname.startswith("torch."):
                    scope.constructed[target.id] = cname
            attr = self_attr_in(value, cls, direct=True)
            if attr:
                scope.module_locals[target.id] = attr
    for bindings in env.values():
        bindings.sort(key=lambda b: b[0])
    unions = {arg.arg: T.annotation_union(arg.annotation, resolve) for arg, _ in params if arg.annotation is not None}
    inference.narrowed = narrowed_ranges(nodes, unions, resolve)
    inference.forget()
    return inference


def narrowed_ranges(nodes, unions: Dict[str, set], resolve) -> Dict[str, list]:
    """Where `isinstance` has narrowed a parameter to a tensor: the body of
    `isinstance(x, torch.Tensor)`, or the other branch of `isinstance(x, list)` when x is annotated
    `Tensor | list[...] | None` (vLLM's `grid_thw if isinstance(grid_thw, list) else grid_thw.tolist()`)."""
    out: Dict[str, list] = {}
    for sub in nodes:
        if not isinstance(sub, (ast.If, ast.IfExp)):
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


def bind(target, value, how, inference: T.TensorInference):
    """(name, kind) pairs an assignment binds."""
    if how == "unknown":
        return [(n, None) for n in names_in_target(target)]
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
        elif it in (T.SEQ, T.TENSOR):
            elem = T.TENSOR
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
        elem = T.TENSOR if vk == T.SEQ else (T.SCALAR if vk == T.SCALAR else None)
        return pairs(target, elem)
    if isinstance(target, ast.Starred):
        return pairs(target.value, None)
    return []


def pairs(target, kind):
    return [(n, kind) for n in names_in_target(target)]


def self_attr_in(value: ast.AST, cls: Optional[ClassFacts], direct: bool = False) -> Optional[str]:
    """The submodule attribute an expression draws from: `self.layers`, `enumerate(self.blocks)`."""
    if cls is None:
        return None
    if direct:
        node = value.value if isinstance(value, ast.Subscript) else value
        if isinstance(node, ast.Attribute) and is_self(node.value) and node.attr in cls.info.submodules:
            return node.attr
        return None
    # The first one written: `islice(self.layers, self.start_layer, self.end_layer)` iterates layers.
    found = [sub for sub in ast.walk(value)
             if isinstance(sub, ast.Attribute) and is_self(sub.value) and sub.attr in cls.info.submodules]
    return min(found, key=lambda n: (n.lineno, n.col_offset)).attr if found else None
