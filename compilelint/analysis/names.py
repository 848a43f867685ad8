"""Resolving names through imports, so rules match `torch.compile` however it was spelled.

`import torch as T`, `from torch import compile as tc`, `from torch.nn import functional as F`,
`from .layers import rotate_half`: each local name maps to the dotted name it stands for. This is
our own small alias table (ScopeProvider/QualifiedNameProvider cost several parses per file).
"""
from __future__ import annotations

import ast
import builtins
import functools
import os
import sys
from typing import Dict, Optional

BUILTIN_NAMES = frozenset(dir(builtins))
# The dotted names torch.compile goes by (as a call, a decorator, or the legacy optimize()).
COMPILE_FUNCS = frozenset({"torch.compile", "torch.compiler.compile"})
DYNAMO_OPTIMIZE = frozenset({"torch._dynamo.optimize", "torch._dynamo.eval_frame.optimize"})
# torch's base of custom autograd operations (`class Op(torch.autograd.Function)`): `Op.apply(...)`
# runs `Op.forward(ctx, ...)`, which Dynamo traces where `apply` is called.
AUTOGRAD_FUNCTIONS = frozenset({"torch.autograd.Function", "torch.autograd.function.Function"})
# Top-level names of the standard library: never a function of the checked project.
STDLIB = frozenset(getattr(sys, "stdlib_module_names", ())) | {"builtins", "typing", "typing_extensions"}


def module_name_for(path: str) -> str:
    """Dotted module name of a file: its package chain found by walking up `__init__.py` files."""
    directory, filename = os.path.split(os.path.abspath(path))
    stem = os.path.splitext(filename)[0]
    package = _package_of(directory)
    parts = [p for p in (package, "" if stem == "__init__" else stem) if p]
    return ".".join(parts) or stem


@functools.lru_cache(maxsize=None)
def _package_of(directory: str) -> str:
    """The dotted package a folder is (empty outside packages); asked once per folder per run."""
    if not os.path.isfile(os.path.join(directory, "__init__.py")):
        return ""
    parent, name = os.path.split(directory)
    if not name:
        return ""
    outer = _package_of(parent)
    return f"{outer}.{name}" if outer else name


def _absolute(module: str, is_package: bool, level: int, target: Optional[str]) -> str:
    base = module.split(".")
    if not is_package:
        base = base[:-1]
    if level > 1:
        base = base[: len(base) - (level - 1)] if level - 1 <= len(base) else []
    parts = base + ([target] if target else [])
    return ".".join(p for p in parts if p)


class ImportTable:
    """Local name → dotted name, for one module (module-level and function-level imports alike)."""

    def __init__(self, module: str, is_package: bool):
        self.module = module
        self.is_package = is_package
        self.aliases: Dict[str, str] = {}
        self.imported = 0  # imports added: a function's own imports change what names stand for (`resolved`)

    def add_import(self, node: ast.AST) -> None:
        self.imported += 1
        if isinstance(node, ast.Import):
            for a in node.names:
                if a.asname:
                    self.aliases[a.asname] = a.name
                else:
                    top = a.name.split(".")[0]
                    self.aliases[top] = top
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                base = _absolute(self.module, self.is_package, node.level, node.module)
            for a in node.names:
                if a.name == "*":
                    continue
                self.aliases[a.asname or a.name] = f"{base}.{a.name}" if base else a.name

    def resolve(self, node: ast.AST, local_names=frozenset()) -> Optional[str]:
        """The dotted name an expression like `F.relu` or `tc` stands for, or None. A loop down
        the attributes, not a call per level: asked of most names and calls of every file."""
        attrs = []
        while node.__class__ is ast.Attribute:
            attrs.append(node.attr)
            node = node.value
        if node.__class__ is not ast.Name:
            return None
        name = node.id
        if name in local_names:
            return None
        base = self.aliases.get(name)
        if base is None:
            if name not in BUILTIN_NAMES:
                return None
            base = f"builtins.{name}"
        if not attrs:
            return base
        if not base:
            return None
        attrs.append(base)
        return ".".join(reversed(attrs))


def dotted(node: ast.AST) -> Optional[str]:
    """The literal dotted text of `a.b.c` (no resolution), or None."""
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if isinstance(node, ast.Name):
        parts.append(node.id)
        return ".".join(reversed(parts))
    return None
