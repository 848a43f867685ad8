"""Small helpers the rewrites share, on top of `compilelint.fix.builders._common`."""
from __future__ import annotations

import ast
from typing import Dict, Iterable, Optional

from compilelint.finding import Edit, Span
from compilelint.fix.builders._common import never_raise  # noqa: F401  (the rewrites' one import of it)
from compilelint.fix.text import FileText


def parents(root: ast.AST) -> Dict[int, ast.AST]:
    out = {}
    for n in ast.walk(root):
        for c in ast.iter_child_nodes(n):
            out[id(c)] = n
    return out


def whole_lines(ft: FileText, node: ast.stmt) -> bool:
    """The statement has its lines to itself (nothing before it, at most a comment after it)."""
    span = ft.span(node)
    if ft.line(span.row)[: span.col - 1].strip():
        return False
    rest = ft.line(span.end_row)[span.end_col - 1:].strip()
    return not rest or rest.startswith("#")


def delete_lines(ft: FileText, node: ast.stmt) -> Optional[Edit]:
    """An edit removing the statement's lines, or None when they hold anything else."""
    if not whole_lines(ft, node):
        return None
    span = ft.span(node)
    if ft.comments_in(Span(span.row, 1, span.end_row, len(ft.line(span.end_row)) + 1)):
        return None
    if span.end_row >= len(ft.lines):
        return None
    return Edit("", Span(span.row, 1, span.end_row + 1, 1))


def names_loaded(nodes: Iterable[ast.AST]) -> set:
    return {n.id for root in nodes for n in ast.walk(root) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)}


def names_stored(nodes: Iterable[ast.AST]) -> set:
    return {n.id for root in nodes for n in ast.walk(root)
            if isinstance(n, ast.Name) and isinstance(n.ctx, (ast.Store, ast.Del))}


def int_const(node) -> Optional[int]:
    if isinstance(node, ast.Constant) and type(node.value) is int:
        return node.value
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        inner = int_const(node.operand)
        return -inner if inner is not None else None
    return None
