"""Placing the per-file candidates: which of them become findings, and under which region.

A candidate (what a rule saw in a function) becomes a finding when its function is reached by
torch.compile in a mode its guards allow, its config flags and optional arguments can hold for the
compiled model, and its condition is met (CUDA graphs). A break that Dynamo meets only after one
it cannot resume from (a break in a loop, a `skips_frame` rule's, a call in a loop of a function
that always breaks: `callee_skips`) is kept, marked hidden by it.
"""
from __future__ import annotations

from dataclasses import replace
from typing import List

from compilelint.analysis import config_flags, passed_args
from compilelint.analysis.misuse import MISUSE, NOTE as MISUSE_NOTE
from compilelint.analysis.state import STATE
from compilelint.analysis.self_items import NON_TENSOR_ITEM, grows_registered_lists, only_tensor_items
from compilelint.project_pass.callee_skips import call_skips
from compilelint.project_pass.regions import Project, held_mode
from compilelint.project_pass.resolved_calls import ResolvedCalls
from compilelint.config import Settings
from compilelint.finding import Region
from compilelint.project_pass.findings import FindingBuilder
from compilelint.summary import FileSummary


def user_inits(project: Project, roots) -> frozenset:
    """The constructors a call of each `--entry` class runs: the user builds the model that is
    compiled, with arguments the project does not show."""
    out = set()
    for fid, via, *rest in roots:
        receiver = rest[-1] if rest else None
        cls = receiver or (project.defining_class(fid) if fid in project.functions else None)
        if via == "--entry" and cls:
            out.update(m for m in (project.method(cls, "__init__"), project.method(cls, "__new__")) if m)
    return frozenset(out)


