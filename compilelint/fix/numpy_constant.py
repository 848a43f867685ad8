"""A module-level helper that answers a Python question from NumPy arrays its (non-tensor) arguments
hold → `@torch.compiler.assume_constant_result` on it.

Dynamo traces NumPy through `torch._numpy`, so an array an argument holds (an object's bounds, a
table) becomes a traced tensor, and testing it breaks ("Data-dependent branching"); with
`trace_numpy = False` the array comparison breaks instead. Marked `assume_constant_result`, the
helper runs eagerly, in Python, while Dynamo traces, and its answer goes into the graph as a
constant: no break.

Only on torch 2.13 and later (`assume-constant-result-takes-objects`): on 2.11 the call with such
objects fails to compile. There the helper is marked `@torch.compiler.disable` instead (`Fix.otherwise`):
Dynamo runs it in Python on every call, one graph break per call instead of the branches on traced
NumPy inside it, and the answer is computed afresh each time (nothing is taken as a constant).

Unsafe (said in its message): the compiled code keeps the answer while the same objects are passed.
Measured on torch 2.13 CPU: another object passed recompiles and answers again, but an in-place change
to an array the object holds is not seen. Eager behaviour is unchanged (the decorator only marks the
function).

What the source must show (else no fix): a module-level `def` (not a method, not nested, no
decorator, not handed to `torch.compile` in the file); every parameter annotated with a type that
is not a tensor or an array, and the return annotated `bool`, `int`, `float` or `str`: the answer
is a Python value of Python arguments; no `global`/`nonlocal`, `yield`, and no store into an
attribute or item (its effects would happen once, while tracing).
"""
from __future__ import annotations

import ast
import re
from typing import Optional

from compilelint.finding import Edit, Fix, Span
from compilelint.fix._common import never_raise, newline, torch_name

MESSAGE = ("Take `{name}`'s answer as a constant under compile: `@{torch}.compiler.assume_constant_result`. "
           "Dynamo runs it in Python while tracing; the compiled code keeps the answer while the same objects "
           "are passed (another object recompiles; an in-place change to an array they hold is not seen). "
           "Eager behaviour is unchanged")

DISABLE = ("Run `{name}` in Python under compile: `@{torch}.compiler.disable` (on this torch an "
           "`assume_constant_result` helper cannot take objects). One graph break per call instead of the branches on "
           "traced NumPy inside it. Eager behaviour is unchanged")

SCALAR_RETURNS = frozenset({"bool", "int", "float", "str"})
# an annotation that may name a tensor or an array: such an argument is data, not a question's input
DATA_ANNOTATION = re.compile(r"Tensor|ndarray|[Aa]rray|torch|numpy|\bnp\b|Any")


def _parameters_are_python(func: ast.FunctionDef) -> bool:
    a = func.args
    params = [*a.posonlyargs, *a.args, *a.kwonlyargs, *filter(None, (a.vararg, a.kwarg))]
    return all(p.annotation is not None and not DATA_ANNOTATION.search(ast.unparse(p.annotation)) for p in params)


def _no_effects(ctx, func: ast.FunctionDef) -> bool:
    for n in ctx.nodes(func):
        if isinstance(n, (ast.Global, ast.Nonlocal, ast.Yield, ast.YieldFrom)):
            return False
        targets = n.targets if isinstance(n, ast.Assign) else [n.target] if isinstance(n, (ast.AugAssign, ast.AnnAssign)) \
            else []
        if any(isinstance(s, (ast.Attribute, ast.Subscript)) for t in targets for s in ast.walk(t)):
            return False
    return True


@never_raise
def assume_numpy_answer_constant(ctx) -> Optional[Fix]:
    func, info = ctx.function_node, ctx.function
    if func is None or info is None or ctx.cls is not None or "." in info.qualname:
        return None
    if not isinstance(func, ast.FunctionDef) or func.decorator_list or func.col_offset:
        return None
    if func.name in ctx.fixes.compiled_names:
        return None
    if not (isinstance(func.returns, ast.Name) and func.returns.id in SCALAR_RETURNS):
        return None
    if not _parameters_are_python(func) or not _no_effects(ctx, func):
        return None
    t = torch_name(ctx)
    if t is None:
        return None
    tname, imports = t
    at = Span(func.lineno, 1, func.lineno, 1)
    disable = Fix("unsafe", DISABLE.format(name=func.name, torch=tname),
                  imports + (Edit(f"@{tname}.compiler.disable{newline(ctx)}", at),),
                  title="Run the helper in Python under compile")
    edit = Edit(f"@{tname}.compiler.assume_constant_result{newline(ctx)}", at)
    return Fix("unsafe", MESSAGE.format(name=func.name, torch=tname), imports + (edit,),
               title="Take the answer as a constant under compile", behaviour="assume-constant-result-takes-objects",
               otherwise=disable)
