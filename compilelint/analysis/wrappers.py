"""A decorator's wrapper: the nested `def` that calls the function it was given.

`@decorator` replaces a function by what the decorator returns. When that is a function the
decorator defines and returns, and which calls the decorated function (`def wrapper(self, *args,
**kwargs): ...; return method(self, *args, **kwargs)`, then `return wrapper`), every call of the
decorated function runs the wrapper's body, and Dynamo traces it, or breaks in it, as it does any
Python function it inlines. A decorator factory (`@cached(name="x")`) nests it one level deeper
(`def cached(name): def decorate(method): def wrapper(...)`), or returns another decorator's
result (`return functools.partial(_cached, name=name)`, `return _cached(method, name)`). A nested
`def` that only receives the function (`def register(obj): REGISTRY.append(obj); return obj`) runs
when the class body runs, never per call. The file analysis records where the wrapper is
(`FunctionInfo.wrapper`); the project pass follows a decorated function's calls into it
(`Project.wrappers`).
"""
from __future__ import annotations

import ast
import functools
from typing import Optional, Tuple

from compilelint.analysis.astutil import FUNCS, walk

# The fields that hold statements, handlers or `case`s: where a `def` or a `return` can be
_BLOCK_FIELDS = ("body", "orelse", "finalbody", "handlers", "cases")


def returned_wrapper(fn: ast.AST) -> Tuple[int, ...]:
    """(first row, last row), counted from `fn`'s row, of a `def` nested in `fn` that the `def`
    around it returns by name and that calls a parameter of that `def`; () when there is none."""
    found = wrapper_def(fn)
    if found is None:
        return ()
    return (found.lineno - fn.lineno, (found.end_lineno or found.lineno) - fn.lineno)


def wrapper_def(outer: ast.AST) -> Optional[ast.AST]:
    """The wrapper `def` nested in `outer` (see `returned_wrapper`), or None."""
    params = {a.arg for a in outer.args.posonlyargs + outer.args.args + outer.args.kwonlyargs}
    nested, returned = _own_defs_and_returns(outer)
    for name in returned:
        inner = nested.get(name)
        if inner is None:
            continue
        if _calls_one_of(inner, params):
            return inner
        deeper = wrapper_def(inner)  # a factory's decorator returning the wrapper
        if deeper is not None:
            return deeper
    return None


def _own_defs_and_returns(fn: ast.AST):
    """The `def`s directly in `fn`'s body (under its `if`s too) by name, and the names it returns."""
    nested, returned = {}, []
    stack = list(fn.body)
    while stack:
        node = stack.pop()
        if isinstance(node, FUNCS):
            nested.setdefault(node.name, node)
            continue  # its statements are its own
        if isinstance(node, (ast.ClassDef, ast.Lambda)):
            continue
        if isinstance(node, ast.Return) and isinstance(node.value, ast.Name):
            returned.append(node.value.id)
        # `def`s and `return`s are statements: an expression never holds one (lambdas aside). In
        # the fields' order, as `ast.iter_child_nodes` gives them: the first `def` of a name is kept
        for field in _block_fields(node.__class__):
            stack.extend(getattr(node, field))
    return nested, returned


@functools.lru_cache(maxsize=None)
def _block_fields(cls) -> tuple:
    """The fields of a node class that hold statements (`_BLOCK_FIELDS`), in its `_fields` order."""
    return tuple(f for f in cls._fields if f in _BLOCK_FIELDS)


def _calls_one_of(fn: ast.AST, names) -> bool:
    """Does `fn`'s body call one of `names` (`method(self, *args, **kwargs)`)?"""
    return any(isinstance(n, ast.Call) and isinstance(n.func, ast.Name) and n.func.id in names
               for stmt in fn.body for n in walk(stmt))
