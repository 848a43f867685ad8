"""Code that only runs when an optional argument is given, in a function no traced call gives it.

`Cache.__init__(self, shard_data=None, config=None)` has an `.item()` under
`if shard_data is not None:`; every model reaches `__init__` through `Cache(config=...)`,
which never passes `shard_data`, so that code never runs under compile. The same holds for a
flag defaulting to a false constant and tested for truth: `resample_pos_embed(...,
verbose=False)` logs only `if ... and verbose:`, and no model's call passes `verbose`; and for
such a parameter compared with a true constant: `def safe_div(num, den, on_zero=0.0)` checks
`if on_zero == "warn" and (den == 0).any():`, which the default 0.0 never passes, nor a call
giving another constant (`safe_div(a, b, on_zero="nan")`, or a caller handing on its own
parameter that its callers give so; a caller handing on a parameter annotated as a number,
`on_zero: float = 0`, which equals no string; a caller handing on a parameter without a default,
whose own callers pass other constants). At walk time a
finding keeps the parameters (defaulting to None, or tested bare or against true constants and
defaulting to False, 0 or "") that the `if`s around it need passed (`needs`);
the project pass drops it when every call reaching the function from traced code leaves one of
them out. A call that hands on an optional parameter of its own unchanged gives it only when its
own callers did: HuBERT's `_mask_hidden_states(hidden_states, mask_time_indices=...)` never passes
`attention_mask`, so the `attention_mask.sum(-1).tolist() if attention_mask is not None else ...`
of the `_compute_mask_indices(..., attention_mask=attention_mask)` it calls never runs.
The other way round, a branch that supplies a missing optional argument (`if dim_size is None:
dim_size = int(index.max()) + 1`) runs only when a call leaves it out: it is dropped when every
live traced call gives that argument a value of its own making (not None, not an optional
parameter of the caller handed on). Needs of this kind are written `-name`.
A function that is itself a root gets its arguments from the user: nothing is dropped. What it
hands on through its own `*args, **kwargs` (`forward(self, x, *args, **kwargs): return
self.predict(x, *args, **kwargs)`) is what the user added to the inputs, which a model called as
`model(x)` does not: a flag `predict` tests, defaulting to off, is not given there. Handed on by a
function that is not a root, such arguments could be anything: given.
The test of an `if ...: return` above a node counts as one of its `if`s (taking the false branch):
after `if not check_channels: return True`, a call needs `check_channels` given. A function whose
every traced call needs what no caller gives never runs (`Incoming.unreached`).
What an argument answers too: `if not preds.is_floating_point():` in a validator needs a call
passing integer `preds` (a need written `?preds.is_floating_point=False`); a caller that raises on
exactly that right after the call (`check(preds, t)` then `if not preds.is_floating_point(): raise
...`) only takes the branch on its way to the error, so its call does not count (`raised_after`).
Identity too: `query is key or torch.equal(query, key)` runs `torch.equal` only when the call
passes two different objects (a need written `!query key`); it is dropped when every live traced
call passes one local name in both places (`attn(x, x, x)`, `Call.same`).
"""
from __future__ import annotations

import ast
import weakref
from typing import Dict, List, Optional, Tuple

from compilelint.analysis.astutil import is_self, parameter_defaults, parameter_names, walk
from compilelint.analysis.call_binding import (DEREF, KEY, NONE, NUMBER, PROBE, REQUIRED, RETURNS_NONE, VALUE, VARARGS,
                                               argument_slot, handed_name, hands_on_varargs, is_required,
                                               receiver_offset)
from compilelint.analysis.init_defaults import constructor_defaults
from compilelint.analysis.wrappers import wrapper_def
from compilelint.summary import Call, FunctionInfo


def _optional_params(fn: ast.AST) -> Dict[str, object]:
    """Parameters whose default is a false constant (None, False, 0, ""): parameter → the default."""
    return {a.arg: d.value for a, d in parameter_defaults(fn.args)
            if isinstance(d, ast.Constant) and not d.value}


def none_tests(top) -> Dict[str, bool]:
    """Module functions that are a None test of their one parameter: name → True for
    `def exists(v): return v is not None`, False for `return v is None`. A call of one is that test
    of its argument (`if exists(cache):` needs `cache` given)."""
    out: Dict[str, bool] = {}
    for fn in top:
        if isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)) and not fn.decorator_list and \
                len(fn.args.args) == 1 and not (fn.args.vararg or fn.args.kwarg or fn.args.kwonlyargs or
                                                fn.args.posonlyargs) and len(fn.body) == 1:
            ret = fn.body[0]
            test = ret.value if isinstance(ret, ast.Return) else None
            if isinstance(test, ast.Compare) and len(test.ops) == 1 and isinstance(test.ops[0], (ast.Is, ast.IsNot)) \
                    and isinstance(test.left, ast.Name) and test.left.id == fn.args.args[0].arg and \
                    isinstance(test.comparators[0], ast.Constant) and test.comparators[0].value is None:
                out[fn.name] = isinstance(test.ops[0], ast.IsNot)
    return out


