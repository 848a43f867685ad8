"""`self.b = self.b.to(...)` in a forward (a registered buffer) → `b = self.b.to(...)`, and the
function's later reads of `self.b` read the local `b`.

Rebinding the module attribute runs `nn.Module.__setattr__`'s buffer path, which Dynamo does not
trace (torch 2.13: GB4841, "Unsupported python_type() call"; transformers' CTRL,
`self.pos_encoding = self.pos_encoding.to(device=..., dtype=...)`). The local holds the same
tensor, so the function computes the same.

What the source must show (else no fix): the assignment is in no loop of the function; every read
of `self.b` after it is in the rest of its own block (the function's body, or the `if`/`with`/`try`
branch it sits in: where it has run); it has its lines to itself and no comment in them; the
function has no other write to `self.b` (assignment, `del`, augmented assignment, item or
attribute write) and no local, parameter or global named `b`.

Eager behaviour that changes (unsafe fix, said in its message): the module's buffer is no longer
replaced by the converted tensor, so other methods, later calls and `state_dict()` see the buffer
as it was (its device and dtype follow `model.to(...)`); each call converts it again (`.to` is free
when nothing changes).
"""
from __future__ import annotations

import ast
from typing import Optional

from compilelint.analysis.astutil import is_self
from compilelint.finding import Edit, Fix
from compilelint.fix._common import file_text, never_raise, whole_lines

MESSAGE = ("Keep the converted buffer in a local `{name}` and read it there. Eager change: `self.{name}` is "
           "no longer replaced by the converted tensor (other methods, later calls and state_dict() see the "
           "buffer as `model.to()` left it); each call converts it again")


def _is_attr(node, attr: str) -> bool:
    return isinstance(node, ast.Attribute) and node.attr == attr and is_self(node.value)


def _block(ctx, func, stmt: ast.stmt):
    """The statement list holding `stmt` when no loop encloses it within `func` (a loop would read
    the buffer converted by an earlier pass), else None."""
    if not isinstance(func, (ast.FunctionDef, ast.AsyncFunctionDef)) or ctx.loops:
        return None
    stack = ctx.stack  # the function's own nodes, from its body down
    if stmt not in stack:
        return None
    between = stack[stack.index(func) + 1 if func in stack else 0: stack.index(stmt)]
    if any(isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)) for n in between):
        return None
    parent = between[-1] if between else func
    for field in ("body", "orelse", "finalbody"):
        block = getattr(parent, field, None)
        if isinstance(block, list) and stmt in block:
            return block
    return None


@never_raise
def buffer_to_local(ctx, stmt: ast.Assign, attr: str) -> Optional[Fix]:
    func = ctx.function_node
    block = _block(ctx, func, stmt)
    if block is None:
        return None
    block_end = block[-1].end_lineno
    if attr in ctx.locals or any(a.arg == attr for a in ast.walk(func.args) if isinstance(a, ast.arg)):
        return None
    reads = []
    for node in ast.walk(func):
        if isinstance(node, ast.Name) and node.id == attr:
            return None  # the name is taken (a global, a closure, a comprehension variable)
        if isinstance(node, (ast.Global, ast.Nonlocal)):
            return None
        # `self.b += v`, `self.b[i] = v`, `self.b.data = v` write the buffer itself
        targets = node.targets if isinstance(node, ast.Assign) else \
            [node.target] if isinstance(node, (ast.AugAssign, ast.AnnAssign, ast.For, ast.AsyncFor)) else []
        if node is not stmt and any(_is_attr(t, attr) for target in targets for t in ast.walk(target)):
            return None
        if _is_attr(node, attr) and node is not stmt.targets[0]:
            if not isinstance(node.ctx, ast.Load):
                return None  # a del
            if node.lineno > block_end:
                return None  # read where the conversion may not have run
            if node.lineno > stmt.end_lineno:
                reads.append(node)
    ft = file_text(ctx)
    if not whole_lines(ft, ft.span(stmt)) or ft.comments_in(ft.span(stmt)):
        return None
    edits = [Edit(attr, ft.span(stmt.targets[0]))] + [Edit(attr, ft.span(r)) for r in reads]
    return Fix("unsafe", MESSAGE.format(name=attr), tuple(edits), title="Keep the converted buffer in a local")
