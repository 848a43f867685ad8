import ast

from compilelint.analysis.facts import BUILTIN_GENERICS
from compilelint.fix import builder
from compilelint.rule import Rule

quote_cast_type = builder("cast_string", "quote_cast_type")


class GenericAliasSubscript(Rule):
    """
    ## What it does
    Finds a builtin type subscripted with a module-level type alias inside compiled code:
    `cast(list[Detail], xs)` where the module says `Detail = dict[str, Tensor]` (or
    `Detail: TypeAlias = tuple[Tensor, Tensor]`).

    ## Why is this bad?
    `dict[str, Tensor]` is a `types.GenericAlias`, which Dynamo holds as a user object, not a
    constant; subscripting `list`, `dict`, `tuple`, `set`, `frozenset` or `type` with one
    graph-breaks. Measured on torch 2.13 ("missing_mp_subscript", GB4880:
    bench/measure/snippets_generic_alias.py) and on torch 2.11 in the truth corpus ("Unsupported
    method call", GB0156: "Dynamo does not know how to trace method `__getitem__` of class
    `type`", then the frame skipped). The same subscript written inline (`list[dict[str,
    Tensor]]`), over a class (`list[Tensor]`) or over a `typing` alias (`Dict[str, Tensor]`)
    traces. Annotations of locals and parameters are never evaluated, so they are not flagged.

    ## Example
    ```python
    Detail = dict[str, torch.Tensor]

    def merge(parts):
        out = [p["x"] * 2 for p in parts]
        return cast(list[Detail], out)
    ```

    ## Use instead
    Give `typing.cast` the type as a string (`cast("list[Detail]", out)`: nothing is subscripted
    at run time), or write the subscript inline.

    ## Fix safety
    Safe, offered where the subscript is in the type given to `typing.cast` (written on one line,
    names, subscripts and `|` only) → the type as a string: `cast` returns its value unchanged and
    never reads the type, so eager computes the same (fix/cast_string.py).

    ## References
    https://meta-pytorch.github.io/compile-graph-break-site/gb/gb4880.html
    """

    code = "CL222"
    name = "generic-alias-subscript"
    triggers = ("list[", "dict[", "tuple[", "set[", "frozenset[", "type[")
    message = ("subscripting a builtin type with a module-level type alias graph-breaks ({gb}): Dynamo holds the "
               "alias (a types.GenericAlias) as an object; write the type as a string (`cast(\"list[Alias]\", x)`) "
               "or the subscript inline")
    gb_types = ("missing_mp_subscript", "Unsupported method call")
    gb_ids = {"2.13": ("GB4880",), "2.11": ("GB0156",)}
    fix = "sometimes"  # safe: the type given to typing.cast written as a string (fix/cast_string.py)

    def __init__(self, ctx):
        super().__init__(ctx)
        self.reported = []  # where the statements already reported start, in the function being walked

    def visit_FunctionDef(self, node):
        self.reported = []

    visit_AsyncFunctionDef = visit_FunctionDef

    def visit_Subscript(self, node: ast.Subscript):
        if not isinstance(node.ctx, ast.Load) or self.ctx.function is None:
            return
        if self.ctx.resolve(node.value) not in BUILTIN_GENERICS:
            return
        index = node.slice.elts if isinstance(node.slice, ast.Tuple) else [node.slice]
        if not any(isinstance(item, ast.Name) and self.ctx.is_type_alias(item.id) for item in index):
            return
        statement = self.ctx.statement()
        where = (statement.lineno, statement.col_offset) if statement is not None else (node.lineno, node.col_offset)
        if self._in_annotation() or where in self.reported:
            return
        self.reported.append(where)  # one break per statement: Dynamo stops at its first subscript
        self.report(node, fix=quote_cast_type(self.ctx, node))

    def _in_annotation(self) -> bool:
        """Inside an annotation, which a function's body never evaluates (locals', PEP 526) or
        evaluates at `def` time, outside the compiled call (parameters', the return's)."""
        stack = self.ctx.stack
        for parent, child in zip(stack, stack[1:]):
            if isinstance(parent, ast.AnnAssign) and child is parent.annotation:
                return True
            if isinstance(parent, ast.arg) and child is parent.annotation:
                return True
            if isinstance(parent, (ast.FunctionDef, ast.AsyncFunctionDef)) and child is parent.returns:
                return True
        return False

    INVALID = [
        """
from typing import Union, cast

import torch
from torch import nn

Detail = dict[str, torch.Tensor]
Pair: "TypeAlias" = tuple[torch.Tensor, torch.Tensor]


class Merge(nn.Module):
    def forward(self, parts):
        out = [p["x"] * 2 for p in parts]
        first = cast(list[Detail], out)  # <-
        return cast(Union[list[Detail], list[Pair]], first)  # <-
""",
    ]
    VALID = [
        """
from typing import Dict, cast

import torch
from torch import nn

Detail = dict[str, torch.Tensor]
Typed = Dict[str, torch.Tensor]


class Merge(nn.Module):
    def forward(self, parts: list[Detail]) -> list[Detail]:
        out = [p["x"] * 2 for p in parts]
        a = cast(list[torch.Tensor], out)  # over a class
        b = cast(list[dict[str, torch.Tensor]], out)  # written inline
        c = cast(list[Typed], out)  # over a typing alias
        d = cast("list[Detail]", out)  # a string is never subscripted
        e: list[Detail] = out  # a local's annotation is never evaluated
        return [a, b, c, d, e]


class Rebound(nn.Module):
    def forward(self, parts):
        Detail = int
        return cast(list[Detail], parts)
""",
    ]

    # (before, after `--fix`): what the fix does; tests/test_fix.py runs them.
    FIXES = [
        (
            """
from typing import cast

import torch
from torch import nn

Detail = dict[str, torch.Tensor]


class Merge(nn.Module):
    def forward(self, parts):
        return cast(list[Detail], [{"x": p["x"] * 2} for p in parts])
""",
            """
from typing import cast

import torch
from torch import nn

Detail = dict[str, torch.Tensor]


class Merge(nn.Module):
    def forward(self, parts):
        return cast("list[Detail]", [{"x": p["x"] * 2} for p in parts])
""",
        ),
    ]
