"""The enclosing class as builders need it: its `def` node, its methods, and the statements
that bind `self.<attr>` (for fixes that rewrite an attribute's initial value)."""
from __future__ import annotations

import ast
from typing import List, Optional, Tuple

from compilelint.analysis.astutil import self_attr
from compilelint.rule import RuleContext

def class_node(ctx: RuleContext) -> Optional[ast.ClassDef]:
    cls = ctx.cls
    if cls is None:
        return None
    for stmt in ctx.fixes.tree.body:
        if isinstance(stmt, ast.ClassDef) and stmt.name == cls.info.qualname:
            return stmt
    return None


def method_named(cls_node: ast.ClassDef, name: str):
    for m in cls_node.body:
        if isinstance(m, (ast.FunctionDef, ast.AsyncFunctionDef)) and m.name == name:
            return m
    return None


def is_self_attr(node, attr: Optional[str] = None) -> bool:
    name = self_attr(node)
    return name is not None and (attr is None or name == attr)


def self_attr_stores(tree: ast.AST, attr: str) -> List[ast.AST]:
    """Statements anywhere in the module that bind `self.<attr>` (assignments, augmented, deletes)."""
    out = []
    for n in ast.walk(tree):
        if isinstance(n, (ast.Assign, ast.AugAssign, ast.AnnAssign, ast.Delete)):
            targets = n.targets if isinstance(n, (ast.Assign, ast.Delete)) else [n.target]
            for t in targets:
                if any(is_self_attr(x, attr) for x in ast.walk(t)):
                    out.append(n)
                    break
        elif isinstance(n, ast.Call) and isinstance(n.func, ast.Name) and n.func.id in ("setattr", "delattr"):
            out.append(n)  # dynamic attribute writes: can't tell what they touch
    return out


def init_constant(ctx: RuleContext, attr: str) -> Optional[Tuple[ast.Assign, object]]:
    """The single `self.<attr> = <number>` statement at the top level of this class's `__init__`,
    when nothing else in the module binds `self.<attr>` (which would make it a different value)."""
    cls_node = class_node(ctx)
    if cls_node is None:
        return None
    init = method_named(cls_node, "__init__")
    if init is None:
        return None
    found = None
    for stmt in init.body:
        if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and is_self_attr(stmt.targets[0], attr):
            value = stmt.value
            if isinstance(value, ast.Constant) and type(value.value) in (int, float):
                if found is not None:
                    return None
                found = (stmt, value.value)
    if found is None:
        return None
    return found
