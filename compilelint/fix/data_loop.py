"""A function whose Python loop runs once per element of a tensor's `.tolist()` → `@torch.compiler.disable`
on it.

`sizes = counts.tolist()` then `for part in torch.split(x, sizes):` loops a number of times that is
tensor data: Dynamo breaks at the `.tolist()`, and again in every iteration it unrolls (each part's
tests, its size), so the breaks grow with the data. Run eagerly, the function costs one break at
its call.

Safe, as fix/numpy_planner.py: `torch.compiler.disable` does nothing outside torch.compile, so eager
behaviour is unchanged, and under compile the function runs as eager runs it (not compiled: the
message says so; `verify --fix` times it).

What the source must show (else no fix): the list is bound to a name (or iterated directly) and a
`for` loop of the same function iterates over something that reads it; the function is a `def` at
module level or a method of a module-level class (not nested), with no decorator, not a generator,
not `forward`/`__call__` (disabling the module's own call would leave nothing compiled), and not
handed to `torch.compile` in the file.
"""
from __future__ import annotations

import ast
from typing import Optional

from compilelint.analysis.astutil import is_generator
from compilelint.finding import Edit, Fix, Span
from compilelint.fix._common import never_raise, newline, torch_name

MESSAGE = ("Run `{name}` eagerly under torch.compile: `@{torch}.compiler.disable`. Its loop runs once per "
           "element of a tensor's `.tolist()`, which Dynamo unrolls with breaks in every iteration; eagerly "
           "it costs one break at its call. Eager behaviour is unchanged; under compile the function is not "
           "compiled")

ENTRY_METHODS = frozenset({"forward", "__call__"})


def _loops_over(ctx, fn: ast.AST, name: str) -> bool:
    return any(isinstance(n, (ast.For, ast.comprehension)) and any(
        isinstance(r, ast.Name) and r.id == name for r in ast.walk(n.iter)) for n in ctx.nodes(fn))


def _drives_a_loop(ctx, node: ast.Call, fn: ast.AST) -> bool:
    stack = ctx.stack
    for parent, child in zip(stack, stack[1:]):
        if isinstance(parent, (ast.For, ast.comprehension)) and child is parent.iter:
            return True
    stmt = ctx.statement()
    if isinstance(stmt, ast.Assign) and stmt.value is node and len(stmt.targets) == 1 \
            and isinstance(stmt.targets[0], ast.Name):
        return _loops_over(ctx, fn, stmt.targets[0].id)
    return False


@never_raise
def disable_data_loop(ctx, node: ast.Call) -> Optional[Fix]:
    """`node`: the `.tolist()` call."""
    func, info = ctx.function_node, ctx.function
    if func is None or info is None or not isinstance(func, ast.FunctionDef) or func.decorator_list:
        return None
    if info.qualname.count(".") > (1 if ctx.cls is not None else 0) or func.name in ENTRY_METHODS:
        return None  # nested, or the module's own call
    if ctx.cls is None and (func.col_offset or func.name in ctx.fixes.compiled_names):
        return None
    if is_generator(func):
        return None
    if not _drives_a_loop(ctx, node, func):
        return None
    t = torch_name(ctx)
    if t is None:
        return None
    tname, imports = t
    indent = " " * func.col_offset
    edit = Edit(f"{indent}@{tname}.compiler.disable{newline(ctx)}", Span(func.lineno, 1, func.lineno, 1))
    return Fix("safe", MESSAGE.format(name=func.name, torch=tname), imports + (edit,),
               title="Run the function eagerly: `@compiler.disable`")
