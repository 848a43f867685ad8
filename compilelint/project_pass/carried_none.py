"""Arguments a skipped frame's loop passes as None first and as a value after, and the None test
each meets in the frame it enters (`position_bias = None` before the loop, `hidden, position_bias =
layer(hidden, position_bias=position_bias)` inside it, `if position_bias is None:` in the layer's
attention): CL414 reports the test, CL412 leaves such frames to it (Dynamo names the argument's
guard when an entry fails it).
"""
from __future__ import annotations

import ast
from typing import Callable, Dict, List, Optional, Set, Tuple

from compilelint.project_pass import frames as F
from compilelint.project_pass.trees import Trees

DEPTH = 4  # how far a parameter is followed down the calls that pass it on


def _assigned_names(nodes) -> Set[str]:
    out = set()
    for stmt in nodes:
        for sub in ast.walk(stmt):
            targets = sub.targets if isinstance(sub, ast.Assign) else \
                [sub.target] if isinstance(sub, (ast.AnnAssign, ast.AugAssign)) else []
            for t in targets:
                out.update(n.id for n in ast.walk(t) if isinstance(n, ast.Name))
    return out


def carried_none_arguments(trees: Trees, fn: ast.AST, call: ast.Call) -> List[Tuple[object, str]]:
    """The arguments of `call` (a call inside a loop of `fn`) that are a name set to None before
    that loop and rebound inside it: None on the first iteration, what the previous one left after
    (`position_bias = None`, then `hidden, position_bias = layer(hidden, position_bias=position_bias)`).
    [(positional index or keyword name, the name)]."""
    loops = [loop for loop in trees.derived(fn, "loop-carried names", _carried_by_loop)
             if loop[0] <= call.lineno <= loop[1]]
    if not loops:
        return []
    rebound = max(loops, key=lambda loop: loop[0])[2]  # the innermost
    passed = [(i, a.id) for i, a in enumerate(call.args) if isinstance(a, ast.Name)]
    passed += [(k.arg, k.value.id) for k in call.keywords if k.arg and isinstance(k.value, ast.Name)]
    return [(slot, name) for slot, name in passed if name in rebound]


def _carried_by_loop(fn: ast.AST) -> List[Tuple[int, int, Set[str]]]:
    """The function's loops as (first row, last row, names set to None before the loop and
    rebound inside it)."""
    nodes = list(ast.walk(fn))
    nones = [(n.end_lineno or n.lineno, t.id) for n in nodes if isinstance(n, ast.Assign)
             and isinstance(n.value, ast.Constant) and n.value.value is None
             for t in n.targets if isinstance(t, ast.Name)]
    return [(n.lineno, n.end_lineno or n.lineno,
             _assigned_names(n.body) & {name for row, name in nones if row < n.lineno})
            for n in nodes if isinstance(n, (ast.For, ast.While))]


def _parameter(callee: ast.AST, slot, bound: bool) -> Optional[str]:
    """The parameter of `callee` that a positional index or a keyword fills."""
    params = [a.arg for a in callee.args.posonlyargs + callee.args.args]
    if isinstance(slot, int):
        i = slot + (1 if bound and params[:1] in (["self"], ["cls"]) else 0)
        return params[i] if i < len(params) else None
    names = params + [a.arg for a in callee.args.kwonlyargs]
    return slot if slot in names else None


def none_tests(node: ast.AST) -> Dict[str, ast.Compare]:
    """Each name's first `name is None` / `name is not None` tested by an `if` (or a conditional
    expression, a `while`) in `node`, in walk order: one walk answers every parameter's question."""
    out: Dict[str, ast.Compare] = {}
    for sub in ast.walk(node):
        test = sub.test if isinstance(sub, (ast.If, ast.IfExp, ast.While)) else None
        for t in ast.walk(test) if test is not None else ():
            if isinstance(t, ast.Compare) and len(t.ops) == 1 and isinstance(t.ops[0], (ast.Is, ast.IsNot)) and \
                    isinstance(t.left, ast.Name) and isinstance(t.comparators[0], ast.Constant) and \
                    t.comparators[0].value is None:
                out.setdefault(t.left.id, t)
    return out


def none_before_loop(nodes) -> bool:
    """A name of the function (`nodes`: its nodes, its assignments and loops among them) is set to
    None above the end of one of its loops: only then can `carried_none_arguments` find something
    (the cheap test, made while the file is walked, that spares parsing the function again)."""
    last_loop, nones = 0, []  # one look at the nodes (asked of every function of every file)
    for n in nodes:
        kind = n.__class__
        if kind is ast.For or kind is ast.While or kind is ast.AsyncFor:
            last_loop = max(last_loop, n.end_lineno or n.lineno)
        elif kind is ast.Assign and n.value.__class__ is ast.Constant and n.value.value is None:
            nones.append(n.end_lineno or n.lineno)
    return any(end < last_loop for end in nones)


def hits(fr: "F.Frames", trees: Trees, starts_none: Callable[[str], bool]) -> List[Tuple[str, str, str, str, ast.Compare]]:
    """(skipped frame, repeated frame, carried name, function holding the test, the test); worked out
    once per frames (two rules ask). `starts_none(fid)`: `none_before_loop` of the function, as
    its file's walk found it (every caller's answers are the same)."""
    if fr.carried is None:
        fr.carried = _hits(fr.index, fr, trees, starts_none)
    return fr.carried


def _hits(graph, fr: "F.Frames", trees: Trees, starts_none) -> List[Tuple[str, str, str, str, ast.Compare]]:
    out = []
    for callee in sorted(fr.repeated):
        for caller, call in fr.callers.get(callee, ()):
            if caller not in fr.skipped:
                continue  # only the skipped frame's loop enters the callee again and again
            cs, ci = graph.functions[caller]
            if not starts_none(caller):
                continue  # no name starts a loop as None (and the tree is not parsed again)
            fn = trees.function(cs.path, ci.row)
            node = F.call_at(trees, fn, call.row, call.col) if fn is not None else None
            if node is None:
                continue
            for slot, name in carried_none_arguments(trees, fn, node):
                found = follow(graph, fr, callee, slot, call.kind != "name", DEPTH, trees)
                if found is not None:
                    out.append((caller, callee, name, found[0], found[1]))
    return out


def follow(graph, fr, fid: str, slot, bound: bool, depth: int, trees: Trees) -> Optional[Tuple[str, ast.Compare]]:
    """The None test the argument in `slot` meets in `fid` or, passed on by name, in what it calls."""
    summary, info = graph.functions[fid]
    fn = trees.function(summary.path, info.row)
    if fn is None or not isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)):
        return None
    param = _parameter(fn, slot, bound)
    if param is None:
        return None
    test = trees.derived(fn, "none_tests", none_tests).get(param)
    if test is not None:
        return fid, test
    if depth == 0:
        return None
    for callee, call in fr.edges.get(fid, ()):
        node = F.call_at(trees, fn, call.row, call.col)
        if node is None:
            continue
        slots = [i for i, a in enumerate(node.args) if isinstance(a, ast.Name) and a.id == param]
        slots += [k.arg for k in node.keywords if k.arg and isinstance(k.value, ast.Name) and k.value.id == param]
        for s in slots:
            found = follow(graph, fr, callee, s, call.kind != "name", depth - 1, trees)
            if found is not None:
                return found
    return None
