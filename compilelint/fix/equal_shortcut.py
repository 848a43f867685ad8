"""`torch.equal(a, b)` that picks a path in Python → `(not torch.compiler.is_compiling() and
torch.equal(a, b))`.

Code asks `torch.equal(a, b)` (or `allclose`) to take a shortcut when two tensors are the same: skip a
copy, reuse one side, zero a diagonal it knows is zero. The call reads tensor data into a Python
bool, and Dynamo breaks at it ("Data dependent operator", GB0033); a boolean tensor would break again
at the `if`. The "not equal" side is the general one: it cannot assume anything of the two tensors.
With the compile predicate first, Dynamo folds the test to False and never runs the call: compiled
code takes the general path; eager evaluates the call as before.

Unsafe (said in its message): under compile the shortcut no longer runs, so equal tensors go the
general way: other rounding, maybe slower; `verify --fix` measures both.

What the source must show (else no fix): the bool decides control flow only as a shortcut:
- no `assert`/`while` tests it, and no `if`/ternary testing it raises in either branch (a check
  that raises when the tensors differ would raise on every compiled call);
- bound to a name (`same = torch.equal(a, b)`), the name is read only by tests and call arguments,
  never returned, yielded or stored elsewhere (the False would leave the function as a value).
"""
from __future__ import annotations

import ast
from typing import Optional

from compilelint.finding import Edit, Fix
from compilelint.fix._common import file_text, never_raise, torch_name

MESSAGE = ("Skip the equality shortcut under torch.compile: `not torch.compiler.is_compiling() and "
           "<the call>`. Eager change: none; under compile the call no longer runs and the code takes "
           "the path for unequal tensors also when they are equal (other rounding, maybe slower)")

_REFUSED_TESTS = (ast.Assert, ast.While)
_TESTS = (ast.If, ast.IfExp)


def _raises(node: ast.AST) -> bool:
    return any(isinstance(n, ast.Raise) for n in ast.walk(node))


def _test_is_shortcut(test_owner: ast.AST) -> bool:
    if isinstance(test_owner, _REFUSED_TESTS):
        return False
    if isinstance(test_owner, ast.If):
        return not any(_raises(s) for s in test_owner.body + test_owner.orelse)
    return True  # a ternary


def _name_reads_are_tests(ctx, fn: ast.AST, name: str) -> bool:
    """Every read of `name` in the function is inside an `if`/ternary test or a call's argument."""
    nodes = list(ctx.nodes(fn))
    tested, passed = set(), set()
    for n in nodes:
        if isinstance(n, (*_TESTS, *_REFUSED_TESTS)):
            reads = {id(r) for r in ast.walk(n.test) if isinstance(r, ast.Name) and r.id == name}
            if reads and not _test_is_shortcut(n):
                return False
            tested |= reads
        elif isinstance(n, ast.Call):
            passed |= {id(a) for a in [*n.args, *(k.value for k in n.keywords)]
                       if isinstance(a, ast.Name) and a.id == name}
    reads = [n for n in nodes if isinstance(n, ast.Name) and n.id == name and isinstance(n.ctx, ast.Load)]
    return all(id(r) in tested or id(r) in passed for r in reads)


def _owner_test(ctx, node: ast.Call) -> Optional[ast.AST]:
    """The `if`/`while`/ternary/assert whose test holds the call, if any."""
    stack = ctx.stack
    for parent, child in zip(stack, stack[1:]):
        if isinstance(parent, (*_TESTS, *_REFUSED_TESTS)) and child is parent.test:
            return parent
    return None


@never_raise
def skip_equal_under_compile(ctx, node: ast.Call) -> Optional[Fix]:
    """`node`: a `torch.equal`/`allclose` call (or the method) whose bool decides control flow."""
    owner = _owner_test(ctx, node)
    stmt = ctx.statement()
    if owner is not None:
        if not _test_is_shortcut(owner):
            return None
        bare = owner.test is node
    else:
        fn = ctx.function_node
        if fn is None or not (isinstance(stmt, ast.Assign) and stmt.value is node and len(stmt.targets) == 1
                              and isinstance(stmt.targets[0], ast.Name)):
            return None
        if not _name_reads_are_tests(ctx, fn, stmt.targets[0].id):
            return None
        bare = True
    t = torch_name(ctx)
    if t is None:
        return None
    tname, imports = t
    ft = file_text(ctx)
    span = ft.span(node)
    text = f"not {tname}.compiler.is_compiling() and {ft.segment(span)}"
    return Fix("unsafe", MESSAGE, imports + (Edit(text if bare else f"({text})", span),),
               title="Skip the equality shortcut under compile")
