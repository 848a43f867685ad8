"""Module functions a file hands to torch.compile by a call rather than a decorator.

`f = torch.compile(f)`, `opt = torch.compile(f, dynamic=True)`, `torch.compile(f)(x)`,
`torch._dynamo.optimize("eager")(f)`, at module level or inside any function (`main()`): each makes
`f` a compiled entry exactly like `@torch.compile`, so its untyped parameters get the same
tensor inference (bindings.function_bindings).
"""
from __future__ import annotations

import ast
from typing import Callable, List, Optional, Set

from compilelint.analysis.astutil import FUNCS, child_fields, walk
from compilelint.analysis.names import COMPILE_FUNCS, DYNAMO_OPTIMIZE


def _mentions_a_compiler(text: str) -> bool:
    """The word `compile` or `optimize` (`torch.compile`, `from torch import compile`,
    `dynamo.optimize`), other than in `re.compile`, the commonest, which names no compiler.
    Found with `str.find`, not a regular expression: a pattern that starts with either of two
    words is tried at every character of the file."""
    for word in ("compile", "optimize"):
        start = text.find(word)
        while start != -1:
            end = start + len(word)
            if _mentions_at(text, start, end):
                return True
            start = text.find(word, start + 1)
    return False


def _mentions_at(text: str, start: int, end: int) -> bool:
    after = text[end:end + 1]
    if after.isalnum() or after == "_":
        return False  # `compiled`, `compile_fn`: not the word
    before = text[max(0, start - 4):start]
    if before[-1:].isalnum() or before[-1:] == "_":
        return False  # `torch_compile`, `recompile`: not the word
    # not `re.` (`pre.compile` is not `re` either)
    return not before.endswith("re.") or len(before) == 4 and (before[0].isalnum() or before[0] == "_")


def compiled_names(tree: ast.Module, text: str, resolve: Callable[[ast.AST], Optional[str]],
                   nodes: Optional[Callable[[ast.AST], List[ast.AST]]] = None) -> Set[str]:
    """`nodes`: function → all its nodes, the file's shared walk (else `tree` is walked here)."""
    if not _mentions_a_compiler(text):
        return set()  # most files: no walk at all
    out: Set[str] = set()
    for node in walk(tree) if nodes is None else _every_node(tree, nodes):
        if node.__class__ is not ast.Call or not node.args:
            continue
        func = node.func
        compiled = resolve(func) in COMPILE_FUNCS or (
            isinstance(func, ast.Call) and resolve(func.func) in DYNAMO_OPTIMIZE)
        if compiled and isinstance(node.args[0], ast.Name):
            out.add(node.args[0].id)
    return out


def _every_node(tree: ast.AST, nodes: Callable[[ast.AST], List[ast.AST]]) -> List[ast.AST]:
    """Every node under `tree`, a function's taken from `nodes` (walked once for the whole
    analysis, not again here); in no particular order (the answer is a set)."""
    out: List[ast.AST] = []
    todo = [tree]
    while todo:
        node = todo.pop()
        if node.__class__ in _FUNCTION_KINDS:
            out.extend(nodes(node))
            continue
        out.append(node)
        for name in child_fields(node.__class__):
            value = getattr(node, name, None)
            if value.__class__ is list:
                todo.extend(v for v in value if isinstance(v, ast.AST))
            elif isinstance(value, ast.AST):
                todo.append(value)
    return out


_FUNCTION_KINDS = frozenset(FUNCS)
