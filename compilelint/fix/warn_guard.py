"""`if <tensor check>: warn(...)` → `if not torch.compiler.is_compiling() and (<tensor check>): warn(...)`.

A check whose only effect is a warning reads tensor data into Python to decide whether to warn,
and Dynamo breaks at the `if` ("Data-dependent branching", GB0170). With the compile predicate
first, Dynamo folds `not is_compiling()` to False and never evaluates the check; eager evaluates
both as before.

Eager behaviour is unchanged; under torch.compile the check and its warning no longer run (unsafe
fix, said in its message), as with the guard on a logging call (fix/guard.py).

What the source must show (else no fix): the `if` has no `else`/`elif`; every statement of its
body is a call whose value is dropped and whose function is named as a warning or a log line
(`warn`, `warning`, `warn_once`, `print`, `info`, `debug`, `log`, in any spelling that ends so);
the fix is built once, on the condition's first tensor operand.
"""
from __future__ import annotations

import ast
from typing import Optional

from compilelint.finding import Edit, Fix, Span
from compilelint.fix._common import expr_text, file_text, never_raise, torch_name

MESSAGE = ("Skip the warning's check under torch.compile: `not torch.compiler.is_compiling() and (...)`. "
           "Eager change: none; under compile the check and its warning no longer run")

_WARN_WORDS = ("warn", "warning", "warnings", "print", "info", "debug", "log")


def is_warning_call(stmt: ast.stmt) -> bool:
    if not isinstance(stmt, ast.Expr) or not isinstance(stmt.value, ast.Call):
        return False
    f = stmt.value.func
    name = f.attr if isinstance(f, ast.Attribute) else f.id if isinstance(f, ast.Name) else ""
    words = name.lower().split("_")
    return bool(name) and (words[-1] in _WARN_WORDS or words[-1] == "once" and len(words) > 1
                           and words[-2] in _WARN_WORDS)


@never_raise
def guard_warning_check(ctx, node: ast.If, expr: ast.AST, first: ast.AST) -> Optional[Fix]:
    """`first`: the condition's first tensor operand (one fix per statement)."""
    if expr is not first or node.orelse or not node.body or not all(is_warning_call(s) for s in node.body):
        return None
    t = torch_name(ctx)
    if t is None:
        return None
    tname, imports = t
    ft = file_text(ctx)
    test, whole = ft.span(node.test), ft.span(node)
    # the edit spans the body too (written back as it is), so a guard on a warning call inside is not
    # applied in the same round: once the check is skipped under compile, the call needs none
    rest = ft.segment(Span(test.end_row, test.end_col, whole.end_row, whole.end_col))
    content = f"not {tname}.compiler.is_compiling() and ({expr_text(ft, node.test)}){rest}"
    return Fix("unsafe", MESSAGE, imports + (Edit(content, Span(test.row, test.col, whole.end_row, whole.end_col)),),
               title="Skip the warning's check under torch.compile")
