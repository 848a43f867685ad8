"""Options a constructor's `assert` keeps apart.

`assert not (use_a and use_b)` (or a helper that counts them, `assert at_most_one(use_a, use_b)`)
before `self.a = A() if use_a else None` and `self.b = B() if use_b else None` means no instance
holds both submodules: the construction with both flags raises. Frames of `A` and `B` never meet
in one compiled model, so a wrapper both share is entered by one class only (measured on torch
2.13, backend eager: a decorator's wrapper shared by two such submodules' `forward`s, their parent
skipped by a break in its loop, recompiles when both are built, never when one is).

The flags are `__init__` parameters with a `True`/`False` default (their truth is their value;
a flag rebound before the assert only to an `and`/`or` of such flags stays one), the assert sits
in `__init__`'s own body before both tests, nothing rebinds them in between, and the assert's
test is decided from those two truth values alone: `not`, `and`, `or`, `+`, `-`, comparisons, a few
builtins on known values (`sum`, `map`, `int`, `bool`, `len`, `any`, `all`, `min`, `max`), and
module functions whose body returns one such expression. Anything else decides nothing.
"""
from __future__ import annotations

import ast
import operator
from typing import Dict, Optional

from compilelint.analysis.astutil import parameter_defaults

UNKNOWN = object()
_BUILTINS = {"sum": sum, "map": map, "int": int, "bool": bool, "len": len, "any": any, "all": all,
             "min": min, "max": max}
_COMPARE = {ast.Eq: operator.eq, ast.NotEq: operator.ne, ast.Lt: operator.lt, ast.LtE: operator.le,
            ast.Gt: operator.gt, ast.GtE: operator.ge}
_ARITHMETIC = {ast.Add: operator.add, ast.Sub: operator.sub}
_HELPER_DEPTH = 3


def asserted_apart(project, trees, init_fid: str, row_a: int, branch_a: bool, row_b: int, branch_b: bool) -> bool:
    """Does `__init__` (`init_fid`) assert that its tests at absolute rows `row_a` and `row_b` never
    take branches `branch_a` and `branch_b` together?"""
    summary, info = project.functions[init_fid]
    init = trees.function(summary.path, info.row)
    if init is None:
        return False
    flags = _bool_flags(init)
    names = (_flag_tested(init, row_a, flags), _flag_tested(init, row_b, flags))
    if None in names or names[0] == names[1]:
        return False
    env = {names[0]: branch_a, names[1]: branch_b}
    first = min(row_a, row_b)
    for stmt in init.body:
        if stmt.lineno >= first:
            break
        if isinstance(stmt, ast.Assert) and not _rebound(init, set(names), stmt.lineno, max(row_a, row_b)):
            if _evaluate(stmt.test, env, project, summary.module, trees, 0) is False:
                return True
    return False


def _bool_flags(init: ast.AST) -> set:
    """`__init__`'s parameters defaulting to True/False whose every rebinding in `__init__` is an
    `and`/`or`/`not` of such parameters (`use_a = use_a or use_a_scaled`)."""
    flags = {a.arg for a, d in parameter_defaults(init.args) if isinstance(d, ast.Constant) and isinstance(d.value, bool)}
    for node in ast.walk(init):
        if isinstance(node, ast.Assign):
            for t in node.targets:
                if isinstance(t, ast.Name) and t.id in flags and not _of_flags(node.value, flags):
                    flags.discard(t.id)
        elif isinstance(node, (ast.AugAssign, ast.AnnAssign, ast.NamedExpr, ast.For, ast.comprehension)):
            target = node.target
            for t in ast.walk(target):
                if isinstance(t, ast.Name):
                    flags.discard(t.id)
    return flags


def _of_flags(value: ast.AST, flags: set) -> bool:
    if isinstance(value, ast.BoolOp):
        return all(_of_flags(v, flags) for v in value.values)
    if isinstance(value, ast.UnaryOp) and isinstance(value.op, ast.Not):
        return _of_flags(value.operand, flags)
    return isinstance(value, ast.Name) and value.id in flags


def _flag_tested(init: ast.AST, row: int, flags: set) -> Optional[str]:
    """The flag that the one test at `row` (an `if` or an `x if t else y`) is, else None."""
    tests = [n.test for n in ast.walk(init) if isinstance(n, (ast.If, ast.IfExp)) and n.lineno == row]
    if len(tests) != 1 or not isinstance(tests[0], ast.Name) or tests[0].id not in flags:
        return None
    return tests[0].id


