"""Which reached functions Dynamo runs as frames of their own, per mode (eval / train).

Dynamo compiles the root's frame and inlines what it calls. A graph break inside an inlined call
unwinds the inlining: every function on the call path from the root down to the break runs as a
frame of its own (its code object gets its own cache entries and guards). A break inside a loop
skips the whole frame (Dynamo cannot resume inside a loop), so every function it calls becomes a
frame, and one called inside that loop is entered again and again within one call.

This is what a recompile across call sites needs: one code object entered as a frame with other
guards (another `type(self)`, another number of positional arguments, state the previous entry
changed). Measured on torch 2.13 (backend eager): a decorator's inner wrapper shared by an
encoder's and a model's `forward` recompiles once when the encoder breaks, never when nothing
breaks (everything is inlined into one frame).

The breaks are the reached break candidates of the rules (kind "break") in that mode, except those
under a test of the module's own settings (bart's layerdrop break sits under `self.layerdrop > 0`,
0 by default, and never runs; the config flags of a path are decided elsewhere).

The project pass computes the frames of both modes once (`all_frames`), and the language server
keeps a `FramesMemo` between passes: each reached function's part (its calls' callees, its breaks)
is kept while the function's summary entry is the same object, it is reached in the same mode,
and the project index answers as before (the server starts a new memo when it rebuilds the
index); only the cheap assembly of the whole (which callees are reached, paths to breaks,
skipped frames) runs on every pass, so an edit that changes what is reached reuses them too. Loops
come from the parsed modules the pass is given (`trees.Trees`: the server's in-memory ones).
"""
from __future__ import annotations

import ast
import functools
from dataclasses import dataclass, field
from typing import Dict, Iterable, List, Optional, Set, Tuple

from compilelint.analysis.regions import edge_mode, meet
from compilelint.analysis.resolved_calls import ResolvedCalls
from compilelint.analysis.trees import Trees
from compilelint.rule import registry

MODES = ("eval", "train")


@dataclass
class Frames:
    """Frames of one mode: fid → why it is a frame, the call edges between reached functions, and
    the frames entered inside a loop of a skipped frame (repeatedly within one call)."""

    mode: str
    why: Dict[str, str] = field(default_factory=dict)
    edges: Dict[str, List[Tuple[str, object]]] = field(default_factory=dict)  # caller → [(callee, Call)]
    callers: Dict[str, List[Tuple[str, object]]] = field(default_factory=dict)  # callee → [(caller, Call)]
    repeated: Set[str] = field(default_factory=set)


def _runs_in(mode: str, wanted: str) -> bool:
    return mode in ("any", wanted)


@functools.lru_cache(maxsize=1)
def _break_codes() -> frozenset:
    return frozenset(code for code, rule in registry().items() if rule.kind == "break" and not rule.verify_event)


class FramesMemo:
    """What one pass's frames leave for the next, for a project whose index answers every name
    question as before (a new index: a new memo)."""

    def __init__(self, calls: Optional[ResolvedCalls] = None):
        self.calls = calls if calls is not None else ResolvedCalls()
        self.parts: Dict[str, tuple] = {}  # fid → (its FunctionInfo, its reach mode, {mode: (edges, breaks)})

    def part(self, project, fid: str, mode_reached: str) -> Dict[str, tuple]:
        """The function's call edges to other project functions (reached or not) and its break
        candidates, per mode, when it is reached in `mode_reached`."""
        info = project.functions[fid][1]
        entry = self.parts.get(fid)
        if entry is not None and entry[0] is info and entry[1] == mode_reached:
            return entry[2]
        out = {mode: ([], []) for mode in MODES}
        for call, callees in self.calls.of(project, fid):
            m = meet(mode_reached, edge_mode(call.guards))
            if m == "never" or project.dead(call.guards):
                continue
            targets = [(callee, call) for callee in callees if callee != fid]
            for mode in MODES:
                if _runs_in(m, mode):
                    out[mode][0].extend(targets)
        for c in info.candidates:
            if c.code not in _break_codes() or "self." in c.when:
                continue  # under a test of the module's own settings (`self.layerdrop > 0`, 0 by default): may never run
            m = meet(mode_reached, edge_mode(c.guards))
            if m != "never" and not project.dead(c.guards):
                for mode in MODES:
                    if _runs_in(m, mode):
                        out[mode][1].append(c)
        self.parts[fid] = (info, mode_reached, out)
        return out


