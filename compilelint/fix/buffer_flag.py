"""`if self.flag:` on a registered buffer that only ever holds a Python value → a plain Python bool
`self._flag_flag` kept beside it, and the `if` reads that.

Reading a buffer's value into Python control flow graph-breaks (Dynamo treats buffers as graph
inputs, so `bool(self.flag)` is data-dependent: GB0170). A Python attribute on the module is
something Dynamo guards on instead: it traces the branch taken and recompiles once when the
attribute flips.

What the source must show (else no fix), all inside the enclosing class:
- `self.register_buffer("flag", torch.tensor(P))` as a statement of `__init__` (P a Python value:
  a constant, a name, `not`, `and`/`or`, a comparison of those; or a one-element list of it,
  `torch.Tensor([P])`: bool() of a one-element tensor is bool() of its element);
- every other write is a statement `self.flag.copy_(torch.tensor(P))`, `self.flag.data.copy_(...)`
  or `self.flag.fill_(P)` in a method of the class;
- every read is truth-tested by an `if` (`if self.flag:`, `if not self.flag and ...:`);
- no other code in the file names the attribute or its string, and the names the fix adds are free.

The fix sets the Python bool after each of those writes (`bool(P)`: what `bool()` of the buffer
would give), and registers a load_state_dict post hook (a method, so the module still pickles) that
reads the buffer once after loading.

Eager behaviour that changes (unsafe fix, said in its message): writes to the buffer from outside
the class (`module.flag.fill_(...)`, `module.flag = ...`) no longer change what the `if` sees.
"""
from __future__ import annotations

import ast
from typing import Dict, List, Optional, Tuple

from compilelint.analysis.astutil import is_self
from compilelint.finding import Edit, Fix, Span
from compilelint.fix._classes import class_node, method_named
from compilelint.fix._common import file_text, never_raise, newline, whole_lines

MESSAGE = ("Read a Python bool `self.{flag}` kept beside the buffer `self.{name}` (set where the class sets "
           "the buffer, refreshed after load_state_dict by `{hook}`); Dynamo guards on it and recompiles "
           "once when it flips. Eager change: writes to the buffer from outside the class "
           "(`module.{name}.fill_(...)`, reassigning it) no longer change what the check sees")

TENSOR_FACTORIES = ("torch.tensor", "torch.as_tensor")
# the legacy constructor: `torch.Tensor(3)` is an uninitialised tensor of 3 elements, so only its
# one-element list form (`torch.Tensor([P])`) holds P
LIST_ONLY_FACTORIES = ("torch.Tensor",)


def _python_value(node: ast.AST) -> bool:
    """An expression that is a Python value whatever the tensors around it: constants, names,
    `not`, `and`/`or` and comparisons of those."""
    if isinstance(node, ast.Constant):
        return type(node.value) in (bool, int, float)
    if isinstance(node, ast.Name):
        return True
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not):
        return _python_value(node.operand)
    if isinstance(node, ast.BoolOp):
        return all(_python_value(v) for v in node.values)
    if isinstance(node, ast.Compare):
        return all(_python_value(v) for v in [node.left, *node.comparators])
    return False


def _factory_value(ctx, node: ast.AST) -> Optional[ast.AST]:
    """P for `torch.tensor(P)`, `torch.tensor([P])` or `torch.Tensor([P])` (a `dtype=`/`device=`
    keyword allowed), else None."""
    if not (isinstance(node, ast.Call) and len(node.args) == 1):
        return None
    factory = ctx.resolve(node.func)
    if factory not in TENSOR_FACTORIES + LIST_ONLY_FACTORIES:
        return None
    if any(k.arg not in ("dtype", "device") for k in node.keywords):
        return None
    value = node.args[0]
    if isinstance(value, (ast.List, ast.Tuple)) and len(value.elts) == 1:
        value = value.elts[0]  # one element: bool() of the tensor is bool() of it
    elif factory in LIST_ONLY_FACTORIES:
        return None
    return value if _python_value(value) else None


def _buffer_attr(node: ast.AST, name: str) -> bool:
    return isinstance(node, ast.Attribute) and node.attr == name and is_self(node.value)


def _write_value(ctx, stmt: ast.stmt, name: str) -> Optional[ast.AST]:
    """P when `stmt` is `self.name.copy_(torch.tensor(P))`, `self.name.data.copy_(...)` or
    `self.name.fill_(P)`."""
    if not (isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call)):
        return None
    call = stmt.value
    f = call.func
    if not isinstance(f, ast.Attribute) or len(call.args) != 1 or call.keywords:
        return None
    target = f.value.value if isinstance(f.value, ast.Attribute) and f.value.attr == "data" else f.value
    if not _buffer_attr(target, name):
        return None
    if f.attr == "fill_":
        return call.args[0] if _python_value(call.args[0]) else None
    if f.attr == "copy_":
        return _factory_value(ctx, call.args[0])
    return None


