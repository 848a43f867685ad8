"""Branches that exist to tell a caller it used an argument wrongly: they run only on misuse.

Library code warns when a caller passes a deprecated argument (`if len(args) > 0 or
kwargs.get("scale") is not None: deprecate("scale", ...)`, `logger.warning("Passing `scale` ...
is deprecated")`, `warnings.warn(..., FutureWarning)`) or keyword arguments the callee ignores
(`unused = [k for k in kwargs if k not in expected]; if len(unused) > 0: logger.warning(...)`).
The same holds for a branch that warns an argument is unsupported and discards it (`warnings.warn("...
not supported, ignoring position ids"); kwargs["position_ids"] = None`, `logger.warning(...);
output_attentions = False`): it runs only for a caller passing what the callee cannot use. Not
when the test (or an `if` around it) reads the object's state: `if self.gradient_checkpointing and
self.training: if use_cache: logger.warning(...); use_cache = False` runs in a training mode with a
config default (the truth corpus: it ran in 13 of its models).
A model called the current way never takes these branches (the truth corpus: none of them ran in
any of its 373 models), so what they contain — the warning itself, the deprecation helper they
call — is a claim about a path users leave as soon as they read the warning. The walker marks
such a branch with the `MISUSE` guard; the project pass treats it as dead unless the user asks
for these paths (`--follow-misuse`), and then the note says the condition.
"""
from __future__ import annotations

import ast
import weakref
from typing import Dict, List, Optional

from compilelint.analysis import libraries
from compilelint.analysis.astutil import walk
from compilelint.analysis.names import dotted

# The pseudo-predicate of a misuse branch: (MISUSE, True) in a node's guards.
MISUSE = "caller-misuse"
NOTE = "a caller passes a deprecated or unexpected argument"
DEPRECATION_CATEGORIES = frozenset({"DeprecationWarning", "FutureWarning", "PendingDeprecationWarning"})
# logging's, and the methods libraries add to their loggers (`data/libraries.toml`)
WARNING_CALLS = frozenset({"warn", "warning", "info", "debug"} | set(libraries.LOGGER_METHODS))


def is_helper(fn: Optional[ast.AST]) -> bool:
    """A deprecation or warning helper (`deprecate`, `warn_once`): its own branches are about its
    arguments, not about its callers' misuse (its calls are judged where they are made)."""
    name = getattr(fn, "name", "").lower()
    return "deprecat" in name or "warn" in name


def misuse_branch(test: ast.AST, branch: bool, body: List[ast.stmt], fn: Optional[ast.AST],
                  stateful: bool = False) -> bool:
    """Does this branch of `if test:` run only when a caller misuses an argument? `stateful`: an
    `if` around it tests the object's own state (`self.gradient_checkpointing and self.training`),
    under which a warn-and-reset branch is about a mode the model is in, not about a caller."""
    if fn is None or not body or is_helper(fn):
        return False
    # the body first: it rarely warns and resets, and a look at its statements costs less than a
    # walk of the test
    return _warns_deprecation(body) or (not stateful and _warns_and_resets(body) and not reads_self(test)) or \
        (branch and _only_warns(body) and _unexpected_kwargs(test, fn))


_READS_SELF: "weakref.WeakKeyDictionary[ast.AST, bool]" = weakref.WeakKeyDictionary()


def reads_self(test: ast.AST) -> bool:
    """Does the expression read `self`? Once per test: the walker asks it of every `if` around each
    nested one."""
    got = _READS_SELF.get(test)
    if got is None:
        got = _READS_SELF[test] = any(sub.__class__ is ast.Name and sub.id == "self" for sub in walk(test))
    return got


def _warns_deprecation(body: List[ast.stmt]) -> bool:
    """The branch (its own statements) calls a deprecation helper, warns with a deprecation
    category, or warns with a message that says "deprecated"."""
    texts: Dict[str, str] = {}  # deprecation_message = "..." before the call
    for stmt in body:
        if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name):
            text = _text(stmt.value, texts)
            if text is not None:
                texts[stmt.targets[0].id] = text
        call = stmt.value if isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call) else None
        if call is None:
            continue
        name = (dotted(call.func) or "").rsplit(".", 1)[-1].lower()
        if "deprecat" in name:
            return True
        categories = call.args[1:2] + [k.value for k in call.keywords if k.arg == "category"]
        if any((dotted(c) or "").rsplit(".", 1)[-1] in DEPRECATION_CATEGORIES for c in categories):
            return True
        if name in WARNING_CALLS and any("deprecat" in (_text(a, texts) or "").lower() for a in call.args[:1]):
            return True
    return False