def place(project: Project, summaries: List[FileSummary], roots, reached, settings: Settings,
          builder: FindingBuilder, calls: ResolvedCalls) -> None:
    """Every reached candidate that can run in the compiled code, and every file-wide one, into `builder`.
    Long because each test a candidate passes (mode, dead guards, items, grown lists, flags) is one
    line of one loop, and the memos those tests share are closures over it."""
    root_ids = {project.display(fid): fid for fid, *_ in roots if fid in project.functions}
    incoming = passed_args.Incoming(project, reached, root_ids.values(), calls, user_inits=user_inits(project, roots))
    items_memo: dict = {}
    own_first: dict = {}  # (module, function) → its calls placed as breaking in their own frame, so far

    def only_items(fid: str, region_root: str) -> bool:
        if (fid, region_root) not in items_memo:
            items_memo[fid, region_root] = only_tensor_items(project, roots, fid, root_ids.get(region_root, ""))
        return items_memo[fid, region_root]

    def beside_grown_lists(fid: str, c, region_root: str) -> bool:
        """A recompile claim that Dynamo files under another guard: the frame's registered lists
        grow every call and fail their own length guard on the same calls (the claim's fix would
        remove no recompile)."""
        if not getattr(builder.rules.get(c.code), "shadowed_by_grown_lists", False):
            return False
        if (fid, region_root, "grown") not in items_memo:
            items_memo[fid, region_root, "grown"] = grows_registered_lists(
                project, roots, fid, root_ids.get(region_root, ""), reached)
        return items_memo[fid, region_root, "grown"]

    def given_misuse(fid: str, c) -> bool:
        """A misuse branch (a deprecated flag) that traced code takes itself: dead by its misuse
        guard alone, and a traced call passes what its test needs as true constants."""
        return (MISUSE, True) in c.guards and not project.dead(tuple(g for g in c.guards if g[0] != MISUSE)) \
            and incoming.passes_true_constants(fid, c.needs)

    for summary in summaries:
        for qual, info in summary.with_candidates():  # most functions have nothing to place
            r = reached.get(f"{summary.module}.{qual}")
            if r is None:
                continue
            candidates = [c for c in info.candidates if project.on_torch(c)]  # breaks on the selected torch
            if r.as_wrapper:  # a decorator's own body runs when it decorates, not when the wrapper is called
                first, last = info.wrapper
                candidates = [c for c in candidates if first <= c.span.row - info.row <= last]
            skips = frame_skips(candidates, builder.rules, info)
            if any(c.span.row > info.row for c in candidates):  # a call whose callee always breaks, in a loop or of a built object
                skips += call_skips(project, f"{summary.module}.{qual}", info, calls, builder.rules)
            for c in candidates:
                mode = held_mode(r.mode, r.held, c.guards)
                dead = project.dead(c.guards, r.receivers if r.receivers_only else ())
                if mode == "never" or dead and not given_misuse(f"{summary.module}.{qual}", c):
                    continue
                if (NON_TENSOR_ITEM, True) in c.guards and only_items(f"{summary.module}.{qual}", r.root):
                    continue  # an arm for items that are not tensors, of an object that holds none
                if beside_grown_lists(f"{summary.module}.{qual}", c, r.root):
                    continue  # the frame recompiles every call for its growing lists: Dynamo names them
                if settings.mode != "any" and mode not in ("any", settings.mode):
                    continue
                allowed, config_note = config_flags.decide(project, root_ids.get(r.root, ""), c.flags)
                if not allowed:
                    continue  # the compiled model's config class rules the path out
                if incoming.unpassed(f"{summary.module}.{qual}", c.needs) or incoming.unreached(f"{summary.module}.{qual}"):
                    continue  # needs an optional argument no traced call gives
                if c.fix_if_tensors and not incoming.gives_tensors(f"{summary.module}.{qual}", c.fix_if_tensors):
                    c = replace(c, fix=None)  # a call may pass something else than a tensor
                when = f"{c.when} ({config_note})" if c.when and config_note else c.when
                if (MISUSE, True) in c.guards and MISUSE_NOTE not in r.condition:
                    when = f"{MISUSE_NOTE} ({when})" if when else MISUSE_NOTE
                hidden = hidden_by(c, skips, info)
                if c.condition == OWN_FRAME:
                    skip = eager_skip(c, skips, candidates, builder.rules)
                    if skip is None:
                        continue  # traced in its frame: the call is inlined, and breaks nowhere
                    # an earlier such call that runs whenever this one does stands for it (Dynamo logs one)
                    earlier = own_first.setdefault((summary.module, qual), [])
                    hidden = next((e.span.row for e in earlier if runs_before(e, c)), 0)
                    earlier.append(c)
                    eager = f"line {skip.span.row} skips the frame" + (f" ({skip.when})" if skip.when else "")
                    when = f"{when}, {eager}" if when else eager
                region = Region(r.root, r.reason, mode, " and ".join(x for x in (r.condition, when) if x), hidden)
                if c.condition == "cudagraph" and not (r.cudagraph or settings.profile == "vllm"):
                    continue
                builder.add(summary, qual, c, region)
        for c in summary.anywhere:
            if project.on_torch(c):
                builder.add(summary, summary.enclosing_function(c.span.row), c, None)


def frame_skips(candidates, rules, info) -> list:
    """Break candidates after which Dynamo runs the rest of the frame eager: those inside a loop
    (it cannot resume inside a loop: "frame-skipped", measured in the truth corpus, e.g. a span-masking
    helper's loop), those inside a `try` body (nor inside the block an exception handler or a
    `finally` protects: measured on torch 2.13, fixtures/precision/break_in_try.py, and in the truth
    corpus on torch 2.11), and those of rules whose break has no point to resume at (`skips_frame`)."""
    tries = [(info.row + lo, info.row + hi) for lo, hi in info.tries]
    out = []
    for c in candidates:
        rule = rules.get(c.code)
        if getattr(rule, "kind", "") != "break" or c.condition == OWN_FRAME:
            continue  # a call that breaks in its own frame only where the frame is skipped already
        in_try = any(lo <= c.span.row <= hi for lo, hi in tries)
        if c.in_loop or in_try or c.skips_frame or getattr(rule, "skips_frame", False):
            out.append(c)
    return out


OWN_FRAME = "own frame"  # a candidate's condition: a call that breaks only where its caller runs eager