def all_frames(project, reached: Dict[str, object], roots: Iterable[str], trees: Trees,
               memo: Optional[FramesMemo] = None) -> Dict[str, Frames]:
    """The frames of each mode for the compiled models (`reached` from their roots)."""
    memo = memo if memo is not None else FramesMemo()
    out = {mode: Frames(mode) for mode in MODES}
    breaking: Dict[str, Dict[str, List[int]]] = {mode: {} for mode in MODES}  # fid → rows of its breaks
    for fid, r in reached.items():
        part = memo.part(project, fid, r.mode)
        for mode in MODES:
            edges, breaks = part[mode]
            edges = [edge for edge in edges if edge[0] in reached]
            if edges:
                out[mode].edges[fid] = edges
                callers = out[mode].callers
                for callee, call in edges:
                    callers.setdefault(callee, []).append((fid, call))
            if breaks:
                breaking[mode][fid] = [c.span.row for c in breaks]
    roots = list(roots)
    for mode in MODES:
        _assemble(project, out[mode], roots, breaking[mode], reached, trees)
    return out


def frames(project, reached: Dict[str, object], roots: Iterable[str], mode: str, trees: Trees) -> Frames:
    """The frames of `mode` for one compiled model (`reached` from its roots)."""
    return all_frames(project, reached, roots, trees)[mode]


def _assemble(project, out: Frames, roots: List[str], breaking: Dict[str, List[int]], reached, trees: Trees) -> None:
    """The frames from the edges and breaks of one mode."""
    for fid in roots:
        if fid in reached and not out.callers.get(fid):  # a root no other reached code calls
            out.why[fid] = "the compiled root"
    # every function on a path from a root to a break: the ancestors of the breaking functions
    todo = list(breaking)
    for fid in todo:
        out.why.setdefault(fid, "graph-breaks (line %d)" % breaking[fid][0])
    while todo:
        fid = todo.pop()
        for caller, _ in out.callers.get(fid, ()):
            if caller not in out.why:
                out.why[caller] = "calls code that graph-breaks"
                todo.append(caller)
    path = set(breaking) | {f for f, why in out.why.items() if why == "calls code that graph-breaks"}
    # skipped frames: a break inside a loop, or a call into breaking code inside one → everything
    # the frame calls runs as a frame, what it calls in that loop once per iteration
    skipped = []
    for fid in path:
        loops = _loops_of(project, fid, trees)
        rows = breaking.get(fid, []) + [call.row for callee, call in out.edges.get(fid, ()) if callee in path]
        if any(lo <= row <= hi for row in rows for lo, hi in loops):
            skipped.append(fid)
    for fid in skipped:
        loops = _loops_of(project, fid, trees)
        for callee, call in out.edges.get(fid, ()):
            if any(lo <= call.row <= hi for lo, hi in loops):
                out.repeated.add(callee)
            if callee not in out.why:
                out.why[callee] = f"called from {project.functions[fid][1].qualname}, a skipped frame"


def function_node(project, fid: str, trees: Trees) -> Optional[ast.AST]:
    """The `def` of a project function, from the pass's parsed modules."""
    summary, info = project.functions[fid]
    return trees.function(summary.path, info.row)


def _loops_of(project, fid: str, trees: Trees) -> List[Tuple[int, int]]:
    node = function_node(project, fid, trees)
    if node is None:
        return []
    return [(node.lineno + lo, node.lineno + hi) for lo, hi in trees.derived(node, "loops", _loop_offsets)]


def _loop_offsets(fn: ast.AST) -> List[Tuple[int, int]]:
    """The function's loops, (first row, last row) counted from its `def` line."""
    return [(n.lineno - fn.lineno, (n.end_lineno or n.lineno) - fn.lineno)
            for n in ast.walk(fn) if isinstance(n, (ast.For, ast.While, ast.AsyncFor))]


def components(fr: Frames) -> List[Set[str]]:
    """The frames of each compiled root (a root and the frames reachable from it): one process
    compiles one model, so a code object is shared only within one root's frames."""
    out = []
    for root in (f for f, why in fr.why.items() if why == "the compiled root"):
        seen, todo = {root}, [root]
        while todo:
            for callee, _ in fr.edges.get(todo.pop(), ()):
                if callee not in seen:
                    seen.add(callee)
                    todo.append(callee)
        out.append({f for f in seen if f in fr.why})
    return out


def positional_count(project, caller: str, call, trees: Trees) -> Optional[int]:
    """How many positional arguments the call at `call.row` passes (None: unknown, `*args`)."""
    node = function_node(project, caller, trees)
    if node is None:
        return None
    found = [n for n in ast.walk(node) if isinstance(n, ast.Call) and n.lineno == call.row]
    found.sort(key=lambda n: abs(n.col_offset + 1 - call.col))
    if not found or any(isinstance(a, ast.Starred) for a in found[0].args):
        return None
    return len(found[0].args)
