"""`n = len(torch.unique(t))` then `if n > k: raise RuntimeError(msg)` →
`torch._check(torch.sym_not(n > k), lambda: msg)` (a constant message), or, when the message has
fields, `if torch.compiler.is_compiling(): torch._check(torch.sym_not(n > k))` `elif n > k: raise ...`
as written (Dynamo cannot read a message closure over a traced size: "Can't convert torch._check*()
message closure", a break of its own; measured on torch 2.13).

With `capture_dynamic_output_shape_ops` the data-dependent op is traced and its size becomes an
unbacked symbol; the `if` on a comparison of it then breaks ("Could not guard on data-dependent
expression"). `torch._check` takes a SymBool without reading it: Dynamo records a runtime assert and
the graph goes on. Eager, `torch._check(cond, f)` raises `RuntimeError(str(f()))` when `cond` is
False (`_check_value` ValueError, ...): the same exception with the same text, its message built
only on failure, as before. So the fix changes nothing in eager (safe); compiled, a failed check names its condition, not the message;
without the setting the op itself still breaks.

What the source must show (else no fix): the op's call is the sole argument of `len(...)` (or the
receiver of `.numel()`), assigned alone to a name `n`; the statement after is either
`if <test>: raise E(msg)` or `c = <test>` and then `if c: raise E(msg)`, E one of RuntimeError,
ValueError, TypeError, IndexError, NotImplementedError (`torch._check`, `_check_value`, ... raise
it); the test is a comparison of `n` with plain operands (names, attributes, numbers, arithmetic; no calls,
no tensors), or a Python ternary of such comparisons whose condition is no tensor; the `if` has no
`else` and its body is that one `raise` (one argument: a string or an f-string, no cause); the `if`
has its lines to itself with no comments.
"""
from __future__ import annotations

import ast
from typing import Optional

from compilelint.finding import Edit, Fix
from compilelint.fix._common import (
    expr_text, file_text, never_raise, newline, statement_after, torch_name, whole_lines,
)

MESSAGE = ("Check the data-dependent size with `torch._check(torch.sym_not(...))` instead of "
           "`if ...: raise E(msg)` (under `torch.compiler.is_compiling()` when the message has fields): "
           "with capture_dynamic_output_shape_ops it is a runtime assert in the graph, not a break. Eager change: "
           "none (the same exception and message); compiled, a failed check names the condition instead")

# the exception `torch._check*` raises in eager, by the check's name
CHECKS = {"RuntimeError": "_check", "ValueError": "_check_value", "TypeError": "_check_type",
          "IndexError": "_check_index", "NotImplementedError": "_check_not_implemented"}
COMPARISONS = (ast.Lt, ast.LtE, ast.Gt, ast.GtE, ast.Eq, ast.NotEq)
OPERAND_NODES = (ast.Name, ast.Constant, ast.Attribute, ast.BinOp, ast.UnaryOp, ast.Load,
                 ast.operator, ast.unaryop)


@never_raise
def size_check(ctx, call: ast.Call) -> Optional[Fix]:
    size = _size_of(ctx, call)
    stmt = ctx.statement()
    if size is None or not (isinstance(stmt, ast.Assign) and stmt.value is size and len(stmt.targets) == 1
                            and isinstance(stmt.targets[0], ast.Name)):
        return None
    name = stmt.targets[0].id
    nxt = statement_after(ctx, stmt)
    if isinstance(nxt, ast.Assign) and len(nxt.targets) == 1 and isinstance(nxt.targets[0], ast.Name) \
            and _size_test(ctx, nxt.value, name):
        check = statement_after(ctx, nxt)
        if not (isinstance(check, ast.If) and isinstance(check.test, ast.Name) and check.test.id == nxt.targets[0].id):
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
    test = expr_text(ft, check.test)
    if "\n" in test:
        test = f"({test})"
    assert_text = f"{tname}.{checker}({tname}.sym_not({test})"
    if isinstance(msg, ast.Constant):  # no fields: the message closure is a constant Dynamo can read
        text = f"{assert_text}, lambda: {ft.segment(ft.span(msg))})"
    else:  # fields (sizes among them) Dynamo cannot read in a message: eager keeps the raise as written
        raise_span = ft.span(check.body[0])
        inner = ft.line(raise_span.row)[: raise_span.col - 1]
        nl = newline(ctx)
        text = (f"if {tname}.compiler.is_compiling():{nl}{inner}{assert_text}){nl}"
                f"{ft.line(span.row)[: span.col - 1]}el{ft.segment(span)}")
    return Fix("safe", MESSAGE, imports + (Edit(text, span),), title="Check the size with `torch._check(...)`",
               keeps=1)  # the op's own finding stays: only the setting traces it


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
