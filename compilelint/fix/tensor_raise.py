"""`if cond: raise E("msg")` on tensor data → `torch._assert_async(torch.logical_not(cond), "msg")`.

The `if` reads the tensor's value into Python, so Dynamo breaks there ("Data-dependent branching");
`torch._assert_async` keeps the check in the graph (traced without a break on torch 2.13) and
raises `RuntimeError` when its condition is false.

What the source must show (else no fix): the `if` has no `else`/`elif`, its body is the single
`raise E()` / `raise E("message")`, its test is the tensor, `not` the tensor, or `a or b` of
tensors (then `torch.logical_or(a, b)`: bool() of `a or b` on one-element tensors is bool() of
their logical or), each a tensor on every path (fix/paths.py), optionally after Python operands
joined by `and` (`if p and t: raise` is `if p: if t: raise` for any `p`: they stay a Python `if`);
`if not (p and t): raise` is `if not p: raise` then `if not t: raise` (the raise copied as written),
and `if p or t: raise` (Python operands `p` before the tensor) is `if p: raise` then `if t: raise`;
the statement has its lines to itself with no comments inside. An f-string message becomes a plain
string naming its fields (`{expr}` as text): the values are not built on every call.

Eager behaviour that changes (unsafe fix, said in its message): a failed check raises
`RuntimeError` with the same text instead of `E` (an f-string's fields named, not their values);
on CUDA it is reported asynchronously.
"""
from __future__ import annotations

import ast
from typing import Optional

from compilelint.analysis import tensors as T
from compilelint.finding import Edit, Fix
from compilelint.fix._common import expr_text, file_text, never_raise, newline, torch_name, whole_lines
from compilelint.fix.paths import tensor_on_every_path

MESSAGE = ("Check with `torch._assert_async(...)` instead of `if ...: raise`. Eager change: a failed check "
           "raises RuntimeError (not the original exception type), asynchronously on CUDA")
FSTRING = ("; the f-string message becomes a plain string naming its fields (`{expr}` as text, not the "
           "values): building it on every call would cost what the check saves")


@never_raise
def raise_to_assert_async(ctx, node: ast.If, expr: ast.AST) -> Optional[Fix]:
    if node.orelse or len(node.body) != 1 or not isinstance(node.body[0], ast.Raise):
        return None
    guard, check = _split_test(node.test)
    failed_guard = []  # `not (p and t)`: p's failure raises as before, in a Python `if` of its own
    raising_guard = []  # `p or t`: p raises as before, in a Python `if` of its own
    if not guard:
        failed_guard, inner = _split_negated_and(node.test)
        if failed_guard:
            check = ast.copy_location(ast.UnaryOp(op=ast.Not(), operand=inner), node.test)
    if not guard and not failed_guard:
        raising_guard, check = _split_python_or(ctx, node.test)
    operands, negated = _tensor_operands(check)
    if not operands or operands[0] is not expr:  # one fix per statement, on its first tensor
        return None
    if any(ctx.kind(o) != T.BOOL or not tensor_on_every_path(ctx, o) for o in operands):
        return None
    if any(ctx.is_tensor(g) for g in guard + failed_guard + raising_guard):
        return None
    exc = node.body[0].exc
    if node.body[0].cause is not None or not isinstance(exc, ast.Call) or exc.keywords or len(exc.args) > 1:
        return None
    ft = file_text(ctx)
    msg = message_text(ft, exc.args[0]) if exc.args else ""
    if msg is None:
        return None
    span = ft.span(node)
    if not whole_lines(ft, ft.span(node)) or not ft.line(span.row)[span.col - 1:].startswith("if") \
            or ft.comments_in(span):
        return None
    t = torch_name(ctx)
    if t is None:
        return None
    tname, imports = t
    texts = [expr_text(ft, o) for o in operands]
    if len(texts) > 1:  # `a or b` on 0-d bools: bool() of it is bool() of logical_or
        cond = texts[0]
        for text in texts[1:]:
            cond = f"{tname}.logical_or({cond}, {text})"
    else:
        cond = texts[0]
    cond = cond if negated else f"{tname}.logical_not({cond})"
    check_text = f"{tname}._assert_async({cond}{', ' + msg if msg else ''})"
    note = MESSAGE + (FSTRING if isinstance(exc.args[0] if exc.args else None, ast.JoinedStr) else "")
    if guard:  # `if p and t: raise` is `if p: if t: raise`, whatever p is: p stays a Python `if`
        raise_span = ft.span(node.body[0])
        inner = ft.line(raise_span.row)[: raise_span.col - 1]
        head = " and ".join(_one_line(expr_text(ft, g)) for g in guard)
        text = f"if {head}:{newline(ctx)}{inner}{check_text}"
    elif failed_guard or raising_guard:
        raise_span = ft.span(node.body[0])
        raise_rows = [ft.line(r).rstrip("\r\n") for r in range(raise_span.row, raise_span.end_row + 1)]
        if failed_guard:
            header = "if not ({}):".format(" and ".join(_one_line(expr_text(ft, g)) for g in failed_guard))
        else:
            header = "if {}:".format(" or ".join(_one_line(expr_text(ft, g)) for g in raising_guard))
        indent = ft.line(span.row)[: span.col - 1]
        nl = newline(ctx)
        text = nl.join([header, *raise_rows, f"{indent}{check_text}"])
        note += "; the Python operands before the tensor keep their `if ...: raise`"
    else:
        text = check_text
    return Fix("unsafe", note, imports + (Edit(text, span),), title="Check with `torch._assert_async(...)`")