def _as_none_test(term: ast.AST, tests: Dict[str, bool]) -> ast.AST:
    """`exists(p)` → `p is not None` when `exists` is such a module function (`none_tests`)."""
    if tests and isinstance(term, ast.Call) and isinstance(term.func, ast.Name) and term.func.id in tests and \
            len(term.args) == 1 and not term.keywords and isinstance(term.args[0], ast.Name):
        op = ast.IsNot() if tests[term.func.id] else ast.Is()
        return ast.Compare(left=term.args[0], ops=[op], comparators=[ast.Constant(None)])
    return term


def _given(term: ast.AST, branch: bool, optional: Dict[str, object], vararg: str = "",
           method: bool = False, tests: Optional[Dict[str, bool]] = None,
           kwargs: frozenset = frozenset()) -> Optional[str]:
    """What this operand, taking `branch`, shows the call gave: an optional parameter (`p` on the
    true branch; for a default of None also `p is not None`, and `p is None` on the false one), or
    a count of extra positional arguments (`len(caches) == 1` → "*1"); a key of the `**kwargs`
    (`kwargs.get("debug", False)`, `"debug" in kwargs`: "**debug"); in a method, the same tests
    of `self.attr` show the construction gave what `__init__` copies into it ("self.attr",
    `init_defaults`)."""
    if isinstance(term, ast.UnaryOp) and isinstance(term.op, ast.Not):
        return _given(term.operand, not branch, optional, vararg, method, tests, kwargs)
    term = _as_none_test(term, tests)
    key = _kwargs_key(term, branch, kwargs) if kwargs else None
    if key is not None:
        return KEY + key
    if method:
        attr = _self_attr_given(term, branch)
        if attr:
            return attr
    if vararg and branch and isinstance(term, ast.Compare) and len(term.ops) == 1 and \
            isinstance(term.ops[0], ast.Eq) and isinstance(term.left, ast.Call) and \
            isinstance(term.left.func, ast.Name) and term.left.func.id == "len" and len(term.left.args) == 1 and \
            isinstance(term.left.args[0], ast.Name) and term.left.args[0].id == vararg and \
            isinstance(term.comparators[0], ast.Constant) and type(term.comparators[0].value) is int:
        return f"*{term.comparators[0].value}"
    if isinstance(term, ast.Name) and term.id in optional and branch:
        return term.id
    if isinstance(term, ast.Compare) and len(term.ops) == 1 and isinstance(term.left, ast.Name) and \
            term.left.id in optional and _names_a_value(term.ops[0], term.comparators[0], branch):
        # `p == "warn"`: the false default never equals a true constant, nor does a call's other one
        return term.left.id + VALUE + "\t".join(repr(v.value) for v in _compared_values(term.comparators[0]))
    if isinstance(term, ast.Compare) and len(term.ops) == 1 and isinstance(term.left, ast.Name) and \
            optional.get(term.left.id, False) is None and isinstance(term.comparators[0], ast.Constant) and \
            term.comparators[0].value is None and isinstance(term.ops[0], (ast.Is, ast.IsNot)):
        given = isinstance(term.ops[0], ast.IsNot) == branch
        return term.left.id if given else "-" + term.left.id  # `p is None`: runs when p is missing
    return None


def _distinct(term: ast.AST, branch: bool, params) -> Optional[str]:
    """`a is b` taking its false branch (`a is not b` its true one), `a` and `b` parameters: the
    path needs the call to pass two different objects there, written "!a b" (`query is key or
    torch.equal(query, key)` runs `torch.equal` only then)."""
    if isinstance(term, ast.UnaryOp) and isinstance(term.op, ast.Not):
        return _distinct(term.operand, not branch, params)
    if isinstance(term, ast.Compare) and len(term.ops) == 1 and isinstance(term.ops[0], (ast.Is, ast.IsNot)) and \
            isinstance(term.left, ast.Name) and isinstance(term.comparators[0], ast.Name) and \
            term.left.id in params and term.comparators[0].id in params and \
            isinstance(term.ops[0], ast.IsNot) == branch:
        return f"!{term.left.id} {term.comparators[0].id}"
    return None


def _probed(term: ast.AST, branch: bool, params) -> Optional[str]:
    """`p.m()` with no arguments, `p` a parameter, taking `branch`: the path needs the argument to
    answer `m()` so, written "?p.m=False" for `if not preds.is_floating_point():`. A call right
    after which the caller raises on the other answer (`raised_after`) never takes the path on
    to a run that goes on."""
    if isinstance(term, ast.UnaryOp) and isinstance(term.op, ast.Not):
        return _probed(term.operand, not branch, params)
    if isinstance(term, ast.Call) and not term.args and not term.keywords and \
            isinstance(term.func, ast.Attribute) and isinstance(term.func.value, ast.Name) and \
            term.func.value.id in params:
        return f"{PROBE}{term.func.value.id}.{term.func.attr}{VALUE}{branch!r}"
    return None