def _rebound(init: ast.AST, names: set, after: int, upto: int) -> bool:
    """A name of `names` assigned between rows `after` and `upto` (inclusive)."""
    for node in ast.walk(init):
        targets = node.targets if isinstance(node, ast.Assign) else \
            [node.target] if isinstance(node, (ast.AugAssign, ast.AnnAssign, ast.NamedExpr, ast.For)) else []
        if targets and after < node.lineno <= upto and any(
                isinstance(t, ast.Name) and t.id in names for target in targets for t in ast.walk(target)):
            return True
    return False


def _evaluate(node: ast.AST, env: Dict[str, object], project, module: str, trees, depth: int):
    """The value of `node` from the names in `env`, or UNKNOWN."""
    ev = lambda n: _evaluate(n, env, project, module, trees, depth)  # noqa: E731
    if isinstance(node, ast.Constant):
        return node.value
    if isinstance(node, ast.Name):
        if node.id in env:
            return env[node.id]
        shadowed = project.canonical(f"{module}.{node.id}") in project.functions
        return _BUILTINS[node.id] if node.id in _BUILTINS and not shadowed else UNKNOWN
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not):
        value = ev(node.operand)
        return UNKNOWN if value is UNKNOWN else not value
    if isinstance(node, ast.BoolOp):
        stop = isinstance(node.op, ast.Or)  # the truth that decides the whole
        value, unknown = None, False
        for operand in node.values:
            value = ev(operand)
            if value is UNKNOWN:
                unknown = True
            elif bool(value) is stop:
                return value
        return UNKNOWN if unknown else value
    if isinstance(node, (ast.Tuple, ast.List)):
        items = [ev(e) for e in node.elts]
        return UNKNOWN if any(i is UNKNOWN for i in items) or any(isinstance(e, ast.Starred) for e in node.elts) \
            else tuple(items)
    if isinstance(node, ast.BinOp) and type(node.op) in _ARITHMETIC:
        left, right = ev(node.left), ev(node.right)
        if left is UNKNOWN or right is UNKNOWN:
            return UNKNOWN
        try:
            return _ARITHMETIC[type(node.op)](left, right)
        except TypeError:
            return UNKNOWN
    if isinstance(node, ast.Compare) and len(node.ops) == 1 and type(node.ops[0]) in _COMPARE:
        left, right = ev(node.left), ev(node.comparators[0])
        if left is UNKNOWN or right is UNKNOWN:
            return UNKNOWN
        try:
            return _COMPARE[type(node.ops[0])](left, right)
        except TypeError:
            return UNKNOWN
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and not node.keywords \
            and not any(isinstance(a, ast.Starred) for a in node.args):
        args = [ev(a) for a in node.args]
        if any(a is UNKNOWN for a in args):
            return UNKNOWN
        func = ev(node.func)
        if func is not UNKNOWN and func in _BUILTINS.values():
            try:
                value = func(*args)
                return tuple(value) if isinstance(value, map) else value  # a map runs its calls here
            except (TypeError, ValueError):
                return UNKNOWN
        return _helper(node.func.id, args, project, module, trees, depth)
    return UNKNOWN


def _helper(name: str, args: list, project, module: str, trees, depth: int):
    """A module function returning one expression of its parameters, called with known values."""
    fid = project.canonical(f"{module}.{name}")
    if depth >= _HELPER_DEPTH or fid not in project.functions:
        return UNKNOWN
    summary, info = project.functions[fid]
    fn = trees.function(summary.path, info.row)
    body = [s for s in getattr(fn, "body", ()) if not (isinstance(s, ast.Expr) and isinstance(s.value, ast.Constant))]
    if not isinstance(fn, ast.FunctionDef) or fn.decorator_list or len(body) != 1 \
            or not isinstance(body[0], ast.Return) or body[0].value is None:
        return UNKNOWN
    a = fn.args
    if a.posonlyargs or a.kwonlyargs or a.kwarg or a.defaults:
        return UNKNOWN
    params = [p.arg for p in a.args]
    if len(args) < len(params) or (len(args) > len(params) and a.vararg is None):
        return UNKNOWN
    env = dict(zip(params, args))
    if a.vararg is not None:
        env[a.vararg.arg] = tuple(args[len(params):])
    return _evaluate(body[0].value, env, project, summary.module, trees, depth + 1)
