"""Code that runs only on the path where its function returns None, when every traced caller uses
the result as an object.

A loader that falls back in its exception handler (`except Exception: warnings.warn(...); ext =
None`) and then returns what it holds (`_EXT = ext; return _EXT`) returns None exactly when the
handler ran. A caller that uses the result right away as an object (`load_ext().scale(x)`,
`load_ext()[0]`, `load_ext()(x)`) raises on None (AttributeError, TypeError), so a run taking the
handler from there fails whatever Dynamo does with the warning: the warning is no claim about a
model that works. The walker gives what the handler holds the need RETURNS_NONE
(`call_binding`), and each call that uses its result so the mark DEREF in its `forwards`;
`passed_args.Incoming` drops the need's code when every live traced call is so marked. A call
inside a `try` of its own may catch that error: it is not marked.
"""
from __future__ import annotations

import ast
from typing import List, Optional

from compilelint.analysis.astutil import walk


def handler_returns_none(fn: Optional[ast.AST], stack: List[ast.AST]) -> bool:
    """Is the innermost `except` handler around the walked node one after which `fn` returns
    None? The handler ends with `name = None` and never leaves by itself; its `try` is a statement
    of `fn`'s own body with no `finally`; after the `try` come only copies of that name
    (`_EXT = ext`) and then `return` of one of them."""
    if not isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)):
        return False
    handler = next((a for a in reversed(stack) if isinstance(a, ast.ExceptHandler)), None)
    if handler is None or not handler.body:
        return False
    last = handler.body[-1]
    if not (isinstance(last, ast.Assign) and len(last.targets) == 1 and isinstance(last.targets[0], ast.Name)
            and isinstance(last.value, ast.Constant) and last.value.value is None):
        return False
    if any(isinstance(sub, (ast.Return, ast.Raise, ast.Break, ast.Continue, ast.Yield, ast.YieldFrom))
           for stmt in handler.body for sub in walk(stmt)):
        return False
    at = next((i for i, stmt in enumerate(fn.body) if isinstance(stmt, ast.Try) and handler in stmt.handlers), None)
    if at is None or fn.body[at].finalbody:
        return False
    held = {last.targets[0].id}
    for stmt in fn.body[at + 1:]:
        if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name) \
                and isinstance(stmt.value, ast.Name) and stmt.value.id in held:
            held.add(stmt.targets[0].id)
        elif isinstance(stmt, ast.Return):
            return isinstance(stmt.value, ast.Name) and stmt.value.id in held
        else:
            return False
    return False


def result_used_as_object(node: ast.Call, stack: List[ast.AST]) -> bool:
    """Does the caller use what `node` returns as an object right away (`f().attr`, `f()[i]`,
    `f()(x)`), outside any `try` of its own?"""
    parent = stack[-2] if len(stack) > 1 else None
    used = (isinstance(parent, (ast.Attribute, ast.Subscript)) and parent.value is node) or \
        (isinstance(parent, ast.Call) and parent.func is node)
    return used and not any(isinstance(a, ast.Try) for a in stack)