def raised_after(call: ast.Call, stack, fn: Optional[ast.AST]) -> Tuple[Tuple[object, str], ...]:
    """What the caller makes sure of an argument right after the call: a bare call statement
    followed by `if not a.m(): raise ...` (or `if a.m(): raise ...`), `a` a name it passes, runs on
    only with `a.m()` true (false): ((PROBE, slot), "m=True") for each slot passing `a`. `stack`:
    the walk's ancestors of the call within its function `fn`, the call last."""
    statement = stack[-2] if len(stack) > 1 else None
    owner = stack[-3] if len(stack) > 2 else fn  # a statement of the function's own body
    if not isinstance(statement, ast.Expr) or statement.value is not call or owner is None:
        return ()
    after = None
    for field in ("body", "orelse", "finalbody"):
        body = getattr(owner, field, None)
        if isinstance(body, list):
            at = next((i for i, stmt in enumerate(body) if stmt is statement), None)
            if at is not None:
                after = body[at + 1] if at + 1 < len(body) else None
                break
    if not isinstance(after, ast.If) or after.orelse or len(after.body) != 1 or not isinstance(after.body[0], ast.Raise):
        return ()
    test, raises_on = after.test, True
    if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
        test, raises_on = test.operand, False
    if not (isinstance(test, ast.Call) and not test.args and not test.keywords and
            isinstance(test.func, ast.Attribute) and isinstance(test.func.value, ast.Name)):
        return ()
    name, sure = test.func.value.id, f"{test.func.attr}{VALUE}{(not raises_on)!r}"
    slots = [i for i, a in enumerate(call.args) if isinstance(a, ast.Name) and a.id == name] + \
        [k.arg for k in call.keywords if k.arg and isinstance(k.value, ast.Name) and k.value.id == name]
    return tuple(((PROBE, slot), sure) for slot in slots)


def _rejects(call: Call, callee: FunctionInfo, need: str) -> bool:
    """Does the caller raise, right after this call, on every argument meeting a "?p.m=v" need
    (`raised_after`): the path runs only on the way to that error?"""
    if call.args is None:
        return False
    param, _, probe = need[len(PROBE):].partition(".")
    method, _, wanted = probe.partition(VALUE)
    slot = argument_slot(call, callee, param)
    sure = next((s for at, s in call.forwards if at == (PROBE, slot)), None) if slot is not None else None
    return sure is not None and sure.partition(VALUE)[0] == method and sure.partition(VALUE)[2] != wanted


def _kwargs_key(term: ast.AST, branch: bool, kwargs: frozenset) -> Optional[str]:
    """The key of a `**kwargs` dict that this operand, taking `branch`, needs a call to pass: a
    missing key reads as its default, a false constant (`kwargs.get("k")`, `kwargs.get("k", False)`,
    `kwargs.pop("k", None)` true; `kwargs.get("k") is not None`), or is not in it (`"k" in kwargs`)."""
    if isinstance(term, ast.Compare) and len(term.ops) == 1:
        op, right = term.ops[0], term.comparators[0]
        if isinstance(op, (ast.In, ast.NotIn)) and isinstance(right, ast.Name) and right.id in kwargs and \
                isinstance(term.left, ast.Constant) and isinstance(term.left.value, str):
            return term.left.value if isinstance(op, ast.In) == branch else None
        if isinstance(op, (ast.Is, ast.IsNot)) and isinstance(right, ast.Constant) and right.value is None:
            key = _read_key(term.left, kwargs)
            return key if key is not None and isinstance(op, ast.IsNot) == branch else None
        return None
    key = _read_key(term, kwargs)
    return key if branch else None


def _read_key(node: ast.AST, kwargs: frozenset) -> Optional[str]:
    """"k" for `kwargs.get("k")` / `kwargs.pop("k")` with no default or a false constant one."""
    if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in ("get", "pop")
            and isinstance(node.func.value, ast.Name) and node.func.value.id in kwargs and not node.keywords
            and 1 <= len(node.args) <= 2 and isinstance(node.args[0], ast.Constant)
            and isinstance(node.args[0].value, str)):
        return None
    default = node.args[1] if len(node.args) == 2 else None
    if default is not None and not (isinstance(default, ast.Constant) and not default.value):
        return None
    return node.args[0].value


def _kwargs_names(fn: ast.AST) -> frozenset:
    """The `**kwargs` parameters whose keys come from the function's callers: its own, and that of
    the wrapper it returns when it is a decorator (`wrappers`), unless the function writes into
    them or rebinds them (`kwargs["k"] = v`, `kwargs.update(...)`, `kwargs = {...}`)."""
    got = _KWARGS.get(fn)
    if got is None:
        names = {fn.args.kwarg.arg} if fn.args.kwarg is not None else set()
        inner = wrapper_def(fn)
        if inner is not None and inner.args.kwarg is not None:
            names.add(inner.args.kwarg.arg)
        for sub in walk(fn) if names else ():
            if isinstance(sub, (ast.Assign, ast.AugAssign, ast.AnnAssign)):
                for t in (sub.targets if isinstance(sub, ast.Assign) else [sub.target]):
                    base = t.value if isinstance(t, ast.Subscript) else t
                    if isinstance(base, ast.Name):
                        names.discard(base.id)
            elif isinstance(sub, ast.Call) and isinstance(sub.func, ast.Attribute) and \
                    sub.func.attr in ("update", "setdefault", "__setitem__") and isinstance(sub.func.value, ast.Name):
                names.discard(sub.func.value.id)
        got = _KWARGS[fn] = frozenset(names)
    return got


