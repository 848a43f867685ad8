"""Which kind of dtype a value has, bool or floating, where a function's own code says it or hands
it on: per function, what each call's arguments are, what its returns are, and what the attention
masks of its `nn.MultiheadAttention` calls are (the facts of `rules/attention_mask_dtypes.py`).

A value is a set of alternatives (the assignments that may reach the read), each one of:
  "bool", "float", "none"             known here (`x.eq(0)`, `m.float()`, `None`);
  ("p", name, not_none)               the function's parameter, as its callers pass it (`not_none`:
                                      read under `if name is not None:`, so a None never flows);
  ("r", row, col, index, not_none)    what the call at (row from the `def`, col) returns: its whole
                                      result (index -1) or the index-th item unpacked from it.
Anything else makes the value unknown (`UNKNOWN`): the project pass then says nothing. Only the
dtype kinds that an operation fixes are known: a cast (`.float()`, `.bool()`, `.to(torch.bool)`),
a comparison, a factory without `dtype` (`torch.ones(n, n)`: the default float), and the ops that
keep their input's dtype (`masked_fill`, `transpose`, `.to(device)`, `x[i]`).
"""
from __future__ import annotations

import ast
from typing import Dict, FrozenSet, List, Optional, Tuple

from compilelint.summary import DefRow

UNKNOWN = "?"
_UNKNOWN = frozenset({UNKNOWN})
FLOAT_CASTS = frozenset({"float", "half", "double", "bfloat16"})
BOOL_METHODS = frozenset({"bool", "eq", "ne", "gt", "lt", "ge", "le", "logical_not", "logical_and", "logical_or",
                          "logical_xor", "isnan", "isinf", "isfinite", "isneginf", "isposinf"})
# Tensor methods whose result has the receiver's dtype.
KEEPS_DTYPE = frozenset({"masked_fill", "masked_fill_", "transpose", "permute", "view", "reshape", "unsqueeze",
                         "squeeze", "detach", "clone", "contiguous", "expand", "expand_as", "repeat", "flip", "triu",
                         "tril", "cuda", "cpu", "t", "roll", "flatten", "narrow", "unflatten", "movedim"})
# torch functions whose result has their first argument's dtype.
TORCH_KEEPS_DTYPE = frozenset({"triu", "tril", "transpose", "permute", "flip", "roll", "reshape", "unsqueeze",
                               "squeeze", "clone", "masked_fill"})
# torch factories that make the default float dtype when no `dtype` is given.
FLOAT_FACTORIES = frozenset({"zeros", "ones", "empty", "rand", "randn"})
FLOAT_DTYPES = frozenset({"float", "float32", "float16", "float64", "half", "double", "bfloat16"})
# The keyword names of `nn.MultiheadAttention.forward` (and `F.multi_head_attention_forward`)
# whose dtypes must agree; their positional places in the module's forward.
MASKS = ("attn_mask", "key_padding_mask")
MASK_POSITIONS = {"key_padding_mask": 3, "attn_mask": 5}


def _torch_attr(func: ast.AST) -> Optional[str]:
    """`torch.triu` → "triu"; `torch.nn.functional.x` → None (only `torch.<name>` itself)."""
    if isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name) and func.value.id == "torch":
        return func.attr
    return None


def _dtype_name(node: ast.AST) -> Optional[str]:
    """`torch.bool` → "bool", `torch.float16` → "float", other dtypes → "?"; None: not a dtype."""
    name = _torch_attr(node)
    if name is None:
        return None
    if name == "bool":
        return "bool"
    if name in FLOAT_DTYPES:
        return "float"
    return UNKNOWN if name in ("int", "long", "int64", "int32", "uint8", "int8", "int16") else None


def _device_like(node: ast.AST) -> bool:
    """`x.device`, `device`, `"cuda"`: an argument of `.to(...)` that moves and keeps the dtype."""
    if isinstance(node, ast.Attribute) and node.attr == "device":
        return True
    if isinstance(node, ast.Name) and "device" in node.id:
        return True
    return isinstance(node, ast.Constant) and isinstance(node.value, str)