def _text(node: ast.AST, texts: Dict[str, str]) -> Optional[str]:
    """The literal parts of a message: a string, an f-string, `"a" "b"`, `"a" + b`, a name bound above."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    if isinstance(node, ast.JoinedStr):
        return "".join(v.value for v in node.values if isinstance(v, ast.Constant) and isinstance(v.value, str))
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
        return (_text(node.left, texts) or "") + (_text(node.right, texts) or "")
    if isinstance(node, ast.Name):
        return texts.get(node.id)
    return None


def _warns_and_resets(body: List[ast.stmt]) -> bool:
    """The branch warns and sets something to None or False, and does nothing else (but `continue`
    or `pass`): it tells the caller an argument is not supported and drops it. Or it warns and
    returns None, its last statement (`warnings.warn("... expected scalar, scaling will not be
    applied"); return None`): it drops what it was asked for, the same way."""
    warns = resets = False
    for i, stmt in enumerate(body):
        if _is_warning(stmt):
            warns = True
        elif isinstance(stmt, ast.Assign) and isinstance(stmt.value, ast.Constant) and \
                (stmt.value.value is None or stmt.value.value is False):
            resets = resets or all(isinstance(t, (ast.Name, ast.Attribute, ast.Subscript)) for t in stmt.targets)
        elif isinstance(stmt, ast.Return) and i == len(body) - 1 and \
                isinstance(stmt.value, ast.Constant) and stmt.value.value is None:
            resets = True
        elif not isinstance(stmt, (ast.Continue, ast.Pass)):
            return False
    return warns and resets


def _is_warning(stmt: ast.stmt) -> bool:
    """`warnings.warn(...)`, `logger.warning(...)`, `warn(...)`."""
    if not (isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call)):
        return False
    func = stmt.value.func
    name = func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else ""
    return name in WARNING_CALLS


def _only_warns(body: List[ast.stmt]) -> bool:
    """Every statement is a warning or logging call."""
    return all(isinstance(s, ast.Expr) and isinstance(s.value, ast.Call) and isinstance(s.value.func, ast.Attribute)
               and s.value.func.attr in WARNING_CALLS for s in body)


def _unexpected_kwargs(test: ast.AST, fn: ast.AST) -> bool:
    """`len(unused) > 0` (or `unused`), where `unused` is built in the function from the `**kwargs`
    parameter, keeping the keys that are `not in` what the callee accepts."""
    kwarg = fn.args.kwarg.arg if isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)) and fn.args.kwarg else None
    if kwarg is None:
        return False
    name = _nonempty_name(test)
    if name is None:
        return False
    for sub in ast.walk(fn):
        if isinstance(sub, ast.Assign) and len(sub.targets) == 1 and isinstance(sub.targets[0], ast.Name) \
                and sub.targets[0].id == name and _filters_kwargs(sub.value, kwarg):
            return True
    return False


def _nonempty_name(test: ast.AST) -> Optional[str]:
    """`x`, `len(x)`, `len(x) > 0`, `len(x) != 0`, `len(x) >= 1` → "x"."""
    if isinstance(test, ast.Name):
        return test.id
    if isinstance(test, ast.Call) and isinstance(test.func, ast.Name) and test.func.id == "len" and \
            len(test.args) == 1 and isinstance(test.args[0], ast.Name):
        return test.args[0].id
    if isinstance(test, ast.Compare) and len(test.ops) == 1 and isinstance(test.comparators[0], ast.Constant):
        op, bound = test.ops[0], test.comparators[0].value
        if (isinstance(op, (ast.Gt, ast.NotEq)) and bound == 0) or (isinstance(op, ast.GtE) and bound == 1):
            inner = _nonempty_name(test.left)
            return inner if isinstance(test.left, ast.Call) else None
    return None


def _filters_kwargs(value: ast.AST, kwarg: str) -> bool:
    """`[k for k, _ in kwargs.items() if k not in accepted ...]` (list, set or generator; `.keys()` or bare)."""
    if not isinstance(value, (ast.ListComp, ast.SetComp, ast.GeneratorExp, ast.DictComp)) or not value.generators:
        return False
    gen = value.generators[0]
    source = gen.iter
    if isinstance(source, ast.Call) and isinstance(source.func, ast.Attribute) and source.func.attr in ("items", "keys"):
        source = source.func.value
    if not (isinstance(source, ast.Name) and source.id == kwarg):
        return False
    return any(isinstance(n, ast.Compare) and any(isinstance(op, ast.NotIn) for op in n.ops)
               for cond in gen.ifs for n in ast.walk(cond))