def same_args(call: ast.Call) -> Tuple[Tuple[object, ...], ...]:
    """Groups of the call's arguments that are one local name (`attn(x, x, x)` → ((0, 1, 2),)),
    as positional indexes and keyword names."""
    by_name: Dict[str, List[object]] = {}
    for i, a in enumerate(call.args):
        if a.__class__ is ast.Name:
            by_name.setdefault(a.id, []).append(i)
    for k in call.keywords:
        if k.arg and k.value.__class__ is ast.Name:
            by_name.setdefault(k.value.id, []).append(k.arg)
    return tuple(tuple(slots) for slots in by_name.values() if len(slots) > 1)


def _self_attr_given(term: ast.AST, branch: bool) -> Optional[str]:
    """ "self.attr" when this operand, taking `branch`, needs `self.attr` other than a false constant:
    `self.attr`, `self.attr is not None`, `self.attr == "fast"` (and their negations)."""
    left = term.left if isinstance(term, ast.Compare) and len(term.ops) == 1 else term
    if not (isinstance(left, ast.Attribute) and is_self(left.value)):
        return None
    if left is term:
        return f"self.{left.attr}" if branch else None
    op, right = term.ops[0], term.comparators[0]
    if isinstance(op, (ast.Is, ast.IsNot)) and isinstance(right, ast.Constant) and right.value is None:
        return f"self.{left.attr}" if isinstance(op, ast.IsNot) == branch else None
    return f"self.{left.attr}" if _names_a_value(op, right, branch) else None


def _compared_values(right: ast.AST) -> list:
    """The constants `p == right` / `p in right` compares with."""
    return list(right.elts) if isinstance(right, (ast.Tuple, ast.List, ast.Set)) else [right]


def _names_a_value(op: ast.cmpop, right: ast.AST, branch: bool) -> bool:
    """Does this comparison, taking `branch`, hold only for a true constant (`p == "warn"`, `p in
    ("a", "b")`, `p != "warn"` on its false branch)? Then a parameter defaulting to a false
    constant, or handed on from a caller's such parameter, fails it unless a call gives it."""
    if isinstance(op, (ast.Eq, ast.NotEq)):
        values = [right]
        holds_on = isinstance(op, ast.Eq)
    elif isinstance(op, (ast.In, ast.NotIn)) and isinstance(right, (ast.Tuple, ast.List, ast.Set)):
        values = right.elts
        holds_on = isinstance(op, ast.In)
    else:
        return False
    return branch == holds_on and bool(values) and \
        all(isinstance(v, ast.Constant) and v.value for v in values)


def needed_params(conditions: List[Tuple[ast.AST, bool]], fn: Optional[ast.AST], nodes,
                  tests: Optional[Dict[str, bool]] = None) -> Tuple[str, ...]:
    """The optional parameters of `fn` that the plain `if`s around a node need given (and not
    rebound in the function: `x = x if x is not None else default` makes it always set).
    `nodes`: function node → all its nodes (the file's shared walk); `tests`: the file's
    `none_tests`."""
    if fn is None or not isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)) or not conditions:
        return ()
    # Once per function and `if`s around: every call and finding under the same `if`s asks it.
    memo = _NEEDED.get(fn)
    if memo is None:
        memo = _NEEDED[fn] = {}
    key = tuple(conditions)  # the test nodes themselves (kept alive by the key: no id reused)
    got = memo.get(key)
    if got is None:
        got = memo[key] = _needed_params(conditions, fn, nodes, tests)  # `tests`: one file's, as `fn` is
    return got


_NEEDED: "weakref.WeakKeyDictionary[ast.AST, Dict[tuple, Tuple[str, ...]]]" = weakref.WeakKeyDictionary()