class FunctionFlow:
    """The dtype facts of one function: `facts()` is what the file's summary keeps."""

    def __init__(self, fn: ast.AST, nodes: List[ast.AST]):
        self.fn = fn
        self.params = {a.arg for a in fn.args.posonlyargs + fn.args.args + fn.args.kwonlyargs}
        self.nodes = nodes
        self.assigns: Dict[str, List[Tuple[int, ast.AST, object]]] = {}  # name → [(line, statement, where)]
        self.opaque: set = set()  # names bound by what is not modelled (a `for` target)
        top = set(map(id, fn.body))
        self.top = top
        for n in nodes:
            cls = n.__class__
            if cls is ast.Assign:
                for target in n.targets:
                    self._bind(target, n, None)
            elif cls is ast.AnnAssign and n.value is not None:
                self._bind(n.target, n, None)
            elif cls in (ast.For, ast.AsyncFor):
                self.opaque.update(sub.id for sub in ast.walk(n.target) if isinstance(sub, ast.Name))
        self._narrowed: Optional[Dict[int, FrozenSet[str]]] = None

    def _bind(self, target, stmt, index):
        if isinstance(target, ast.Name):
            self.assigns.setdefault(target.id, []).append((stmt.lineno, stmt, index))
        elif isinstance(target, (ast.Tuple, ast.List)) and index is None:
            for i, elt in enumerate(target.elts):
                if isinstance(elt, ast.Starred):
                    return
                self._bind(elt, stmt, i)

    # ----- the facts ------------------------------------------------------------------------------
    def facts(self) -> Optional[dict]:
        calls, attention = {}, []
        for n in self.nodes:
            if n.__class__ is not ast.Call:
                continue
            if isinstance(n.func, ast.Attribute) and isinstance(n.func.value, ast.Name) and n.func.value.id == "self":
                masks = self._masks(n)
                if masks is not None:
                    attention.append((DefRow(n.lineno - self.fn.lineno), n.col_offset + 1, n.func.attr, *masks))
            if not isinstance(n.func, (ast.Name, ast.Attribute)):
                continue
            given = {}
            for i, arg in enumerate(n.args):
                if isinstance(arg, ast.Starred):
                    break
                v = self.value(arg, n.lineno)
                if v != _UNKNOWN:
                    given[i] = tuple(sorted(v, key=repr))
            for k in n.keywords:
                if k.arg is not None:
                    v = self.value(k.value, n.lineno)
                    if v != _UNKNOWN:
                        given[k.arg] = tuple(sorted(v, key=repr))
            if given:
                calls[DefRow(n.lineno - self.fn.lineno), n.col_offset + 1] = given
        returns: Dict[int, set] = {}
        for n in self.nodes:
            if n.__class__ is ast.Return and n.value is not None:
                if isinstance(n.value, ast.Tuple):
                    for i, elt in enumerate(n.value.elts):
                        returns.setdefault(i, set()).update(self.value(elt, n.lineno))
                else:
                    returns.setdefault(-1, set()).update(self.value(n.value, n.lineno))
        returns = {i: tuple(sorted(v, key=repr)) for i, v in returns.items() if UNKNOWN not in v}
        defaults = {a.arg: isinstance(d, ast.Constant) and d.value is None for a, d in _defaults(self.fn.args)}
        if not (calls or returns or attention):
            return None
        return {"calls": calls, "returns": returns, "attention": attention, "defaults": defaults}

    def _masks(self, call: ast.Call):
        """The two masks' values of a `self.<attr>(...)` call that passes both (by keyword, or in
        `nn.MultiheadAttention.forward`'s positional places); None when it does not."""
        found = {k.arg: k.value for k in call.keywords if k.arg in MASKS}
        for name, at in MASK_POSITIONS.items():
            if name not in found and len(call.args) > at and not any(isinstance(a, ast.Starred) for a in call.args):
                found[name] = call.args[at]
        if len(found) != 2:
            return None
        values = [self.value(found[name], call.lineno) for name in MASKS]
        if any(v == _UNKNOWN for v in values):
            return None
        return tuple(tuple(sorted(v, key=repr)) for v in values)

    # ----- values ---------------------------------------------------------------------------------
    def value(self, node: ast.AST, line: int, depth: int = 0) -> FrozenSet[object]:
        if depth > 12:
            return _UNKNOWN
        cls = node.__class__
        if cls is ast.Constant:
            return frozenset({"none"}) if node.value is None else _UNKNOWN
        if cls is ast.Name:
            return self._name(node.id, line, depth)
        if cls is ast.Compare:
            return frozenset({"bool"}) if not any(isinstance(op, (ast.Is, ast.IsNot, ast.In, ast.NotIn))
                                                  for op in node.ops) else _UNKNOWN
        if cls is ast.UnaryOp and isinstance(node.op, ast.Invert):
            inner = self.value(node.operand, line, depth + 1)
            return inner if inner == {"bool"} else _UNKNOWN
        if cls is ast.BinOp and isinstance(node.op, (ast.BitAnd, ast.BitOr)):
            both = self.value(node.left, line, depth + 1) | self.value(node.right, line, depth + 1)
            return both if both == {"bool"} else _UNKNOWN
        if cls is ast.Subscript:
            inner = self.value(node.value, line, depth + 1)
            return inner if inner and inner <= {"bool", "float"} else _UNKNOWN
        if cls is ast.IfExp:
            return self._union(self.value(node.body, line, depth + 1), self.value(node.orelse, line, depth + 1))
        if cls is ast.Call:
            return self._call(node, line, depth)
        return _UNKNOWN

    @staticmethod
    def _union(a, b):
        return _UNKNOWN if UNKNOWN in a or UNKNOWN in b else a | b

    def _call(self, node: ast.Call, line: int, depth: int) -> FrozenSet[object]:
        func = node.func
        if isinstance(func, ast.Attribute):
            torch_name = _torch_attr(func)
            if torch_name is not None:
                dtype = next((_dtype_name(k.value) for k in node.keywords if k.arg == "dtype"), None)
                if dtype is not None:
                    return frozenset({dtype}) if dtype != UNKNOWN else _UNKNOWN
                if torch_name in FLOAT_FACTORIES:
                    return frozenset({"float"})
                if torch_name in BOOL_METHODS:
                    return frozenset({"bool"})
                if torch_name in TORCH_KEEPS_DTYPE and node.args:
                    return self._kept(self.value(node.args[0], line, depth + 1))
                return _UNKNOWN
            method = func.attr
            if method in FLOAT_CASTS and not node.args:
                return frozenset({"float"})
            if method in BOOL_METHODS:
                return frozenset({"bool"})
            if method in KEEPS_DTYPE:
                return self._kept(self.value(func.value, line, depth + 1))
            if method == "to":
                return self._to(node, line, depth)
            if isinstance(func.value, ast.Name) and func.value.id == "self":
                return self._returned(node)
            return _UNKNOWN
        if isinstance(func, ast.Name):
            return self._returned(node)
        return _UNKNOWN

    def _kept(self, inner):
        return inner if inner and inner <= {"bool", "float"} else _UNKNOWN

    def _to(self, node: ast.Call, line: int, depth: int):
        dtypes = [_dtype_name(a) for a in node.args] + [_dtype_name(k.value) for k in node.keywords if k.arg == "dtype"]
        named = [d for d in dtypes if d is not None]
        if named:
            return frozenset(named) if UNKNOWN not in named else _UNKNOWN
        moves = all(_device_like(a) for a in node.args) and all(k.arg in ("device", "non_blocking") for k in node.keywords)
        return self._kept(self.value(node.func.value, line, depth + 1)) if moves else _UNKNOWN

    def _returned(self, node: ast.Call, index: int = -1, not_none: bool = False):
        if any(isinstance(a, ast.Starred) for a in node.args):
            return _UNKNOWN
        return frozenset({("r", DefRow(node.lineno - self.fn.lineno), node.col_offset + 1, index, not_none)})

    def _name(self, name: str, line: int, depth: int) -> FrozenSet[object]:
        if name in self.opaque:
            return _UNKNOWN
        before = [a for a in self.assigns.get(name, ()) if a[0] < line]
        # the last assignment at the function's top level before the read replaces all before it
        last_top = max((i for i, a in enumerate(before) if id(a[1]) in self.top), default=None)
        if last_top is not None:
            before = before[last_top:]
        out: set = set()
        if last_top is None:
            if name not in self.params:
                if not before:
                    return _UNKNOWN
            else:
                out.add(("p", name, False))
        for row, stmt, index in before:
            value = stmt.value
            if index is None:
                if isinstance(value, ast.Name) and value.id in self._narrowed_at(stmt):
                    got = frozenset({self._not_none(t) for t in self._name(value.id, row, depth + 1)})
                else:
                    got = self.value(value, row, depth + 1)
            elif isinstance(value, ast.Call):
                got = self._returned(value, index)
            elif isinstance(value, (ast.Tuple, ast.List)) and index < len(value.elts):
                got = self.value(value.elts[index], row, depth + 1)
            else:
                got = _UNKNOWN
            if UNKNOWN in got:
                return _UNKNOWN
            out |= got
        return frozenset(out)

    @staticmethod
    def _not_none(term):
        if isinstance(term, tuple):
            return term[:-1] + (True,)
        return term

    def _narrowed_at(self, stmt: ast.AST) -> FrozenSet[str]:
        """The names a statement's enclosing `if`s know are not None (`if v is not None:` body,
        `if v is None:` else)."""
        if self._narrowed is None:
            self._narrowed = {}
            self._narrow(self.fn.body, frozenset())
        return self._narrowed.get(id(stmt), frozenset())

    def _narrow(self, body, known):
        for stmt in body:
            self._narrowed[id(stmt)] = known
            if isinstance(stmt, ast.If):
                yes, no = _none_test(stmt.test)
                self._narrow(stmt.body, known | yes)
                self._narrow(stmt.orelse, known | no)
            else:
                for field in ("body", "orelse", "finalbody"):
                    inner = getattr(stmt, field, None)
                    if isinstance(inner, list) and inner and isinstance(inner[0], ast.stmt):
                        self._narrow(inner, known)
                for handler in getattr(stmt, "handlers", ()):
                    self._narrow(handler.body, known)


