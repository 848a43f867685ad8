"""A base's property read through `super()` in the property that overrides it, and where Dynamo
first breaks on the value it gives.

`@property def mean(self): m = super().mean; return m.view(shape)`: Dynamo does not run the base's
getter for `super().mean`; it keeps the read as an unresolved attribute, and the first thing done
with it that needs its value graph-breaks there: a method call on it (`m.view(...)`, "Unsupported
method call"), a comparison of it or of its attribute (`m.dtype == torch.float`, "Unresolved
GetAttrVariable comparison"; torch 2.11: "Builtin `operator.*` comparison with constant `self`
failed"). Reading its attribute alone does not break (measured: fixtures/precision/super_property_read.py).
Only the first such use on a path is a break site: Dynamo skips the rest of the frame there. A use
that hands it on (an argument, a return, arithmetic) may break elsewhere or not at all: it is no
site here, but the uses after it are not first any more.
"""
from __future__ import annotations

import ast
import weakref
from typing import Dict, List, Tuple

# function node → {id(node): (kind, the property's name)} for the uses that break
_SITES: "weakref.WeakKeyDictionary[ast.AST, Dict[int, Tuple[str, str]]]" = weakref.WeakKeyDictionary()


def _is_property(fn: ast.AST) -> bool:
    return any(isinstance(d, ast.Name) and d.id == "property" for d in getattr(fn, "decorator_list", ()))


def _super_read(node: ast.AST, name: str) -> bool:
    """`super().<name>` (an attribute of a bare `super()` call)."""
    return isinstance(node, ast.Attribute) and node.attr == name and isinstance(node.value, ast.Call) and \
        isinstance(node.value.func, ast.Name) and node.value.func.id == "super" and not node.value.args


def breaking_uses(fn: ast.AST) -> Dict[int, Tuple[str, str]]:
    """id(node) → ("method" | "compare", the property) for each first use that breaks, in a property
    overriding its base's (`@property def mean(self)` reading `super().mean`)."""
    found = _SITES.get(fn)
    if found is None:
        found = _SITES[fn] = _breaking_uses(fn) if _is_property(fn) else {}
    return found


def _breaking_uses(fn: ast.AST) -> Dict[int, Tuple[str, str]]:
    name = fn.name
    place = _places(fn)
    parents = {id(child): node for node in ast.walk(fn) for child in ast.iter_child_nodes(node)}

    def statement(node: ast.AST) -> ast.AST:
        while id(node) not in place and id(node) in parents:
            node = parents[id(node)]
        return node

    out: Dict[int, Tuple[str, str]] = {}
    earlier: List[Tuple[Tuple[int, int], ...]] = []
    for node, kind in _uses(fn, name, _bound_once(fn, name), parents):
        path = place.get(id(statement(node)), ())
        if not any(_before(p, path) for p in earlier):
            if kind != "handed":
                out[id(node)] = (kind, name)
            earlier.append(path)
    return out


def _places(fn: ast.AST) -> Dict[int, Tuple[Tuple[int, int], ...]]:
    """id(stmt) → ((id(block), index), ...): where each statement lies, from the body down."""
    place: Dict[int, Tuple[Tuple[int, int], ...]] = {}

    def index(stmts: List[ast.stmt], path: Tuple[Tuple[int, int], ...]):
        for i, stmt in enumerate(stmts):
            here = path + ((id(stmts), i),)
            place[id(stmt)] = here
            for field in ("body", "orelse", "finalbody"):
                block = getattr(stmt, field, None)
                if isinstance(block, list) and block and isinstance(block[0], ast.stmt):
                    index(block, here)
            for handler in getattr(stmt, "handlers", ()):
                index(handler.body, here)

    index(fn.body, ())
    return place


def _bound_once(fn: ast.AST, name: str) -> set:
    """The locals bound once in the function, to the base's property: `m = super().mean`."""
    bound: Dict[str, int] = {}
    for node in ast.walk(fn):
        if isinstance(node, (ast.Assign, ast.AnnAssign, ast.AugAssign, ast.NamedExpr, ast.For, ast.withitem)):
            plain = isinstance(node, ast.Assign) and _super_read(node.value, name)
            targets = node.targets if isinstance(node, ast.Assign) else \
                [node.optional_vars] if isinstance(node, ast.withitem) else [node.target]
            for t in targets:
                for n in ast.walk(t) if t is not None else ():
                    if isinstance(n, ast.Name):
                        bound[n.id] = bound.get(n.id, 0) + (1 if plain else 2)
    return {n for n, count in bound.items() if count == 1}


def _uses(fn: ast.AST, name: str, names: set, parents: Dict[int, ast.AST]) -> List[Tuple[ast.AST, str]]:
    """(node, "method" | "compare" | "handed") for every use of the value, in source order."""
    uses: List[Tuple[Tuple[int, int], ast.AST, str]] = []
    for node in ast.walk(fn):
        if isinstance(node, ast.Name) and node.id in names and isinstance(node.ctx, ast.Load):
            value = node
        elif _super_read(node, name) and not isinstance(parents.get(id(node)), ast.Assign):
            value = node  # `super().mean.view(...)` straight away
        else:
            continue
        parent = parents.get(id(value))
        if isinstance(parent, ast.Attribute) and parent.value is value:
            holder = parents.get(id(parent))
            if isinstance(holder, ast.Call) and holder.func is parent:
                uses.append(((holder.lineno, holder.col_offset), holder, "method"))
            elif isinstance(holder, ast.Compare):
                uses.append(((holder.lineno, holder.col_offset), holder, "compare"))
            else:  # `value(m.dtype)`: the unresolved attribute handed on (a break, if any, is the callee's)
                uses.append(((parent.lineno, parent.col_offset), parent, "handed"))
        elif isinstance(parent, ast.Compare):
            uses.append(((parent.lineno, parent.col_offset), parent, "compare"))
        else:
            uses.append(((value.lineno, value.col_offset), value, "handed"))  # returned, passed, computed with
    uses.sort(key=lambda u: u[0])
    return [(node, kind) for _, node, kind in uses]


def _before(first: Tuple[Tuple[int, int], ...], then: Tuple[Tuple[int, int], ...]) -> bool:
    """Does the statement at `first` run before the one at `then` on every path to it: the same
    statement, or one earlier in a block that holds `then` or a statement around it?"""
    if not first or len(first) > len(then):
        return False
    *outer, (block, i) = first
    if tuple(outer) != then[:len(outer)]:
        return False
    block_then, j = then[len(outer)]
    return block_then == block and i <= j
