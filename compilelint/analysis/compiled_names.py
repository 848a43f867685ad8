"""Module functions a file hands to torch.compile by a call rather than a decorator.

`f = torch.compile(f)`, `opt = torch.compile(f, dynamic=True)`, `torch.compile(f)(x)`,
`torch._dynamo.optimize("eager")(f)`, at module level or inside any function (`main()`): each makes
`f` a compiled entry exactly like `@torch.compile`, so its untyped parameters get the same
tensor inference (bindings.function_bindings).
"""
from __future__ import annotations

import ast
import re
from typing import Callable, Optional, Set

from compilelint.analysis.astutil import walk
from compilelint.analysis.names import COMPILE_FUNCS, DYNAMO_OPTIMIZE


# The words `compile` and `optimize` with the name before them: `torch.compile`, `from torch
# import compile`, `dynamo.optimize`; `re.compile(...)`, the commonest, names no compiler.
_MENTION = re.compile(r"(\b\w+\.)?\b(?:compile|optimize)\b")


def compiled_names(tree: ast.Module, text: str, resolve: Callable[[ast.AST], Optional[str]]) -> Set[str]:
    if not any(m.group(1) != "re." for m in _MENTION.finditer(text)):
        return set()  # most files: no walk at all
    out: Set[str] = set()
    for node in walk(tree):
        if node.__class__ is not ast.Call or not node.args:
            continue
        func = node.func
        compiled = resolve(func) in COMPILE_FUNCS or (
            isinstance(func, ast.Call) and resolve(func.func) in DYNAMO_OPTIMIZE)
        if compiled and isinstance(node.args[0], ast.Name):
            out.add(node.args[0].id)
    return out
