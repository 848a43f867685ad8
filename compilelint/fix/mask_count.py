"""`n = x[mask].nelement()` then `if n:` around writes through that mask (and warnings) → the writes
unconditional, the warnings under `if not torch.compiler.is_compiling() and n:` (unsafe).

`n` counts the mask's True values (elements of the selection), so `if n:` holds exactly where the
writes `x[mask] = v` write something: with an all-False mask they write nothing, so they need no
`if`. With `capture_dynamic_output_shape_ops` the selection is traced and `n` is an unbacked size,
on which an `if` cannot guard ("Could not guard on data-dependent expression"); once the writes
leave it, only the warnings read `n`, and `torch.compiler.is_compiling()` spares them under compile.
Without the setting the selection itself still breaks, as before.

What the source must show (else no fix): `n = X[M].nelement()` (or `.numel()`), alone on its lines;
right after it `if n:` (or `n > 0`, `n != 0`, `0 < n`) with no `else`; its body first the writes
`X[M] = value` (the same `X` and `M`, written the same, values that do not read `n`), then only
warning calls; `M` pure (names, attributes, numbers, comparisons, `~`, `&`, `|`, and
torch.isnan/isinf/isfinite/logical_not of those), so evaluating it once more changes nothing.

Eager behaviour that changes (said in the message): with no True value the writes still run (an
in-place op that writes nothing, but bumps the tensor's version, which autograd checks for tensors
it saved), and the mask is computed once more.
"""
from __future__ import annotations

import ast
from typing import Optional

from compilelint.finding import Edit, Fix, Span
from compilelint.fix._common import assigned_name, file_text, names_read, never_raise, newline, statement_after, torch_name, whole_lines
from compilelint.fix.warn_guard import is_warning_call

MESSAGE = ("Write through the mask unconditionally (an all-False mask writes nothing) and keep the count only for "
           "the warning, under `torch.compiler.is_compiling()`: with capture_dynamic_output_shape_ops nothing "
           "guards on the data-dependent count. Eager change: with no True value the writes still run (an in-place "
           "op that writes nothing, but bumps the tensor's version) and the mask is computed once more")
COUNTS = ("nelement", "numel")
PURE_CALLS = ("torch.isnan", "torch.isinf", "torch.isfinite", "torch.logical_not")
PURE_NODES = (ast.Name, ast.Attribute, ast.Constant, ast.Compare, ast.UnaryOp, ast.BinOp, ast.Load,
              ast.cmpop, ast.unaryop, ast.BitAnd, ast.BitOr, ast.Invert, ast.Not, ast.USub)


def _pure(ctx, node: ast.AST) -> bool:
    for n in ast.walk(node):
        if isinstance(n, ast.Call):
            if ctx.resolve(n.func) not in PURE_CALLS or n.keywords:
                return False
        elif isinstance(n, ast.BinOp) and not isinstance(n.op, (ast.BitAnd, ast.BitOr)):
            return False
        elif not isinstance(n, PURE_NODES):
            return False
    return True


def _tests_count(test: ast.AST, name: str) -> bool:
    """`n`, `n > 0`, `n != 0`, `0 < n`: true exactly when the count is not zero."""
    if isinstance(test, ast.Name):
        return test.id == name
    if not (isinstance(test, ast.Compare) and len(test.ops) == 1):
        return False
    left, op, right = test.left, test.ops[0], test.comparators[0]
    zero = lambda n: isinstance(n, ast.Constant) and type(n.value) is int and n.value == 0  # noqa: E731
    is_n = lambda n: isinstance(n, ast.Name) and n.id == name  # noqa: E731
    return (is_n(left) and isinstance(op, (ast.Gt, ast.NotEq)) and zero(right)) or \
        (zero(left) and isinstance(op, (ast.Lt, ast.NotEq)) and is_n(right))


@never_raise
def unconditional_masked_writes(ctx, node: ast.Subscript) -> Optional[Fix]:
    attr, call = ctx.parent(), ctx.parent(2)
    if not (isinstance(attr, ast.Attribute) and attr.attr in COUNTS and isinstance(call, ast.Call)
            and call.func is attr and not call.args and not call.keywords):
        return None
    stmt = ctx.statement()
    name = assigned_name(stmt)
    if name is None or stmt.value is not call:
        return None
    nxt = statement_after(ctx, stmt)
    if not (isinstance(nxt, ast.If) and not nxt.orelse and _tests_count(nxt.test, name)):
        return None
    if not _pure(ctx, node.slice) or not isinstance(node.value, (ast.Name, ast.Attribute)):
        return None
    target, mask = ast.dump(node.value), ast.dump(node.slice)
    writes = 0
    for s in nxt.body:
        if isinstance(s, ast.Assign) and len(s.targets) == 1 and isinstance(s.targets[0], ast.Subscript) \
                and ast.dump(s.targets[0].value) == target and ast.dump(s.targets[0].slice) == mask:
            if name in names_read(s.value) or writes < 0:
                return None
            writes += 1
        elif is_warning_call(s) and writes:
            writes = -abs(writes)  # warnings from here on: no write may follow
        else:
            return None
    warnings = [s for s in nxt.body if is_warning_call(s)]
    ft = file_text(ctx)
    span = ft.span(nxt)
    if not writes or not whole_lines(ft, span) or ft.comments_in(span):
        return None
    t = torch_name(ctx)
    if t is None:
        return None
    torch, imports = t
    nl = newline(ctx)
    indent, body_indent = ft.indent_of(nxt.lineno), ft.indent_of(nxt.body[0].lineno)
    if not body_indent.startswith(indent) or len(body_indent) == len(indent):
        return None
    by = len(body_indent) - len(indent)
    lines = []
    for s in nxt.body[:abs(writes)]:
        rows = [ft.line(r) for r in range(s.lineno, s.end_lineno + 1)]
        if any(r.strip() and not r[:len(indent) + by].isspace() for r in rows):
            return None  # a continuation line left of the body's indent
        lines += [r[:len(indent)] + r[len(indent) + by:] for r in rows]
    if warnings:
        test = ft.segment(ft.span(nxt.test))
        lines.append(f"{indent}if not {torch}.compiler.is_compiling() and {test if isinstance(nxt.test, ast.Name) else f'({test})'}:")
        lines += [ft.line(r) for s in warnings for r in range(s.lineno, s.end_lineno + 1)]
    first, last = nxt.lineno, nxt.end_lineno
    edit = Edit(nl.join(lines), Span(first, 1, last, len(ft.line(last)) + 1))
    # the count's own selection stays (it breaks without the setting): the rewrite keeps that finding
    return Fix("unsafe", MESSAGE, imports + (edit,), title="Write through the mask unconditionally", keeps=1)