def _registration(ctx, stmt: ast.stmt, name: str) -> Optional[ast.AST]:
    """P when `stmt` is `self.register_buffer("name", torch.tensor(P)[, persistent=...])`."""
    if not (isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call)):
        return None
    call = stmt.value
    f = call.func
    if not (isinstance(f, ast.Attribute) and f.attr == "register_buffer" and is_self(f.value)):
        return None
    if len(call.args) != 2 or any(k.arg != "persistent" for k in call.keywords):
        return None
    key = call.args[0]
    if not (isinstance(key, ast.Constant) and key.value == name):
        return None
    return _factory_value(ctx, call.args[1])


def _truth_tested(test: ast.AST):
    if isinstance(test, ast.BoolOp):
        for v in test.values:
            yield from _truth_tested(v)
    elif isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
        yield from _truth_tested(test.operand)
    else:
        yield test


def _bool_text(ft, value: ast.AST) -> str:
    text = ft.segment(ft.span(value))
    already_bool = (isinstance(value, ast.Constant) and type(value.value) is bool) or isinstance(value, ast.Compare) \
        or (isinstance(value, ast.UnaryOp) and isinstance(value.op, ast.Not))
    return text if already_bool else f"bool({text})"


@never_raise
def keep_python_flag(ctx, expr: ast.Attribute) -> Optional[Fix]:
    name = expr.attr
    cls_node = class_node(ctx)
    init = method_named(cls_node, "__init__") if cls_node is not None else None
    if init is None:
        return None
    ft = file_text(ctx)
    flag, hook = f"_{name}_flag", f"_sync_{name}_flag"
    if flag in ft.text or hook in ft.text:
        return None
    reads: List[ast.AST] = []
    for n in ast.walk(cls_node):
        if isinstance(n, ast.If):
            reads += [e for e in _truth_tested(n.test) if _buffer_attr(e, name)]
    accounted = {id(r) for r in reads}
    registration: Optional[Tuple[ast.stmt, ast.AST]] = None
    writes: List[Tuple[ast.stmt, ast.AST]] = []
    for stmt in init.body:
        value = _registration(ctx, stmt, name)
        if value is not None:
            if registration is not None:
                return None
            registration = (stmt, value)
    if registration is None:
        return None
    for method in cls_node.body:
        if not isinstance(method, (ast.FunctionDef, ast.AsyncFunctionDef)):
            continue
        for stmt in ast.walk(method):
            if isinstance(stmt, ast.stmt) and stmt is not registration[0]:
                value = _write_value(ctx, stmt, name)
                if value is not None:
                    writes.append((stmt, value))
                    accounted.add(id(stmt.value.func.value))
                    accounted.add(id(getattr(stmt.value.func.value, "value", None)))
    # every other mention of the attribute or its name in the file: another use the fix can't follow
    for n in ast.walk(ctx.fixes.tree):
        if isinstance(n, ast.Attribute) and n.attr == name and id(n) not in accounted:
            return None
        if isinstance(n, ast.Constant) and n.value == name and n is not registration[0].value.args[0]:
            return None
    nl = newline(ctx)
    inserts: Dict[int, List[str]] = {}
    for stmt, value in [registration, *writes]:
        if not whole_lines(ft, ft.span(stmt)):
            return None
        inserts.setdefault(stmt.end_lineno, []).append(
            f"{ft.indent_of(stmt.lineno)}self.{flag} = {_bool_text(ft, value)}")
    reg_stmt = registration[0]
    inserts[reg_stmt.end_lineno].append(
        f"{ft.indent_of(reg_stmt.lineno)}self.register_load_state_dict_post_hook(type(self).{hook})")
    if not whole_lines(ft, ft.span(init.body[-1])):
        return None
    def_indent, body_indent = ft.indent_of(init.lineno), ft.indent_of(init.body[-1].lineno)
    inserts.setdefault(init.end_lineno, []).append(
        f"{nl}{def_indent}def {hook}(self, *_):{nl}{body_indent}self.{flag} = bool(self.{name})")
    edits = []
    for row, lines in sorted(inserts.items()):
        end = len(ft.line(row)) + 1
        edits.append(Edit("".join(nl + line for line in lines), Span(row, end, row, end)))
    edits += [Edit(f"self.{flag}", ft.span(r)) for r in reads]
    edits.sort(key=lambda e: (e.span.row, e.span.col))
    return Fix("unsafe", MESSAGE.format(flag=flag, name=name, hook=hook), tuple(edits),
               title="Keep a Python bool beside the buffer flag")
