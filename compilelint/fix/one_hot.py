"""CL303: `F.one_hot(x)` → `F.one_hot(x, num_classes=K)` where K follows from how `x` was made."""
from __future__ import annotations

import ast
from typing import Optional, Tuple

from compilelint.analysis.astutil import parameter_names
from compilelint.finding import Edit, Fix, Span
from compilelint.fix._classes import init_constant, is_self_attr, self_attr_stores
from compilelint.fix._common import file_text, in_fstring, int_const, module_level, never_raise

def _class_count(ctx, node: ast.AST) -> Optional[str]:
    """Source text for a class count that is a known int: a literal, a module-level int constant, or
    `self.<attr>` bound once, to an int constant, in `__init__`."""
    if int_const(node) is not None and node.value > 0:
        return str(node.value)
    if isinstance(node, ast.Name) and ctx.is_global_number(node.id):
        for stmt in module_level(ctx):
            if isinstance(stmt, ast.Assign) and any(isinstance(t, ast.Name) and t.id == node.id for t in stmt.targets):
                if int_const(stmt.value) is None or stmt.value.value <= 0:
                    return None
        return node.id
    if is_self_attr(node):
        found = init_constant(ctx, node.attr)
        if found is None or type(found[1]) is not int or found[1] <= 0:
            return None
        if len(self_attr_stores(ctx.fixes.tree, node.attr)) != 1:
            return None
        return f"self.{node.attr}"
    return None


def _single_binding(ctx, name: str, before: ast.AST) -> Optional[ast.AST]:
    """The value of the only assignment to local `name` in this function, when it comes before `before`."""
    func = ctx.function_node
    if func is None:
        return None
    if name in parameter_names(func.args):
        return None
    found = []
    for n in ast.walk(func):
        if isinstance(n, ast.Name) and n.id == name and isinstance(n.ctx, (ast.Store, ast.Del)):
            found.append(n)
    if len(found) != 1:
        return None
    for n in ast.walk(func):
        if isinstance(n, ast.Assign) and len(n.targets) == 1 and n.targets[0] is found[0]:
            if (n.end_lineno, n.end_col_offset) <= (before.lineno, before.col_offset):
                return n.value
    return None


def _one_hot_classes(ctx, x: ast.AST) -> Optional[Tuple[str, str]]:
    """(class count text, "safe" | "unsafe") for the indices `x`, or None.

    safe: `torch.arange(K)` — the width `x.max() + 1` is exactly K.
    unsafe: `e % K` and `torch.randint(K, ...)` / `torch.randint(0, K, ...)` — every index is below
    K, so num_classes=K is right for every value, but the eager width (max + 1) may have been smaller.
    """
    if isinstance(x, ast.Name):
        bound = _single_binding(ctx, x.id, x)
        if bound is None:
            return None
        x = bound
    if isinstance(x, ast.BinOp) and isinstance(x.op, ast.Mod):
        k = _class_count(ctx, x.right)
        return (k, "unsafe") if k else None
    if isinstance(x, ast.Call) and all(k.arg in ("device", "dtype", "generator", "requires_grad")
                                       for k in x.keywords):
        name = ctx.resolve(x.func)
        args = x.args
        if name == "torch.arange" and len(args) == 1 and not any(k.arg == "dtype" for k in x.keywords):
            k = _class_count(ctx, args[0])
            return (k, "safe") if k else None
        if name == "torch.arange" and len(args) == 2 and int_const(args[0]) == 0:
            k = _class_count(ctx, args[1])
            return (k, "safe") if k else None
        if name == "torch.randint" and len(args) == 2:  # randint(high, size)
            k = _class_count(ctx, args[0])
            return (k, "unsafe") if k else None
        if name == "torch.randint" and len(args) == 3 and int_const(args[0]) == 0:  # randint(0, high, size)
            k = _class_count(ctx, args[1])
            return (k, "unsafe") if k else None
    return None


@never_raise
def one_hot_num_classes(ctx, call: ast.Call) -> Optional[Fix]:
    """`F.one_hot(x)` → `F.one_hot(x, num_classes=K)` where K follows from how `x` was made."""
    if not call.args or isinstance(call.args[0], ast.Starred) or in_fstring(ctx):
        return None
    if any(k.arg is None for k in call.keywords):
        return None
    found = _one_hot_classes(ctx, call.args[0])
    if found is None:
        return None
    k, applicability = found
    ft = file_text(ctx)
    message = f"Pass `num_classes={k}`"
    title = message if len(k) <= 24 else "Pass `num_classes`"  # a long expression: the edit shows it
    if len(call.args) > 1:
        return Fix(applicability, message, (Edit(k, ft.span(call.args[1])),), title=title)
    for kw in call.keywords:
        if kw.arg == "num_classes":
            return Fix(applicability, message, (Edit(k, ft.span(kw.value)),), title=title)
    end = ft.span(call.args[0])
    return Fix(applicability, message, (Edit(f", num_classes={k}", Span(end.end_row, end.end_col, end.end_row, end.end_col)),),
               title=title)