def _needed_params(conditions: List[Tuple[ast.AST, bool]], fn: ast.AST, nodes,
                   tests: Optional[Dict[str, bool]]) -> Tuple[str, ...]:
    optional = _optional_params(fn)
    vararg = fn.args.vararg.arg if fn.args.vararg is not None else ""
    method = bool(fn.args.args) and fn.args.args[0].arg == "self"
    params = parameter_names(fn.args)
    kwargs = _kwargs_names(fn)
    out: Dict[str, int] = {}  # need → the line of the first test asking it
    asked: Dict[str, Tuple[ast.AST, bool]] = {}  # need → that test and its branch
    for test, branch in conditions:
        joined = isinstance(test, ast.BoolOp) and isinstance(test.op, ast.And if branch else ast.Or)
        for term in test.values if joined else [test]:
            name = _given(term, branch, optional, vararg, method, tests, kwargs) or _distinct(term, branch, params) \
                or _probed(term, branch, params)
            if name and name not in out:
                out[name] = test.lineno - fn.lineno
                asked[name] = (test, branch)
    if out:
        rebound = _rebound(fn, nodes)
        loops = _loops(fn, nodes)
        # `if p is None: p = ...` fills the parameter in: only a binding above the test counts; a
        # binding below it counts too when a loop can bring it back to the test
        # (`zero_division = 0.0 if zero_division == "warn" else zero_division` after the test does not;
        # `query is key` is about the arguments as passed: rebinding them after the test is no matter)
        first = min(test.lineno for test, _ in conditions) - fn.lineno
        return tuple(p for p, line in out.items() for name in [p.split(VALUE, 1)[0]] if
                     (all(rebound.get(q, 1 << 30) >= first for q in p[1:].split()) if p[0] in "-!" else
                      rebound.get(p[1:].split(".", 1)[0], 1 << 30) >= first if p[0] == PROBE else
                      p.startswith("self.") or name not in rebound or
                      (rebound[name] >= line and (not loops or _bound_only_under(fn, nodes, name, *asked[p])))))
    return ()


def _bound_only_under(fn: ast.AST, nodes, name: str, test: ast.AST, branch: bool) -> bool:
    """Is every binding of `name` in `fn` inside the `branch` of the `if` testing `test`? That
    branch runs only when the test holds (`if cache is not None: ... cache = copy(cache)` in a loop:
    a missing `cache` never gets there), so such a binding never gives a value the call did not."""
    owner = next((sub for sub in nodes(fn) if isinstance(sub, ast.If) and sub.test is test), None)
    if owner is None:
        return False
    inside = {id(sub) for stmt in (owner.body if branch else owner.orelse) for sub in walk(stmt)}
    for sub in nodes(fn):
        if isinstance(sub, (ast.Assign, ast.AugAssign, ast.AnnAssign)):
            for t in (sub.targets if isinstance(sub, ast.Assign) else [sub.target]):
                if isinstance(t, ast.Name) and t.id == name and id(sub) not in inside:
                    return False
    return True


_REBOUND: "weakref.WeakKeyDictionary[ast.AST, Dict[str, int]]" = weakref.WeakKeyDictionary()
_ASSIGN_KINDS = frozenset((ast.Assign, ast.AugAssign, ast.AnnAssign))
_LOOP_KINDS = frozenset((ast.For, ast.AsyncFor, ast.While))
_LOOPS: "weakref.WeakKeyDictionary[ast.AST, bool]" = weakref.WeakKeyDictionary()


def _loops(fn: ast.AST, nodes) -> bool:
    """Does the function hold a loop (once per function node)?"""
    got = _LOOPS.get(fn)
    if got is None:
        got = _LOOPS[fn] = any(sub.__class__ in _LOOP_KINDS for sub in nodes(fn))
    return got


def _rebound(fn: ast.AST, nodes) -> Dict[str, int]:
    """The names the function assigns → the first line assigning each, counted from the `def` line
    (an edit above moves the node, not what this says), once per function node (asked for every
    call under a condition)."""
    got = _REBOUND.get(fn)
    if got is None:
        got = {}
        for sub in nodes(fn):
            if sub.__class__ in _ASSIGN_KINDS:  # the class, not isinstance: asked of every node of every function
                for t in (sub.targets if sub.__class__ is ast.Assign else [sub.target]):
                    if isinstance(t, ast.Name):
                        row = sub.lineno - fn.lineno
                        got[t.id] = min(got.get(t.id, row), row)
        _REBOUND[fn] = got
    return got


_KWARGS: "weakref.WeakKeyDictionary[ast.AST, frozenset]" = weakref.WeakKeyDictionary()
_OPTIONAL: "weakref.WeakKeyDictionary[ast.AST, Dict[str, object]]" = weakref.WeakKeyDictionary()
_PARAMS: "weakref.WeakKeyDictionary[ast.AST, tuple]" = weakref.WeakKeyDictionary()  # (names, number-annotated)


