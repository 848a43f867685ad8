"""CL206: a COO tensor that the next statement densifies under a flag → built dense on that path.

    x = torch.sparse_coo_tensor(indices, values, size)
    if dense:
        x = x.to_dense()
        ...
becomes
    if dense:
        x = values
        x = x.new_zeros(size).index_put_(tuple(indices), x, accumulate=True)
        ...
    else:
        x = torch.sparse_coo_tensor(indices, values, size)

Dynamo skips `torch.sparse_coo_tensor` (a graph break) and skips the frame where its sparse result is
used; the dense path then never builds a sparse tensor. `to_dense()` sums the values of an index
given more than once, as `index_put_(..., accumulate=True)` does.

Unsafe (said in its message): floating-point values of a repeated index may be summed in another
order (equal to rounding); the values, the size and the indices are evaluated after the flag, in
that order, instead of before it. What the source must show (else no fix): the constructor's three
arguments given by position, the values and the indices tensors, the assignment to a plain name on
lines of its own, directly followed by an `if` with no `else` whose first statement is
`x = x.to_dense()` and whose test does not read `x`; no comment in the moved lines outside the
arguments.
"""
from __future__ import annotations

import ast
from typing import Optional

from compilelint.finding import Edit, Fix, Span
from compilelint.fix._common import assigned_name, expr_text, file_text, names_read, never_raise, newline, statement_after, whole_lines

MESSAGE = ("Build the dense tensor directly where it is densified: `x.new_zeros(size).index_put_(tuple(indices), "
           "values, accumulate=True)`, the sparse one only on the other path (a repeated index's float values may "
           "sum in another order)")


def _densifies(stmt: ast.stmt, name: str) -> bool:
    """`name = name.to_dense()`."""
    if assigned_name(stmt) != name:
        return False
    v = stmt.value
    return (isinstance(v, ast.Call) and not v.args and not v.keywords
            and isinstance(v.func, ast.Attribute) and v.func.attr == "to_dense"
            and isinstance(v.func.value, ast.Name) and v.func.value.id == name)


@never_raise
def dense_where_densified(ctx, call: ast.Call) -> Optional[Fix]:
    if len(call.args) != 3 or call.keywords or any(isinstance(a, ast.Starred) for a in call.args):
        return None
    indices, values, size = call.args
    if not (ctx.is_tensor(indices) and ctx.is_tensor(values)):
        return None
    assign = ctx.statement()
    name = assigned_name(assign)
    if name is None or assign.value is not call:
        return None
    branch = statement_after(ctx, assign)
    if not (isinstance(branch, ast.If) and not branch.orelse and _densifies(branch.body[0], name)):
        return None
    if name in names_read(branch.test):
        return None
    ft = file_text(ctx)
    a_span, if_span, first = ft.span(assign), ft.span(branch), ft.span(branch.body[0])
    if not whole_lines(ft, a_span) or not ft.line(if_span.row)[if_span.col - 1:].startswith("if"):
        return None
    if first.row <= branch.test.end_lineno:
        return None  # `if c: x = x.to_dense()` on one line
    if ft.comments_in(a_span, [ft.span(a) for a in call.args]) or ft.comments_in(first):
        return None
    nl = newline(ctx)
    indent = ft.line(a_span.row)[: a_span.col - 1]
    inner = ft.line(first.row)[: first.col - 1]
    if not inner.startswith(indent) or len(inner) <= len(indent):
        return None
    # The `if` header as written (its comment kept), up to its first statement.
    header = ft.segment(Span(if_span.row, if_span.col, first.row, first.col))
    shape = ft.segment(ft.span(size))
    if not (isinstance(size, ast.Tuple) and shape.startswith("(")):
        shape = expr_text(ft, size)  # a tuple written with its parentheses keeps them, once
    dense = (f"{name} = {expr_text(ft, values)}{nl}{inner}"
             f"{name} = {name}.new_zeros({shape}).index_put_(tuple({expr_text(ft, indices)}), "
             f"{name}, accumulate=True)")
    # The sparse construction moves under `else:`, one level deeper (its continuation lines too).
    rows = ft.segment(a_span).split(nl)
    moved = nl.join([rows[0]] + [inner[len(indent):] + r if r.strip() else r for r in rows[1:]])
    last = branch.body[-1].end_lineno
    end = Span(last, len(ft.line(last).rstrip("\r\n")) + 1, last, len(ft.line(last).rstrip("\r\n")) + 1)
    edits = (Edit(header + dense, Span(a_span.row, a_span.col, first.end_row, first.end_col)),
             Edit(f"{nl}{indent}else:{nl}{inner}{moved}", end))
    # The sparse path keeps its two findings (the constructor, and the use of its result after the `if`).
    return Fix("unsafe", MESSAGE, edits, title="Build the dense tensor directly", keeps=1)
