"""The project class an annotation names: what a typed parameter or class attribute holds, so
that `config.get_text_config()` resolves to `PreTrainedConfig.get_text_config`."""
from __future__ import annotations

import ast
from typing import Optional

from compilelint.analysis.astutil import is_class_name

NOT_PROJECT = ("torch.", "typing.", "typing_extensions.", "collections.", "numpy.", "builtins.")


def annotation_class(node: Optional[ast.AST], resolve) -> Optional[str]:
    """The one class an annotation names, `None` and string forms allowed (`"Config" | None`,
    `Optional[Config]`): a class outside torch and the builtins, else None."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        try:
            node = ast.parse(node.value, mode="eval").body
        except SyntaxError:
            return None
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.BitOr):
        sides = [annotation_class(n, resolve) for n in (node.left, node.right)
                 if not (isinstance(n, ast.Constant) and n.value is None)]
        return sides[0] if len(sides) == 1 else None
    if isinstance(node, ast.Subscript):
        outer = resolve(node.value) or ""
        if outer in ("typing.Optional", "Optional") or outer.endswith(".Optional"):
            return annotation_class(node.slice, resolve)
        return None
    if not isinstance(node, (ast.Name, ast.Attribute)):
        return None
    name = resolve(node)
    if not name or not is_class_name(name) or name.startswith(NOT_PROJECT):
        return None
    return name
