"""CL222: the type given to `typing.cast` written as a string, `cast("list[Alias]", x)` (safe).

`typing.cast(typ, val)` returns `val` and never reads `typ`; type checkers read a string there as
the same type. A string is never subscripted at run time, so Dynamo has no `types.GenericAlias` to
subscript (GB4880 on torch 2.13; torch 2.11 fails the whole compile on it). Eager behaviour: the
same, but the type expression is no longer evaluated (it had no effect besides raising where a
name in it was undefined)."""
from __future__ import annotations

import ast
from typing import Optional

from compilelint.finding import Edit, Fix
from compilelint.fix._common import file_text, never_raise

CASTS = ("typing.cast", "typing_extensions.cast")
MESSAGE = "Write the type given to `typing.cast` as a string: nothing is subscripted at run time"
TITLE = "Write the cast's type as a string"  # editors cut titles past 60 characters


def _pure_type(node: ast.AST) -> bool:
    """Names, dotted names, subscripts, `|` unions, tuples and constants: what a type is written
    with, and nothing that runs code of its own (calls, comprehensions)."""
    return all(isinstance(n, (ast.Name, ast.Attribute, ast.Subscript, ast.Tuple, ast.List, ast.Constant,
                              ast.BinOp, ast.BitOr, ast.Load, ast.Slice))
               and (not isinstance(n, ast.BinOp) or isinstance(n.op, ast.BitOr))
               and (not isinstance(n, ast.Constant) or n.value is None or n.value is Ellipsis)
               for n in ast.walk(node))


@never_raise
def quote_cast_type(ctx, node: ast.Subscript) -> Optional[Fix]:
    """`cast(<type holding node>, x)` → `cast("<type>", x)`, else None."""
    stack = ctx.stack
    for call, typ in zip(reversed(stack[:-1]), reversed(stack[1:])):
        if isinstance(call, ast.Call):
            break
    else:
        return None
    if ctx.resolve(call.func) not in CASTS or not call.args or call.args[0] is not typ:
        return None
    if not _pure_type(typ) or typ.lineno != typ.end_lineno:
        return None
    ft = file_text(ctx)
    text = ft.segment(ft.span(typ))
    quote = '"' if '"' not in text else ("'" if "'" not in text else None)
    if quote is None or "\\" in text:
        return None
    return Fix("safe", MESSAGE, (Edit(f"{quote}{text}{quote}", ft.span(typ)),), title=TITLE)
