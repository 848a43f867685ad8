"""How a recorded call's arguments bind to its callee's parameters, and how `Call.forwards` writes
what each argument is (a constant, None, a parameter of the caller handed on).

`passed_args` (feasibility through callers), `init_defaults` (constructor defaults) and the project
pass's `option_parts` all ask which slot of a call gives a parameter; the answer and its encoding
live here so that none of them reaches into another's private helpers.
"""
from __future__ import annotations

from compilelint.summary import Call, FunctionInfo

# The parameter name `forwarded_params` writes for an argument that is the constant None; the
# slot and name it writes when the call hands on the caller's own *args/**kwargs.
NONE = "None"
VARARGS = "*"
# What follows it in a need is the constants the test needs the parameter to equal (`p == "warn"`:
# "p='warn'", tab-separated); in a call's `forwards`, the constant an argument is (`zero_division="nan"`).
VALUE = "="
# Before a parameter handed on in a call's `forwards`: the caller annotates it as a number; it has
# no default (the call always gives a value: only a test for given constants asks the callers which).
NUMBER = "#"
REQUIRED = "^"
# A need of what an argument answers to a method (`?preds.is_floating_point=False`); in a call's
# `forwards`, under (PROBE, slot), what the caller makes sure of that argument (`raised_after`).
PROBE = "?"
# A need of code that runs only where its function returns None (`none_paths`); in a call's
# `forwards`, (DEREF, DEREF): the caller uses the result as an object right away (`f().attr`).
RETURNS_NONE = "->None"
DEREF = "."
# A need of a key of the `**kwargs` starts with it ("**debug"): only a call passing that keyword,
# or handing on its own `**kwargs`, gives it.
KEY = "**"


def handed_name(own: str) -> str:
    """The caller's parameter a `forwards` entry hands on (without the NUMBER and REQUIRED marks)."""
    return own.lstrip(NUMBER + REQUIRED)


def is_required(own: str) -> bool:
    """Is this `forwards` entry a parameter without a default handed on?"""
    return own.lstrip(NUMBER).startswith(REQUIRED)


def hands_on_varargs(call: Call) -> bool:
    """Does the call hand on its caller's own `*args`/`**kwargs` (so any parameter may be given)?"""
    return any(at == VARARGS for at, _ in call.forwards)


def receiver_offset(call: Call, callee: FunctionInfo) -> int:
    """1 when the receiver fills the callee's `self`/`cls` (a method call, a class built), else 0."""
    bound = call.kind != "name" or callee.qualname.rsplit(".", 1)[-1] in ("__init__", "__new__")
    return 1 if bound and callee.params[:1] in (("self",), ("cls",)) else 0


def argument_slot(call: Call, callee: FunctionInfo, param: str):
    """Where `call` gives `param`: its keyword, its positional index, or None (not given)."""
    npos, keywords = call.args
    if param.startswith(KEY):  # a key of the callee's `**kwargs`: by keyword only
        return param[len(KEY):] if param[len(KEY):] in keywords else None
    if param in keywords:
        return param
    if param not in callee.params:
        return None  # keyword-only, and not given by keyword
    index = callee.params.index(param) - receiver_offset(call, callee)
    return index if index < npos else None
