"""`n = len(torch.unique(t))` then `if n > k: raise RuntimeError(msg)` →
`if torch.compiler.is_compiling(): torch._check(n <= k)` `elif n > k: raise RuntimeError(msg)`.

With `capture_dynamic_output_shape_ops` the data-dependent op is traced and its size becomes an
unbacked symbol; the `if` on a comparison of it then breaks ("Could not guard on data-dependent
expression"). `torch._check` takes the SymBool without reading it: Dynamo records a runtime assert
and the graph goes on. The condition is the comparison inverted (`>` → `<=`, a ternary's sides
each): `not`, or `torch.sym_not` of a plain bool (no setting: "torch.* op returned non-Tensor"),
would break again. The message goes along only when it is a plain string: a closure over a traced
size is a break of its own ("Can't convert torch._check*() message closure"; measured on torch 2.13).
Eager runs the `elif` as written: nothing changes there (safe); compiled, a failed check raises
RuntimeError naming the condition (`_check_value` etc. pick the exception where the message goes),
and an operand that is NaN fails the check where the original did not raise; without the setting
the op itself still breaks.

What the source must show (else no fix): the op's call is the sole argument of `len(...)` (or the
receiver of `.numel()`), assigned alone to a name `n`; the statement after is either
`if <test>: raise E(msg)` or `c = <test>` and then `if c: raise E(msg)`, E one of RuntimeError,
ValueError, TypeError, IndexError, NotImplementedError (`torch._check`, `_check_value`, ... raise
it); the test is one comparison (no chain) of `n` with plain operands (names, attributes, numbers,
arithmetic; no calls, no tensors), or a Python ternary of such comparisons whose condition is no tensor; the `if` has no
`else` and its body is that one `raise` (one argument: a string or an f-string, no cause); the `if`
has its lines to itself with no comments.
"""
from __future__ import annotations

import ast
from typing import Optional

from compilelint.finding import Edit, Fix
from compilelint.fix._common import (
    assigned_name, expr_text, file_text, never_raise, newline, statement_after, torch_name, whole_lines,
)

MESSAGE = ("Check the data-dependent size with `torch._check(<the comparison inverted>)` under "
           "`torch.compiler.is_compiling()`, the `if ...: raise` kept for eager: with "
           "capture_dynamic_output_shape_ops it is a runtime assert in the graph, not a break. Eager change: none; "
           "compiled, a failed check names the condition rather than the message")

# the exception `torch._check*` raises in eager, by the check's name
CHECKS = {"RuntimeError": "_check", "ValueError": "_check_value", "TypeError": "_check_type",
          "IndexError": "_check_index", "NotImplementedError": "_check_not_implemented"}
# a comparison's inverse (`not (a > b)` is `a <= b` for any operands but NaN)
INVERSE = {ast.Lt: ">=", ast.LtE: ">", ast.Gt: "<=", ast.GtE: "<", ast.Eq: "!=", ast.NotEq: "=="}
COMPARISONS = tuple(INVERSE)
OPERAND_NODES = (ast.Name, ast.Constant, ast.Attribute, ast.BinOp, ast.UnaryOp, ast.Load,
                 ast.operator, ast.unaryop)


@never_raise
def size_check(ctx, call: ast.Call) -> Optional[Fix]:
    size = _size_of(ctx, call)
    stmt = ctx.statement()
    name = assigned_name(stmt)
    if size is None or name is None or stmt.value is not size:
        return None
    nxt = statement_after(ctx, stmt)
    if assigned_name(nxt) is not None and _size_test(ctx, nxt.value, name):
        check = statement_after(ctx, nxt)
        if not (isinstance(check, ast.If) and isinstance(check.test, ast.Name) and check.test.id == assigned_name(nxt)):
            return None
    elif isinstance(nxt, ast.If) and _size_test(ctx, nxt.test, name):
        check = nxt
    else:
        return None
    raised = _raised_message(ctx, check)
    if raised is None:
        return None
    checker, msg = raised
    ft = file_text(ctx)
    span = ft.span(check)
    if not whole_lines(ft, span) or not ft.line(span.row)[span.col - 1:].startswith("if") or ft.comments_in(span):
        return None
    t = torch_name(ctx)
    if t is None:
        return None
    tname, imports = t
    holds = _inverted(ft, nxt.value if check is not nxt else check.test)
    if holds is None:
        return None
    message = f", lambda: {ft.segment(ft.span(msg))}" if isinstance(msg, ast.Constant) else ""
    raise_span = ft.span(check.body[0])
    inner = ft.line(raise_span.row)[: raise_span.col - 1]
    nl = newline(ctx)
    text = (f"if {tname}.compiler.is_compiling():{nl}{inner}{tname}.{checker}({holds}{message}){nl}"
            f"{ft.line(span.row)[: span.col - 1]}el{ft.segment(span)}")
    return Fix("safe", MESSAGE, imports + (Edit(text, span),), title="Check the size with `torch._check(...)`",
               keeps=1)  # the op's own finding stays: only the setting traces it


