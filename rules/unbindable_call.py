import ast
from typing import Dict, Tuple

from compilelint.analysis.passed_args import passed_shape
from compilelint.finding import Span
from compilelint.project_pass import frames as F
from compilelint.rule import ProjectContext, Rule

# Exceptions a handler catches that a call's TypeError ("unexpected keyword argument") is one of.
CATCHES_TYPE_ERROR = frozenset({"TypeError", "Exception", "BaseException"})


def _catches_type_error(handler: ast.ExceptHandler) -> bool:
    kinds = handler.type
    if kinds is None:
        return True  # a bare `except:`
    names = kinds.elts if isinstance(kinds, ast.Tuple) else [kinds]
    return any(isinstance(n, ast.Name) and n.id in CATCHES_TYPE_ERROR for n in names)


def _refusal(fn: ast.AST, npos: int, keywords: Tuple[str, ...]) -> str:
    """Why a bound method `fn` cannot take a call of this shape ("" when it can): the receiver fills
    `self`, so `npos` positional arguments need `npos + 1` positional parameters. A decorated `def`
    is called through what its decorator returns, whose signature the source does not show: ""."""
    if fn.decorator_list:
        return ""
    args = fn.args
    positional = [a.arg for a in args.posonlyargs + args.args]
    by_keyword = {a.arg for a in args.args + args.kwonlyargs}
    if args.kwarg is None:
        for k in keywords:
            if k not in by_keyword:
                return f"keyword `{k}`"
    if args.vararg is None and npos + 1 > len(positional):
        return f"{npos} positional arguments"
    return ""


class UnbindableCall(Rule):
    """
    ## What it does
    Finds a call in a `try` that catches `TypeError` (`try: x = layer(x, lengths=lens) except
    TypeError: x = layer(x)`) whose callee, in compiled code, is a module's `forward` that cannot
    take the arguments given: a keyword it has no parameter for (and no `**kwargs`), or more
    positional arguments than it has.

    ## Why is this bad?
    Eager Python raises `TypeError` and the handler retries. Dynamo cannot inline a function whose
    arguments do not bind: it graph-breaks there ("failed to bind arguments when attempting to
    inline", {gb}), caught or not, and inside the `try` it cannot resume, so the whole frame runs
    eager (measured on torch 2.13: fixtures/precision/unbindable_call.py).

    ## Example
    ```python
    def forward(self, x, lens):
        for layer in self.blocks:  # some blocks' forward take only `x`
            try:
                x = layer(x, lengths=lens)
            except TypeError:
                x = layer(x)
        return x
    ```

    ## Use instead
    Decide which layers take the keyword when the model is built (a list of flags, or
    `inspect.signature(layer.forward).parameters` read in `__init__`), and call each layer with the
    arguments it takes; or give every layer's `forward` the keyword (`lengths=None`).

    ## References
    https://meta-pytorch.github.io/compile-graph-break-site/gb/gb7312.html
    """

    code = "CL220"
    name = "unbindable-call"
    kind = "break"
    triggers = ("except",)
    message = ("a call retried on TypeError reaches a forward that cannot take its arguments: Dynamo graph-breaks "
               "here (\"failed to bind arguments\", {gb}) even when the TypeError is caught; call each module with "
               "the arguments its forward takes, decided when the model is built")
    gb_types = ("failed to bind arguments when attempting to inline",)
    gb_ids = {"2.13": ("GB7312",), "2.11": ("GB7312",)}

    @classmethod
    def function_facts(cls, fn, nodes):
        """The calls inside a `try` whose handlers catch TypeError: {(row from the `def`, col):
        (positional count, keyword names)}; None when there is none. Rows count from the `def` line,
        so an edit above the function (which moves it, not what this says) keeps the facts."""
        out: Dict[Tuple[int, int], Tuple[int, Tuple[str, ...]]] = {}
        for n in nodes:
            if n.__class__ is not ast.Try or not any(map(_catches_type_error, n.handlers)):
                continue
            for stmt in n.body:
                for call in ast.walk(stmt):
                    if isinstance(call, ast.Call) and (shape := passed_shape(call, None)) is not None:
                        out[call.lineno - fn.lineno, call.col_offset + 1] = shape
        return out or None

    @classmethod
    def check_project(cls, project: ProjectContext):
        hits: Dict[tuple, tuple] = {}  # (caller, row, col) → (its summary, qualname, callee, why)
        for mode in F.MODES:
            for fid, edges in project.frames(mode).edges.items():
                calls = project.facts(cls, fid)
                if not calls:
                    continue
                summary, info = project.function(fid)
                for callee, call in edges:
                    shape = calls.get((call.row - info.row, call.col))
                    if shape is None or call.kind not in ("attr", "self") or (fid, call.row, call.col) in hits:
                        continue  # a bound method (a submodule's forward, an own method): the receiver fills `self`
                    found = project.function(callee)
                    node = found and project.trees.function(found[0].path, found[1].row)
                    why = _refusal(node, *shape) if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) else ""
                    if why:
                        hits[fid, call.row, call.col] = (summary, info.qualname, found[1].qualname, why)
        for (fid, row, col), (summary, qualname, callee, why) in sorted(hits.items(), key=lambda kv: kv[0][1:]):
            message = (f"this call, retried on TypeError, reaches `{callee}`, which cannot take {why}: Dynamo "
                       f"graph-breaks here (\"failed to bind arguments\", {{gb}}) even when the TypeError is caught; "
                       f"call each module with the arguments its forward takes, decided when the model is built")
            project.report(cls, summary, qualname, Span(row, col, row, col), message, project.region(fid))

    INVALID = [
        """
import torch
from torch import nn

class Scale(nn.Module):
    def forward(self, x):
        return x * 2

class Masked(nn.Module):
    def forward(self, x, lengths=None):
        return x if lengths is None else x * lengths[:, None]

class Stack(nn.Module):
    def __init__(self):
        super().__init__()
        self.blocks = nn.ModuleList([Scale(), Masked()])

    def forward(self, x, lens):
        for layer in self.blocks:
            try:
                x = layer(x, lengths=lens)  # <-
            except TypeError:
                x = layer(x)
        return x
""",
    ]
    VALID = [
        """
import torch
from torch import nn

class Loose(nn.Module):
    def forward(self, x, **kwargs):
        return x + 1

class Masked(nn.Module):
    def forward(self, x, lengths=None):
        return x if lengths is None else x * lengths[:, None]

class Stack(nn.Module):
    def __init__(self):
        super().__init__()
        self.blocks = nn.ModuleList([Loose(), Masked()])

    def forward(self, x, lens):
        for layer in self.blocks:
            try:
                x = layer(x, lengths=lens)  # every forward takes `lengths`
            except TypeError:
                x = layer(x)
        return x
""",
    ]
