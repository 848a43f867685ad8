"""Submodules a function puts in eval mode before it calls them.

`self.teacher.eval()` as a statement of a function's own body (not under an `if` or in a loop)
sets `training = False` on that submodule and all its children (`nn.Module.eval`), so a later
`self.teacher(x)` or `self.teacher.encode(x)` in the same function runs their eval paths
whatever the mode the compiled model is in: their `if self.training:` branches never run there.
A function that sets a mode back anywhere (`self.train()`, `self.teacher.train(...)`, assigning
`.training`) keeps no such claim: which mode a call meets is then a matter of order and loops.
"""
from __future__ import annotations

import ast
import weakref
from typing import Callable, Dict, List, Optional

from compilelint.analysis.astutil import self_attr

# function node → {attribute: the row of the first `self.<attribute>.eval()` of its own body,
# counted from the `def` line (an edit above moves the node, not what this says)}, empty when the
# function sets a mode back somewhere
_HELD: "weakref.WeakKeyDictionary[ast.AST, Dict[str, int]]" = weakref.WeakKeyDictionary()


def _sets_eval(call: ast.AST) -> Optional[str]:
    """The submodule `self.<attr>.eval()` (or `.train(False)`) puts in eval mode, else None."""
    if not (isinstance(call, ast.Call) and isinstance(call.func, ast.Attribute) and not call.keywords):
        return None
    if call.func.attr == "eval" and not call.args or \
            call.func.attr == "train" and len(call.args) == 1 and \
            isinstance(call.args[0], ast.Constant) and call.args[0].value is False:
        return self_attr(call.func.value)
    return None


def _sets_back(node: ast.AST) -> bool:
    """A `.train(...)` call other than `train(False)`, or an assignment to a `.training`."""
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "train":
        return _sets_eval(node) is None
    if isinstance(node, (ast.Assign, ast.AugAssign, ast.AnnAssign)):
        targets = node.targets if isinstance(node, ast.Assign) else [node.target]
        return any(isinstance(t, ast.Attribute) and t.attr == "training" for t in targets)
    return False


def held_in_eval(fn: ast.AST, nodes: Callable[[ast.AST], List[ast.AST]]) -> Dict[str, int]:
    """{submodule attribute: the row of its `.eval()` from the `def`} for `fn` (once per function node).
    `nodes`: function node → all its nodes (the file's shared walk)."""
    got = _HELD.get(fn)
    if got is None:
        got = {}
        if isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)):
            for stmt in fn.body:
                attr = _sets_eval(stmt.value) if isinstance(stmt, ast.Expr) else None
                if attr is not None and attr not in got:
                    got[attr] = stmt.lineno - fn.lineno
            if got and any(_sets_back(sub) for sub in nodes(fn)):
                got = {}
        _HELD[fn] = got
    return got


def calls_held_submodule(call: ast.Call, fn: Optional[ast.AST], nodes) -> bool:
    """Is `call` a call of a submodule, or of one of its methods (`self.teacher(x)`,
    `self.teacher.encode(x)`), that `fn` put in eval mode on a row above?"""
    if fn is None or not isinstance(call.func, ast.Attribute):
        return False
    held = held_in_eval(fn, nodes)
    if not held:
        return False
    attr = self_attr(call.func) or self_attr(call.func.value)
    return attr is not None and attr in held and held[attr] < call.lineno - fn.lineno