def _inverted(ft, test: ast.AST) -> Optional[str]:
    """The text of `not test` without `not`: each comparison inverted, a ternary's sides each."""
    if isinstance(test, ast.IfExp):
        body, orelse = _inverted(ft, test.body), _inverted(ft, test.orelse)
        if body is None or orelse is None:
            return None
        return f"{body} if {_operand(ft, test.test)} else {orelse}"
    if not (isinstance(test, ast.Compare) and len(test.ops) == 1):
        return None
    return f"{_operand(ft, test.left)} {INVERSE[type(test.ops[0])]} {_operand(ft, test.comparators[0])}"


def _operand(ft, node: ast.AST) -> str:
    text = expr_text(ft, node)
    return text if isinstance(node, (ast.Name, ast.Attribute, ast.Constant, ast.BinOp)) and "\n" not in text \
        else f"({text})"


def _size_of(ctx, call: ast.Call) -> Optional[ast.Call]:
    """`len(call)` or `call.numel()`: the call that reads the op's size, else None."""
    parent = ctx.parent()
    if isinstance(parent, ast.Call) and isinstance(parent.func, ast.Name) and parent.func.id == "len" \
            and parent.args == [call] and not parent.keywords and "len" not in ctx.locals:
        return parent
    if isinstance(parent, ast.Attribute) and parent.attr == "numel" and parent.value is call:
        outer = ctx.parent(2)
        if isinstance(outer, ast.Call) and outer.func is parent and not outer.args and not outer.keywords:
            return outer
    return None


def _size_test(ctx, test: ast.AST, name: str) -> bool:
    """A comparison that reads `name` among plain operands, or a Python ternary of such."""
    if isinstance(test, ast.IfExp):
        return not ctx.is_tensor(test.test) and _plain(ctx, test.test) \
            and _size_test(ctx, test.body, name) and _size_test(ctx, test.orelse, name)
    if not (isinstance(test, ast.Compare) and all(isinstance(op, COMPARISONS) for op in test.ops)):
        return False
    operands = [test.left, *test.comparators]
    reads = {n.id for o in operands for n in ast.walk(o) if isinstance(n, ast.Name)}
    return name in reads and all(_plain(ctx, o) for o in operands)


def _plain(ctx, node: ast.AST) -> bool:
    """Names, attributes, constants and arithmetic, none of them a tensor (no calls: nothing runs)."""
    if isinstance(node, ast.Compare):
        return all(_plain(ctx, o) for o in [node.left, *node.comparators])
    if isinstance(node, ast.BoolOp):
        return False
    return all(isinstance(n, OPERAND_NODES) for n in ast.walk(node)) \
        and not any(ctx.is_tensor(n) for n in ast.walk(node) if isinstance(n, (ast.Name, ast.Attribute)))


def _raised_message(ctx, node: ast.If):
    """(the `torch._check*` raising the same exception, the message) of `if ...: raise E(msg)`, E one of
    CHECKS and msg a string or an f-string; else None."""
    if node.orelse or len(node.body) != 1 or not isinstance(node.body[0], ast.Raise) or node.body[0].cause:
        return None
    exc = node.body[0].exc
    if not (isinstance(exc, ast.Call) and isinstance(exc.func, ast.Name) and exc.func.id in CHECKS
            and exc.func.id not in ctx.locals and len(exc.args) == 1 and not exc.keywords):
        return None
    msg = exc.args[0]
    if isinstance(msg, ast.JoinedStr) or isinstance(msg, ast.Constant) and isinstance(msg.value, str):
        return CHECKS[exc.func.id], msg
    return None
