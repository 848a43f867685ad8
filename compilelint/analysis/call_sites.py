"""Parameter kinds of a module function from its calls in the same file.

A helper like VITS's `_unconstrained_rational_quadratic_spline(inputs, widths, ...)` has untyped
parameters, so on its own nothing in it is known to be a tensor, and `inputs[inside_mask]` says
nothing. When every call of it in its file passes a tensor for a parameter (`spline(second_half,
...)` from a `forward`), the parameter holds a tensor. Bindings are computed once per function and
shared with the walk; a helper called only from helpers is resolved through them (cycles stop).
"""
from __future__ import annotations

import ast
from typing import Dict, List, Optional, Tuple

from compilelint.analysis import tensors as T
from compilelint.analysis.astutil import FUNCS
from compilelint.analysis.bindings import Bindings, function_bindings
from compilelint.analysis.facts import ClassFacts, FileFacts


class CallSites:
    """Bindings of the functions of one file, with module functions' parameters typed by their callers."""

    def __init__(self, facts: FileFacts):
        self.facts = facts
        self._bindings: Dict[int, Bindings] = {}
        self._calls: Optional[Dict[str, List[Tuple[ast.AST, Optional[ClassFacts], ast.Call]]]] = None
        self._busy: set = set()

    def bindings(self, node, cls: Optional[ClassFacts], decorators: List[str]) -> Bindings:
        key = id(node)
        if key not in self._bindings:
            self._busy.add(key)
            sites = self._parameter_kinds(node) if cls is None else {}
            self._bindings[key] = function_bindings(self.facts, node, cls, decorators, sites)
            self._busy.discard(key)
        return self._bindings[key]

    def _callers(self):
        """Module function name → (calling function, its class, the call) for every call by name."""
        if self._calls is None:
            self._calls = {}
            functions = []
            for stmt in self.facts.top:
                if isinstance(stmt, FUNCS):
                    functions.append((stmt, None))
                elif isinstance(stmt, ast.ClassDef) and stmt.name in self.facts.classes:
                    functions += [(m, self.facts.classes[stmt.name]) for m in stmt.body if isinstance(m, FUNCS)]
            defs = self.facts.module_defs
            for fn, cls in functions:
                for sub in self.facts.nodes(fn):
                    if isinstance(sub, ast.Call) and isinstance(sub.func, ast.Name) and sub.func.id in defs:
                        self._calls.setdefault(sub.func.id, []).append((fn, cls, sub))
        return self._calls

    def _parameter_kinds(self, node) -> Dict[str, str]:
        """Parameter → TENSOR/BOOL when every call in the file that passes it passes one."""
        if not any(node is stmt for stmt in self.facts.top):
            return {}  # nested helpers: their calls are the enclosing function's business
        calls = self._callers().get(node.name, [])
        args = node.args
        positional = [a.arg for a in args.posonlyargs + args.args]
        names = set(positional) | {a.arg for a in args.kwonlyargs}
        seen: Dict[str, set] = {}
        for caller, cls, call in calls:
            if id(caller) in self._busy or caller is node:
                return {}  # a cycle: decide nothing
            if any(isinstance(a, ast.Starred) for a in call.args) or any(k.arg is None for k in call.keywords):
                return {}
            inference = self.bindings(caller, cls, self._decorators(caller)).inference
            passed = list(zip(positional, call.args)) + [(k.arg, k.value) for k in call.keywords if k.arg in names]
            for param, value in passed:
                seen.setdefault(param, set()).add(inference.kind(value))
        out = {}
        for param, kinds in seen.items():
            if kinds and kinds <= set(T.TENSORISH):
                out[param] = T.BOOL if kinds == {T.BOOL} else T.TENSOR
        return out

    def _decorators(self, fn) -> List[str]:
        return [d for d in (self.facts.decorator_name(x) for x in fn.decorator_list) if d]