def forwarded_params(call: ast.Call, fn: Optional[ast.AST], nodes) -> Tuple[Tuple[object, str], ...]:
    """The arguments of `call` that are optional parameters of `fn` handed on unchanged (never
    rebound in `fn`), as (positional index or keyword name, parameter); an argument that is the
    constant None as (its slot, NONE)."""
    if fn is None or not isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)):
        return ()
    if not call.args and not call.keywords:
        return ()
    # One look at each argument (asked for every call of every function); each kind keeps its own
    # list, positional arguments before keywords, so the order is that of a look per kind.
    handed_on = False  # the caller's own *args/**kwargs, else `passed_shape` gave None
    names, nones, selfs, constants = [], [], [], []
    for slot, value in [(i, a) for i, a in enumerate(call.args)] + [(k.arg, k.value) for k in call.keywords]:
        kind = value.__class__
        if slot is None or kind is ast.Starred:
            handed_on = True
        elif kind is ast.Name:
            names.append((slot, value.id))
        elif kind is ast.Constant:
            if value.value is None:
                nones.append((slot, NONE))
            elif _plain_constant(value):
                # `_safe_divide(a, b, zero_division="nan")`: a constant, which a test for another one fails
                constants.append((slot, VALUE + repr(value.value)))
        elif kind is ast.Attribute and is_self(value.value):
            # `fmt(x, self.ignore_index)`: given only when a construction gave it (`init_defaults`)
            selfs.append((slot, f"self.{value.attr}"))
    nones = ([(VARARGS, VARARGS)] if handed_on else []) + nones + selfs + constants
    if not names:
        return tuple(nones)
    optional = _OPTIONAL.get(fn)
    if optional is None:  # once per function: asked for each of its calls
        optional = _OPTIONAL[fn] = _optional_params(fn)
    params, numbers = _PARAMS.get(fn) or _PARAMS.setdefault(fn, (parameter_names(fn.args), _number_params(fn)))
    out = [(slot, name if name in optional else REQUIRED + name) for slot, name in names if name in params]
    if out:
        rebound = _rebound(fn, nodes)
        out = [(slot, NUMBER + own if handed_name(own) in numbers else own) for slot, own in out
               if handed_name(own) not in rebound]
    return tuple(out + nones)


_NUMBER_TYPES = frozenset({"int", "float", "bool", "complex"})


def _number_params(fn: ast.AST) -> frozenset:
    """The parameters annotated as numbers (`p: float = 0`, `Optional[int]`, `int | None`,
    `Literal[0, 1]`): a value handed on from one equals no string (`p == "warn"` fails)."""
    args = fn.args
    return frozenset(a.arg for a in args.posonlyargs + args.args + args.kwonlyargs
                     if a.annotation is not None and _number_annotation(a.annotation))


def _number_annotation(node: ast.AST) -> bool:
    if isinstance(node, ast.Name):
        return node.id in _NUMBER_TYPES
    if isinstance(node, ast.Constant):
        return node.value is None
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.BitOr):
        return _number_annotation(node.left) and _number_annotation(node.right)
    if isinstance(node, ast.Subscript):
        head = node.value.attr if isinstance(node.value, ast.Attribute) else getattr(node.value, "id", "")
        items = node.slice.elts if isinstance(node.slice, ast.Tuple) else [node.slice]
        if head in ("Optional", "Union"):
            return all(_number_annotation(item) for item in items)
        if head == "Literal":
            return all(isinstance(item, ast.Constant) and type(item.value) in (int, float, bool) for item in items)
    return False






def _all_strings(values: str) -> bool:
    """Are a need's constants (tab-separated reprs) all strings?"""
    try:
        return all(isinstance(ast.literal_eval(v), str) for v in values.split("\t"))
    except (ValueError, SyntaxError):
        return False


def _plain_constant(node: ast.AST) -> bool:
    """A string, number or bool constant (not None: NONE says that one)."""
    return node.__class__ is ast.Constant and type(node.value) in (str, int, float, bool)


def _equals_one_of(constant: str, values: str) -> bool:
    """Does the constant a call passes (its repr) equal one of a need's (tab-separated reprs)?"""
    try:
        value = ast.literal_eval(constant)
        return any(value == ast.literal_eval(v) for v in values.split("\t"))
    except (ValueError, SyntaxError):  # `1e999` is written back as inf: anything
        return True


def passed_shape(call: ast.Call, fn: Optional[ast.AST]) -> Optional[Tuple[int, Tuple[str, ...]]]:
    """(number of positional arguments, keyword names) the call writes out, the caller's own
    `*args` and `**kwargs` handed on left out (`forwarded_params` notes them); None when it
    unpacks anything else."""
    own = fn.args if isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)) else None
    for a in call.args:
        if isinstance(a, ast.Starred) and not (own is not None and own.vararg is not None and
                                               isinstance(a.value, ast.Name) and a.value.id == own.vararg.arg):
            return None
    for k in call.keywords:
        if k.arg is None and not (own is not None and own.kwarg is not None and
                                  isinstance(k.value, ast.Name) and k.value.id == own.kwarg.arg):
            return None
    return (sum(1 for a in call.args if not isinstance(a, ast.Starred)), tuple(k.arg for k in call.keywords if k.arg))








def passes(call: Call, callee: FunctionInfo, param: str) -> bool:
    """Could this call give `param` to `callee`? Unknown arguments could."""
    if call.args is None:
        return True
    if param.startswith("*") and not param.startswith(KEY):  # "*2": exactly two extra positional arguments
        return hands_on_varargs(call) or call.args[0] - (len(callee.params) - receiver_offset(call, callee)) == int(param[1:])
    return argument_slot(call, callee, param) is not None or hands_on_varargs(call)