def eager_skip(c, skips, candidates, rules):
    """The frame-skipping break that makes `c` run in code Dynamo runs eager, or None: one before
    `c`, or one after it with no other break between (a break in a loop skips the whole stretch of
    the frame Dynamo was tracing: from the function's entry, or from the last break it resumed
    after; measured on torch 2.13, fixtures/precision/library_call_own_frame.py, a call before the
    loop and one after it both run eager). Its tests of the module's own settings are not asked
    of `c` (a setting is the model's, and a frame once skipped stays skipped): the finding's note
    names them."""
    for s in sorted(skips, key=lambda s: s.span.row):
        if not (_unsettled(s.guards) <= set(c.guards) and set(s.flags) <= set(c.flags)
                and _unset_needs(s) <= set(c.needs)):
            continue  # `skips` holds no own-frame call (`frame_skips`); a call's skip too (`CallSkip`)
        if s.span.row < c.span.row:
            return s
        if not any(c.span.row < b.span.row < s.span.row and b.condition != OWN_FRAME
                   and getattr(rules.get(b.code), "kind", "") == "break" for b in candidates):
            return s
    return None


def runs_before(e, c) -> bool:
    """Does own-frame call `e`, before `c`, run whenever `c` does, the module's settings aside?"""
    return e.span.row < c.span.row and _unsettled(e.guards) <= set(c.guards) and set(e.flags) <= set(c.flags) \
        and _unset_needs(e) <= set(c.needs) and same_branch(_unset_when(e.when), _unset_when(c.when))


def _unset_needs(c) -> set:
    return {n for n in c.needs if not n.startswith("self.")}


def _unset_when(when: str) -> str:
    return " and ".join(t for t in when.split(" and ") if "self." not in t) if when else ""


def _unsettled(guards) -> set:
    """The guards that are not tests of a module's own settings (`analysis.state.STATE`; in
    `needs`, the `self.` ones)."""
    return {g for g in guards if not g[0].startswith(STATE)}


def hidden_by(c, skips, info) -> int:
    """The row of a frame-skipping break that Dynamo meets before `c` whenever it would meet `c`,
    or 0: an earlier break that runs whenever `c` does (its guards and condition are part of c's);
    else, for `c` in a loop, the break of the same outermost loop Dynamo meets first on the first
    iteration: the one that needs no condition in the loop, else the first in the source
    (measured in the truth corpus: a block-sparse attention's random-block plan breaks at the `if i == 1:` branch
    and its `elif`s are never traced; a break after a nested loop that its first iteration skips
    hides the one inside)."""
    for s in skips:
        if s.span.row < c.span.row and set(s.guards) <= set(c.guards) and same_branch(s.when, c.when) \
                and asks_no_more(s, c):
            return s.span.row
    loops = [(info.row + lo, info.row + hi) for lo, hi in info.loops if lo <= c.span.row - info.row <= hi]
    if not loops:
        return 0
    lo, hi = min(loops, key=lambda span: span[0] - span[1])  # the outermost: the widest
    group = [s for s in skips if lo <= s.span.row <= hi and set(s.guards) <= set(c.guards) and asks_no_more(s, c)]
    first = min(group, key=lambda s: (bool(s.when), s.span.row), default=None)
    return first.span.row if first is not None and first is not c and first.span.row != c.span.row else 0


def same_branch(outer: str, inner: str) -> bool:
    """Does code under the `if` tests `outer` (their texts joined by " and ") run only where code
    under `inner` can, each test of `outer` one of `inner`'s? As whole tests, not text: `not diag`
    is not a test of the `else` arm's `not (not diag)`."""
    return not outer or set(outer.split(" and ")) <= set(inner.split(" and "))


def asks_no_more(s, c) -> bool:
    """Does break `s` need no optional argument, setting or config flag that `c` does not need too?
    A break that runs only when a call passes `cache` is not met on the calls that reach `c` without
    one, so it cannot hide `c` there (measured on torch 2.13: a loop's break under `if prompt is not
    None:` and an early exit further down break on different calls,
    fixtures/precision/optional_break_hides_nothing.py)."""
    return set(s.needs) <= set(c.needs) and set(s.flags) <= set(c.flags)