def _split_test(test: ast.AST):
    """`p and q and t` → ([p, q], t): the operands before the last are kept as a Python `if`."""
    if isinstance(test, ast.BoolOp) and isinstance(test.op, ast.And) and len(test.values) > 1:
        return list(test.values[:-1]), test.values[-1]
    return [], test


def _split_negated_and(test: ast.AST):
    """`not (p and q and t)` → ([p, q], t): it raises where p or q fails, else where t does."""
    if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not) and isinstance(test.operand, ast.BoolOp) \
            and isinstance(test.operand.op, ast.And) and len(test.operand.values) > 1:
        return list(test.operand.values[:-1]), test.operand.values[-1]
    return [], None


def _split_python_or(ctx, test: ast.AST):
    """`p or q or t` (p, q not tensors) → ([p, q], t): it raises where p or q holds, else where t does;
    else ([], test)."""
    if isinstance(test, ast.BoolOp) and isinstance(test.op, ast.Or) and len(test.values) > 1:
        head = list(test.values[:-1])
        if head and not any(ctx.is_tensor(v) for v in head):
            return head, test.values[-1]
    return [], test


def _tensor_operands(check: ast.AST):
    """The tensors `check` tests and whether it negates them: `t`, `not t`, `a or b` (each a tensor)."""
    negated = isinstance(check, ast.UnaryOp) and isinstance(check.op, ast.Not)
    if negated:
        check = check.operand
        if isinstance(check, ast.BoolOp):
            return [], False  # `not (a or b)`: left as it is
    if isinstance(check, ast.BoolOp):
        if not isinstance(check.op, ast.Or):
            return [], False
        return list(check.values), False
    return [check], negated


def _one_line(text: str) -> str:
    return f"({text})" if "\n" in text else text


def message_text(ft, arg: ast.AST) -> Optional[str]:
    """The message as source: a string constant as written; an f-string as a plain string that names
    its fields (`{expr}` as text), so nothing is built on every call; else None (no fix)."""
    if isinstance(arg, ast.Constant) and isinstance(arg.value, str):
        return ft.segment(ft.span(arg))
    if isinstance(arg, ast.JoinedStr):
        parts = []
        for value in arg.values:
            if isinstance(value, ast.Constant) and isinstance(value.value, str):
                parts.append(value.value)
            elif isinstance(value, ast.FormattedValue):
                parts.append("{" + ast.unparse(value.value) + "}")
            else:
                return None
        return repr("".join(parts))
    return None