def _same(call: Call, callee: FunctionInfo, a: str, b: str) -> bool:
    """Does this call pass one and the same local name as `a` and `b` (so `a is b` holds)?"""
    if call.args is None:
        return False
    slot_a, slot_b = argument_slot(call, callee, a), argument_slot(call, callee, b)
    return slot_a is not None and slot_b is not None and any(slot_a in group and slot_b in group for group in call.same)


def _true_constant(given: Optional[str]) -> bool:
    """Is this entry of a call's `forwards` a constant that tests true (`=True`, `=2`, `='x'`)?"""
    if not given or not given.startswith(VALUE):
        return False
    try:
        return bool(ast.literal_eval(given[len(VALUE):]))
    except (ValueError, SyntaxError):
        return False


def fills(call: Call, callee: FunctionInfo, param: str) -> bool:
    """Does this call surely give `param` a value: passed, neither None nor an optional parameter
    of the caller handed on?"""
    if call.args is None:
        return False
    slot = argument_slot(call, callee, param)
    return slot is not None and all(at != slot or name.startswith(("self.", VALUE)) or is_required(name)
                                    for at, name in call.forwards)


class Incoming:
    """The calls reaching each function from traced code, built on first use."""

    def __init__(self, project, reached: Dict[str, object], root_ids, calls, lenient: bool = False,
                 user_inits: frozenset = frozenset()):
        self.project = project
        # The constructors the user calls (the `--entry` class's): what they give is unknown.
        self.user_inits = user_inits
        # A root's own `**kwargs` handed on may give anything (its decorators may fill arguments in).
        self.lenient = lenient
        self._lenient_twin: Optional["Incoming"] = None
        self.reached = reached
        self.roots = set(root_ids)
        self.calls = calls  # the pass's `resolved_calls.ResolvedCalls`
        self._calls: Optional[Dict[str, List[Tuple[str, Call]]]] = None
        self._live: Dict[Tuple[str, Call], bool] = {}
        self._unreached: Dict[str, bool] = {}
        self._asking: set = set()  # (function, parameter) being decided: a cycle gives up
        self.defaults = constructor_defaults(project)

    def unpassed(self, fid: str, needs: Tuple[str, ...]) -> bool:
        """True when something in `needs` is given by no live traced call of `fid` (a `-name`:
        given a value by every one)."""
        if not needs:
            return False
        if any(p.startswith("self.") and self.defaults.at_default(fid, p[5:], self.user_inits) for p in needs):
            return True  # every instance holds the constructor's default there
        needs = tuple(p for p in needs if not p.startswith("self."))
        if getattr(self.reached.get(fid), "as_wrapper", False):  # the decorator's own tests ran when it decorated
            needs = tuple(p for p in needs if p.startswith(KEY))
        if not needs or fid in self.roots:
            return False
        incoming = self._incoming().get(fid, [])
        calls = [(caller, call) for caller, call in incoming if self.live(caller, call)]
        if not calls:  # reached only through calls that never run (or, with no calls, as a root)
            return bool(incoming)
        callee = self.project.functions[fid][1]
        return any(all(any(at == DEREF for at, _ in c.forwards) for _, c in calls) if p == RETURNS_NONE else
                   all(fills(c, callee, p[1:]) for _, c in calls) if p.startswith("-") else
                   all(_same(c, callee, *p[1:].split()) for _, c in calls) if p.startswith("!") else
                   all(_rejects(c, callee, p) for _, c in calls) if p.startswith(PROBE) else
                   not any(self._gives(caller, c, callee, p) for caller, c in calls) for p in needs)

    def unreached(self, fid: str) -> bool:
        """True when every traced call of `fid` sits under `if`s needing what no call of its caller
        gives, or comes from a function that is itself so reached (`if not check: return` before
        `helper(x)`, where no traced call passes `check`): the function never runs under compile."""
        if fid in self.roots:
            return False
        if fid in self._unreached:
            return self._unreached[fid]
        incoming = self._incoming()
        twin = self._twin()
        # The answer hangs on the callers' answers, theirs on their callers': gather them without
        # recursion (call chains run thousands deep), then grow the unreached set from nothing to
        # its least fixed point, so that a cycle decides nothing.
        order, seen, todo = [], {fid}, [fid]
        while todo:
            f = todo.pop()
            order.append(f)
            for caller, _ in incoming.get(f, ()):
                if caller not in seen and caller not in self._unreached and caller not in self.roots:
                    seen.add(caller)
                    todo.append(caller)
        live = {f: [caller for caller, call in incoming.get(f, ()) if twin.live(caller, call)] for f in order}
        found = dict.fromkeys(order, False)
        changed = True
        while changed:
            changed = False
            for f in reversed(order):  # callers first: a chain settles in one round
                if not found[f] and incoming.get(f) and all(
                        caller not in self.roots and self._unreached.get(caller, found.get(caller, False))
                        for caller in live[f]):
                    found[f] = changed = True
        self._unreached.update(found)
        return found[fid]

    def _twin(self) -> "Incoming":
        """The same calls judged with a root's handed-on `**kwargs` giving anything: a whole
        function is left out only where no argument the user adds could reach it (a decorator
        on the compiled `forward` may fill in `use_cache` from the config)."""
        if self._lenient_twin is None:
            self._lenient_twin = Incoming(self.project, self.reached, self.roots, self.calls, lenient=True,
                                          user_inits=self.user_inits)
            self._lenient_twin._calls = self._incoming()
        return self._lenient_twin

    def gives_tensors(self, fid: str, params: Tuple[str, ...]) -> bool:
        """True when every live traced call of `fid` passes, for each of `params`, an argument its
        caller knows to be a tensor (a root's arguments come from the user: unknown)."""
        if fid in self.roots:
            return False
        calls = [call for caller, call in self._incoming().get(fid, []) if self.live(caller, call)]
        callee = self.project.functions[fid][1]
        return bool(calls) and all(call.args is not None and argument_slot(call, callee, p) in call.tensors
                                   for call in calls for p in params)

    def passes_true_constants(self, fid: str, needs: Tuple[str, ...]) -> bool:
        """True when some live traced call of `fid` gives every parameter of `needs` as a true
        constant (`self.inner(x, flat=True)`): a branch testing them runs whenever that call does,
        a deprecation branch too."""
        if not needs or any(p[:1] in ("-", "!") or p.startswith(("self.", KEY)) or VALUE in p for p in needs):
            return False
        callee = self.project.functions[fid][1]
        for caller, call in self._incoming().get(fid, []):
            if not self.live(caller, call):
                continue
            given = dict(call.forwards)  # with unknown arguments (`**kw` handed on), by keyword only
            if all(_true_constant(given.get(argument_slot(call, callee, p) if call.args is not None else p)) for p in needs):
                return True
        return False

    def _gives(self, caller: str, call: Call, callee: FunctionInfo, param: str) -> bool:
        """Does this call give `param`: passed, and not an optional parameter of the caller that
        no traced call of the caller gives in turn; for a need of given constants (`p='warn'`),
        not another constant."""
        param, _, values = param.partition(VALUE)
        if not passes(call, callee, param):
            return False
        if call.args is None or not call.forwards or param.startswith("*") and not param.startswith(KEY):
            return True
        slot = argument_slot(call, callee, param)
        if slot is None:  # only the caller's own *args/**kwargs can give it
            # a key the callee reads from its `**kwargs` is one a user adds to `model(x)`: it is not
            # filled in by a decorator of the root, as a named argument may be (`lenient`)
            return caller not in self.roots or self.lenient and not param.startswith(KEY)
        own = next((name for at, name in call.forwards if at == slot), None)
        if own == NONE:
            return False  # `f(x, mask=None)`
        if own is not None and own.startswith(VALUE):
            return not values or _equals_one_of(own[len(VALUE):], values)  # `f(x, mode="nan")`
        if own is not None and own.startswith("self."):
            return not self.defaults.at_default(caller, own[5:], self.user_inits)
        if own is not None and own.startswith(NUMBER):
            if values and _all_strings(values):
                return False  # `p: float` handed on to a test `p == "warn"`: a number equals no string
            own = own[len(NUMBER):]
        if own is not None and own.startswith(REQUIRED):
            if not values:
                return True  # a parameter without a default: always a value
            own = own[len(REQUIRED):]  # which constants its callers give decides `p == "warn"`
        if own is None or (caller, own) in self._asking:
            return True  # a value of the caller's own making; or a cycle, which decides nothing
        self._asking.add((caller, own))
        try:
            return not self.unpassed(caller, (own + VALUE + values if values else own,))
        finally:
            self._asking.discard((caller, own))

    def live(self, caller: str, call: Call) -> bool:
        """A call runs unless it sits under `if`s needing what no call of its caller gives
        (`if len(caches) == 1: DynamicCache(data)` when every caller passes two caches)."""
        if not call.needs:
            return True
        key = (caller, call)
        if key not in self._live:
            self._live[key] = True  # a cycle decides nothing
            self._live[key] = not self.unpassed(caller, call.needs)
        return self._live[key]

    def _incoming(self) -> Dict[str, List[Tuple[str, Call]]]:
        if self._calls is None:
            self._calls = self.calls.callers(self.project, self.reached)
            if any(getattr(r, "as_wrapper", False) for r in self.reached.values()):
                self._calls = {callee: [(caller, call) for caller, call in calls if self._runs(caller, call)]
                               for callee, calls in self._calls.items()}
        return self._calls

    def _runs(self, caller: str, call: Call) -> bool:
        """A call of a decorator reached as its wrapper runs only in the wrapper's `def`."""
        if not getattr(self.reached.get(caller), "as_wrapper", False):
            return True
        info = self.project.functions[caller][1]
        return info.wrapper[0] <= call.row - info.row <= info.wrapper[1]
