"""Calls that make Dynamo skip their caller's frame: a call of a function that breaks on every
such call, inside a loop or a `try` body of the caller, or of a method of an object the caller
builds itself.

A break inside a function Dynamo inlines is a break of the outermost frame at the call; inside a
loop of that frame Dynamo cannot resume ("graph break in loop"), so it runs the whole frame eager
(measured on torch 2.13: fixtures/precision/callee_break_in_loop.py); nor inside the body of a
`try` of that frame, the block an `except` or a `finally` protects ("Failed to handle graph break
gracefully. Skipping the function": fixtures/precision/callee_break_in_try.py, as for the frame's own
break there, `placement.frame_skips`). The caller's own breaks after
the call are never met, as after a break of its own in that loop (`placement.hidden_by`): the call
is a frame-skipping break of the caller. So is a call `b.m()` of an object the frame built (`b =
Box(x)`, `Box(x).m()`), loop or not: to resume after the break Dynamo must rebuild the bound method
of an object that exists only inside the frame, which it cannot ("Reconstruction failure"), so it
runs the whole frame eager (measured on torch 2.13: fixtures/precision/built_object_break.py; torch
2.11 in the truth corpus). The callee must break whatever the call: a break of a
`break` rule that runs on every call giving what it needs of the optional arguments
(`Candidate.every_call`, `needs`), which this call gives (or leaves out, for a `-name` need).
"""
from __future__ import annotations

from typing import List, NamedTuple, Tuple

from compilelint.analysis.passed_args import VALUE, fills, passes


class Row(NamedTuple):
    row: int


class CallSkip(NamedTuple):
    """A call read as a frame-skipping break of its caller (the fields `hidden_by` reads)."""

    span: Row
    guards: tuple
    needs: Tuple[str, ...]
    when: str = ""
    flags: tuple = ()


def call_skips(project, fid: str, info, calls, rules) -> List[CallSkip]:
    """The calls of function `fid` inside its loops or `try` bodies, or of methods of objects it
    builds, whose callee breaks on them."""
    out = []
    for call, callees in calls.of(project, fid):
        if call.kind not in ("name", "built") or not callees:
            continue  # a method may be overridden by the receiver's class: plain functions, and built objects' own
        at = call.row - info.row
        in_loop = any(lo <= at <= hi for lo, hi in info.loops) or any(lo <= at <= hi for lo, hi in info.tries)
        if not in_loop and call.kind != "built":
            continue
        if all(breaks_on(project, call, callee, rules) for callee in callees):
            out.append(CallSkip(Row(call.row), call.guards, call.needs))
    return out


def breaks_on(project, call, fid: str, rules) -> bool:
    """Does function `fid` break on every run of `call`?"""
    entry = project.functions.get(fid)
    if entry is None:
        return False
    callee = entry[1]
    for c in callee.candidates:
        rule = rules.get(c.code)
        if getattr(rule, "kind", "") != "break" or not c.every_call or c.in_loop or c.flags or c.condition:
            continue
        if project.on_torch(c) and not project.dead(c.guards) and all(_met(call, callee, n) for n in c.needs):
            return True
    return False


def _met(call, callee, need: str) -> bool:
    """Does `call` surely meet one need of the callee's break: `-p` leaves `p` out, `p` gives it a
    value. Other needs (given constants, identities, `**kwargs` keys) are not decided here."""
    if need.startswith("-"):
        return call.args is not None and not passes(call, callee, need[1:])
    if need[:1] in ("!", "*") or VALUE in need:
        return False
    return fills(call, callee, need)
