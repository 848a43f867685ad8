"""CL401: `self.n += 1` on a Python number → a buffer updated in place (unsafe)."""
from __future__ import annotations

import ast
from typing import Optional, Sequence

from compilelint.analysis.astutil import parameter_names
from compilelint.finding import Edit, Fix
from compilelint.fix._classes import class_node, init_constant, is_self_attr, method_named, self_attr_stores
from compilelint.fix._common import expr_text, file_text, int_const, never_raise, torch_name

INPLACE = {ast.Add: "add_", ast.Sub: "sub_", ast.Mult: "mul_", ast.Div: "div_"}


def _module_class(ctx, name: str, depth: int = 0) -> bool:
    info = ctx.fixes.classes.get(name)
    if info is None or depth > 5:
        return False
    for base in info.bases:
        if base in ("torch.nn.Module", "torch.nn.modules.module.Module"):
            return True
        prefix = ctx.fixes.module + "."
        if base.startswith(prefix) and _module_class(ctx, base[len(prefix):], depth + 1):
            return True
    return False


def _super_init_before(init, stmt) -> bool:
    for s in init.body:
        if s is stmt:
            return False
        if isinstance(s, ast.Expr) and isinstance(s.value, ast.Call):
            f = s.value.func
            if isinstance(f, ast.Attribute) and f.attr == "__init__":
                return True
    return False


def _reads_ok(tree: ast.AST, attr: str, sites: Sequence[ast.AST]) -> bool:
    """Every read of `self.<attr>` is an operand of arithmetic (or one of the statements rewritten):
    a 0-d tensor behaves like the number there, unlike in `if`, `range()` or formatting."""
    skip = set()
    for s in sites:
        for n in ast.walk(s):
            skip.add(id(n))
    parents = {}
    for n in ast.walk(tree):
        for c in ast.iter_child_nodes(n):
            parents[id(c)] = n
    for n in ast.walk(tree):
        if is_self_attr(n, attr) and isinstance(n.ctx, ast.Load) and id(n) not in skip:
            p = parents.get(id(n))
            if not (isinstance(p, ast.BinOp) and isinstance(p.op, tuple(INPLACE) + (ast.FloorDiv, ast.Pow))):
                return False
    return True


@never_raise
def buffer_counter(ctx, stmt: ast.AST, attr: str) -> Optional[Fix]:
    """`self.n += 1` (or `self.n = self.n * k`) where `__init__` says `self.n = 0` →
    `self.register_buffer("n", torch.tensor(0), persistent=False)` and `self.n.add_(1)` (unsafe)."""
    if isinstance(stmt, ast.AugAssign):
        op, value = stmt.op, stmt.value
    elif isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.value, ast.BinOp) \
            and is_self_attr(stmt.value.left, attr):
        op, value = stmt.value.op, stmt.value.right
    else:
        return None
    method = INPLACE.get(type(op))
    if method is None or any(is_self_attr(n, attr) for n in ast.walk(value)):
        return None
    found = init_constant(ctx, attr)
    if found is None:
        return None
    init_stmt, number = found
    cls_node = class_node(ctx)
    init = method_named(cls_node, "__init__")
    if not _module_class(ctx, cls_node.name) or not _super_init_before(init, init_stmt):
        return None
    # Other writes would assign a number to a buffer (a TypeError) or fork the value.
    sites = [s for s in self_attr_stores(ctx.fixes.tree, attr) if s is not init_stmt]
    if any(s is not stmt and not _rewritable_site(s, attr) for s in sites):
        return None
    if not _reads_ok(ctx.fixes.tree, attr, sites + [init_stmt]):
        return None
    if type(number) is int:
        if method == "div_" or int_const(value) is None:
            return None  # an integer buffer can't take true division or a float
        tensor = "tensor({})"
    else:
        if not (isinstance(value, ast.Constant) and type(value.value) in (int, float)):
            return None
        tensor = "tensor({}, dtype={}.float64)"
    t = torch_name(ctx)
    if t is None:
        return None
    tname, imports = t
    if tname in _stored_names(init):
        return None
    ft = file_text(ctx)
    keep = [ft.span(value)]
    span = ft.span(stmt)
    if ft.comments_in(span, keep) or ft.comments_in(ft.span(init_stmt)):
        return None
    literal = ft.segment(ft.span(init_stmt.value))
    made = f"{tname}." + tensor.format(literal, tname)
    register = f'self.register_buffer("{attr}", {made}, persistent=False)'
    update = f"self.{attr}.{method}({expr_text(ft, value)})"
    return Fix("unsafe", f"Keep `self.{attr}` in a buffer updated in place (`self.{attr}.{method}(...)`)",
               imports + (Edit(register, ft.span(init_stmt)), Edit(update, span)), title="Keep the counter in a buffer")


def _rewritable_site(s: ast.AST, attr: str) -> bool:
    """Another `self.n += k` elsewhere: on a buffer it updates the tensor in place and still works."""
    return isinstance(s, ast.AugAssign) and is_self_attr(s.target, attr)


def _stored_names(func) -> set:
    names = parameter_names(func.args)
    names |= {n.id for n in ast.walk(func) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)}
    return names