def _none_test(test) -> Tuple[FrozenSet[str], FrozenSet[str]]:
    """(names not None in the body, names not None in the else) of an `if` test."""
    if isinstance(test, ast.Compare) and len(test.ops) == 1 and isinstance(test.left, ast.Name) and \
            isinstance(test.comparators[0], ast.Constant) and test.comparators[0].value is None:
        if isinstance(test.ops[0], ast.IsNot):
            return frozenset({test.left.id}), frozenset()
        if isinstance(test.ops[0], ast.Is):
            return frozenset(), frozenset({test.left.id})
    if isinstance(test, ast.BoolOp) and isinstance(test.op, ast.And):
        return frozenset().union(*(_none_test(v)[0] for v in test.values)), frozenset()
    return frozenset(), frozenset()


def _defaults(args: ast.arguments):
    positional = args.posonlyargs + args.args
    pairs = list(zip(positional[len(positional) - len(args.defaults):], args.defaults))
    pairs += [(a, d) for a, d in zip(args.kwonlyargs, args.kw_defaults) if d is not None]
    return pairs


def function_facts(fn: ast.AST, nodes: List[ast.AST]) -> Optional[dict]:
    """The dtype facts of `fn` (None when it hands on and returns no dtype it knows)."""
    return FunctionFlow(fn, nodes).facts()
