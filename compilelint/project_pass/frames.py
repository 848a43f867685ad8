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

The breaks are the reached break candidates of the rules (kind "break") in that mode that run
with the model's defaults (`runs_by_default`): not those needing an optional argument no traced call
gives or a config flag the model's config class contradicts (as for findings), not those under a
half-precision dtype test (the fp16 clamp `x.dtype == torch.float16 and not torch.isfinite(x).all()`:
models run in float32 unless cast), no conditional log or warning (`if len(unused_kwargs) > 0:
logger.warning(...)`, a `deprecate(...)` helper: misuse and deprecation paths), and those under a test
of the module's own settings only when the config class's defaults make it true (`self.layerdrop >
0.0`: 0.0 in one config class, never runs; 0.05 in another, runs in train).

The project pass computes the frames of both modes once (`all_frames`), and the language server
keeps a `FramesMemo` between passes: each reached function's part (its calls' callees, its breaks)
is kept while the function's summary entry is the same object, it is reached in the same mode,
and the project index answers as before (the server starts a new memo when it rebuilds the
index); only the cheap assembly of the whole (which callees are reached, paths to breaks,
skipped frames, which breaks run by default) runs on every pass, so an edit that changes what is
reached reuses them too. `check` keeps instead, on disk per call graph, what the frames took from
each reached function (its edges within reach, the rows of its breaks that run by default) with
its file's content key: a later process looks again only at the functions of files that changed.
Loops, the tests around a break and which branch of `__init__` builds
which submodule come with the file summaries; the few questions about a call's own arguments parse
its function through `trees.Trees` (the server's in-memory modules).
"""
from __future__ import annotations

import ast
import functools
import re
from dataclasses import dataclass, field
from typing import Dict, Iterable, List, Optional, Set, Tuple

from compilelint.analysis import config_flags
from compilelint.project_pass import module_settings
from compilelint.project_pass.init_asserts import asserted_apart
from compilelint.project_pass.inverse import Inverse
from compilelint.analysis.passed_args import Incoming
from compilelint.project_pass.regions import edge_mode, meet
from compilelint.project_pass.resolved_calls import ResolvedCalls
from compilelint.project_pass.trees import Trees

MODES = ("eval", "train")


@dataclass
class Frames:
    """Frames of one mode: fid → why it is a frame, the call edges between reached functions, and
    the frames entered inside a loop of a skipped frame (repeatedly within one call)."""

    mode: str
    # the project index (`regions.Project`) they were worked out over: what their questions ask
    index: object = field(default=None, compare=False, repr=False)
    why: Dict[str, str] = field(default_factory=dict)
    edges: Dict[str, List[Tuple[str, object]]] = field(default_factory=dict)  # caller → [(callee, Call)]
    callers: Dict[str, List[Tuple[str, object]]] = field(default_factory=dict)  # callee → [(caller, Call)]
    repeated: Set[str] = field(default_factory=set)
    skipped: Set[str] = field(default_factory=set)  # frames a break inside one of their loops skips
    carried: Optional[list] = None  # `carried_none.hits`, once asked
    # fid → (its edges, its callees in `execution_order`'s order): kept by the memo between passes
    call_order: Dict[str, tuple] = field(default_factory=dict)
    # `execution_order`'s answers over this call graph, kept between processes (`FramesMemo.kept_chosen`)
    chosen: Optional[Dict[tuple, bool]] = field(default=None, compare=False, repr=False)
    # fid → (its file's content key, its callees in `execution_order`'s order), kept between
    # processes over this call graph (`FramesMemo.kept_orders`), with the files' content keys now
    kept_calls: Optional[Dict[str, tuple]] = field(default=None, compare=False, repr=False)
    file_keys: Dict[str, Optional[str]] = field(default_factory=dict, compare=False, repr=False)


def _runs_in(mode: str, wanted: str) -> bool:
    return mode in ("any", wanted)


class FramesMemo:
    """What one pass's frames leave for the next, for a project whose index answers every name
    question as before (a new index: a new memo)."""

    def __init__(self, calls: Optional[ResolvedCalls] = None):
        self.calls = calls if calls is not None else ResolvedCalls()
        self.parts: Dict[str, tuple] = {}  # fid → (its FunctionInfo, (its reach mode, torch), {mode: (edges, breaks)})
        self.in_reach: Dict[str, tuple] = {}  # fid → (its part, the reach, the part within that reach)
        self.call_orders: Dict[str, Dict[str, tuple]] = {mode: {} for mode in MODES}  # Frames.call_order
        self._edges = {mode: Inverse(_edge_pairs) for mode in MODES}  # the reached functions' edges, their callers
        self._roots: tuple = (None, None, None)  # (roots, the root each display names, one root per config)
        # fid → (the content key of its file, its reach mode, {mode: (its edges within reach, the
        # rows of its breaks that run by default)}): what a previous process's frames took from
        # each reached function over the same call graph, set by `check` with `file_keys` (path →
        # content key now). A function whose file has the same content is not looked at again:
        # its breaks are the same candidates, asked the same questions of the same graph.
        self.kept_frames: Optional[Dict[str, tuple]] = None
        self.file_keys: Dict[str, Optional[str]] = {}
        self.kept_grew = False  # a function was looked at that the table lacked: worth writing again
        # Kept with `kept_frames`, over the same call graph: `root_facts`' answer (set by `check`
        # to the kept one, or (None, None, None)), and `execution_order`'s (class, attribute, built
        # class) answers. Both read the graph alone (bases, attribute types, what `__init__` builds
        # under which test: `FileSummary.graph_key`), never a candidate.
        self.kept_roots: Optional[tuple] = None
        self.kept_chosen: Optional[Dict[tuple, bool]] = None
        # mode → fid → (its file's content key, its callees in `execution_order`'s order), kept
        # with them: the order reads the graph (the edges within reach, `kept_chosen`'s answers)
        # and the calls' rows, which only the function's own file moves.
        self.kept_orders: Optional[Dict[str, Dict[str, tuple]]] = None
        # The codes of the rules whose candidates are breaks (`all_frames` sets them; the same on
        # every pass over one memo, as the parts kept are made with them).
        self.break_codes: frozenset = frozenset()

    def part(self, project, fid: str, mode_reached: str) -> Dict[str, tuple]:
        """The function's call edges to other project functions (reached or not) and its break
        candidates, per mode, when it is reached in `mode_reached`."""
        info = project.functions[fid][1]
        entry = self.parts.get(fid)
        if entry is not None and entry[0] is info and entry[1] == (mode_reached, project.torch_version):
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
            if c.code not in self.break_codes or not project.on_torch(c) or c.condition == "own frame":
                continue  # "own frame": a break only where the function already skips its frame
            m = meet(mode_reached, edge_mode(c.guards))
            if m != "never" and not project.dead(c.guards):
                for mode in MODES:
                    if _runs_in(m, mode):
                        out[mode][1].append(c)
        self.parts[fid] = (info, (mode_reached, project.torch_version), out)
        return out

    def edges(self, mode: str, reached, answers) -> Inverse:
        """The edges of the functions in `reached` ((fid, its edges within reach) for each, in
        order) and the callers of each: made again only where a function's edges are another list."""
        return self._edges[mode].over(reached, answers)

    def root_facts(self, project, roots: List[str]) -> tuple:
        """(the root each reached function's `root` display names, a root per config class)."""
        if self._roots[0] != roots:
            kept = self.kept_roots
            if kept is not None and kept[0] == roots:  # a process before, over this call graph
                self._roots = kept
            else:
                self._roots = (roots, {project.display(f): f for f in roots}, _one_per_config(project, roots))
                if kept is not None:
                    self.kept_roots = self._roots
                    self.kept_grew = True
        return self._roots[1:]

    def reached_part(self, project, fid: str, mode_reached: str, reached) -> Dict[str, tuple]:
        """`part`, its edges to functions outside `reached` left out: the same object while the
        part is, and `reached` is or leaves those edges as they were."""
        part = self.part(project, fid, mode_reached)
        entry = self.in_reach.get(fid)
        if entry is not None and entry[0] is part and entry[1] is reached:
            return entry[2]
        out = {mode: ([edge for edge in edges if edge[0] in reached], breaks) for mode, (edges, breaks) in part.items()}
        if entry is not None and entry[0] is part and out == entry[2]:
            out = entry[2]  # another reach, the same edges: the same object, for what is kept by it
        self.in_reach[fid] = (part, reached, out)
        return out

    def reached_parts(self, project, reached) -> List[tuple]:
        """(fid, its reach, its `reached_part`) for every function of `reached`: the loop of
        every pass, with its common case (nothing changed since the last pass) written out."""
        functions, parts, in_reach = project.functions, self.parts, self.in_reach
        out = []
        for fid, r in reached.items():
            entry, kept = parts.get(fid), in_reach.get(fid)
            if entry is not None and kept is not None and kept[1] is reached and kept[0] is entry[2] \
                    and entry[0] is functions[fid][1] and entry[1] == r.mode:
                out.append((fid, r, kept[2]))
            else:
                out.append((fid, r, self.reached_part(project, fid, r.mode, reached)))
        return out


def all_frames(project, reached: Dict[str, object], roots: Iterable[str], break_codes: Iterable[str],
               memo: Optional[FramesMemo] = None) -> Dict[str, Frames]:
    """The frames of each mode for the compiled models (`reached` from their roots); `break_codes`:
    the rules whose candidates graph-break (kind "break")."""
    memo = memo if memo is not None else FramesMemo()
    memo.break_codes = frozenset(break_codes)
    roots = [f for f in roots if f in reached]
    incoming = Incoming(project, reached, roots, memo.calls)
    root_of, config_roots = memo.root_facts(project, roots)

    def breaking_rows(fid, r, breaks, mode) -> List[int]:
        return [c.span.row for c in breaks
                if runs_by_default(project, fid, c, root_of.get(r.root, ""), mode, incoming, config_roots)]

    if memo.kept_frames is not None:
        taken = _kept_frames(project, reached, memo, breaking_rows)
    else:
        taken = [(fid, {mode: (part[mode][0], breaking_rows(fid, r, part[mode][1], mode) if part[mode][1] else [])
                        for mode in MODES}) for fid, r, part in memo.reached_parts(project, reached)]
    out = {}
    for mode in MODES:
        edges = memo.edges(mode, reached, ((fid, by_mode[mode][0]) for fid, by_mode in taken))
        out[mode] = Frames(mode, project, edges=edges.nonempty, callers=edges.by_target, call_order=memo.call_orders[mode],
                           chosen=memo.kept_chosen, file_keys=memo.file_keys,
                           kept_calls=memo.kept_orders.setdefault(mode, {}) if memo.kept_orders is not None else None)
    breaking: Dict[str, Dict[str, List[int]]] = {mode: {} for mode in MODES}  # fid → rows of its breaks
    for fid, by_mode in taken:
        for mode in MODES:
            if by_mode[mode][1]:
                breaking[mode][fid] = by_mode[mode][1]
    for mode in MODES:
        _assemble(project, out[mode], roots, breaking[mode], reached)
    return out


def _kept_frames(project, reached, memo: FramesMemo, breaking_rows) -> List[tuple]:
    """(fid, {mode: (its edges within reach, its breaking rows)}) for every reached function: from
    `memo.kept_frames` where its file's content is the same, else made (and kept)."""
    kept, keys, functions = memo.kept_frames, memo.file_keys, project.functions
    out = []
    for fid, r in reached.items():
        key = keys.get(functions[fid][0].path)
        entry = kept.get(fid)
        if entry is not None and key is not None and entry[0] == key and entry[1] == r.mode:
            out.append((fid, entry[2]))
            continue
        part = memo.reached_part(project, fid, r.mode, reached)
        by_mode = {mode: (part[mode][0], breaking_rows(fid, r, part[mode][1], mode) if part[mode][1] else [])
                   for mode in MODES}
        if entry is None:
            memo.kept_grew = True
        if key is not None:
            kept[fid] = (key, r.mode, by_mode)
        out.append((fid, by_mode))
    return out


def _edge_pairs(edges):
    return edges  # (callee, call): the caller's entry in the callee's list is (caller, call)


def frames(project, reached: Dict[str, object], roots: Iterable[str], mode: str, break_codes: Iterable[str]) -> Frames:
    """The frames of `mode` for one compiled model (`reached` from its roots)."""
    return all_frames(project, reached, roots, break_codes)[mode]


def _assemble(project, out: Frames, roots: List[str], breaking: Dict[str, List[int]], reached) -> None:
    """The frames from the edges and breaks of one mode."""
    for fid in roots:
        if fid in reached and not out.callers.get(fid):  # a root no other reached code calls
            out.why[fid] = "the compiled root"
    # every function on a path from a root to a break: the ancestors of the breaking functions
    todo = list(breaking)
    for fid in todo:
        out.why.setdefault(fid, "graph-breaks (line %d)" % breaking[fid][0])
    path = set(breaking)  # the root too, when it calls breaking code (its loop may be skipped)
    while todo:
        fid = todo.pop()
        for caller, _ in out.callers.get(fid, ()):
            if caller not in path:
                out.why.setdefault(caller, "calls code that graph-breaks")
                path.add(caller)
                todo.append(caller)
    # skipped frames: a break inside a loop, or a call into breaking code inside one → everything
    # the frame calls runs as a frame, what it calls in that loop once per iteration
    skipped = []
    for fid in path:
        loops = _loops_of(project, fid)
        rows = breaking.get(fid, []) + [call.row for callee, call in out.edges.get(fid, ()) if callee in path]
        if any(lo <= row <= hi for row in rows for lo, hi in loops):
            skipped.append(fid)
    out.skipped.update(skipped)
    for fid in skipped:
        loops = _loops_of(project, fid)
        for callee, call in out.edges.get(fid, ()):
            if any(lo <= call.row <= hi for lo, hi in loops):
                out.repeated.add(callee)
            if callee not in out.why:
                out.why[callee] = f"called from {project.functions[fid][1].qualname}, a skipped frame"


WARNING_CODES = ("CL202", "CL203")  # logging calls, warnings.warn
HALF_DTYPE = re.compile(r"\.dtype\s*(==|is|in)\s*.*\b(float16|bfloat16|half)\b")


def runs_by_default(project, fid: str, c, root: str, mode: str, incoming: Incoming, roots: List[str]) -> bool:
    """Does break candidate `c` of `fid` run when the model compiled from `root` has its default config?"""
    if HALF_DTYPE.search(c.when) or incoming.unpassed(fid, c.needs):
        return False
    if c.when and c.code in WARNING_CODES:
        return False  # a conditional log or warning: a misuse or deprecation path (`deprecate(...)`)
    if root and not config_flags.decide(project, root, c.flags)[0]:
        return False
    if "self." not in c.when:
        return True
    # the `if`s around it (the file analysis kept their text), then its note's own condition:
    terms = _setting_terms(c.tests + ((c.when, True),))  # also the operands before the break in its own `and`
    # the config of the root reaching it; when that root declares none, any root's (several roots in
    # one check: each class's forward is one, and `reached` names only the first that got there)
    own = module_settings.evaluator(project, fid, root, mode) if root else None
    deciders = [own] if own is not None else \
        [d for d in (module_settings.evaluator(project, fid, f, mode) for f in roots) if d is not None]
    # false when no config makes every setting true: the break may never run
    return any(all(decide(term) is branch for term, branch in terms) for decide in deciders)


@functools.lru_cache(maxsize=4096)
def _setting_terms(tests: Tuple[Tuple[str, bool], ...]) -> Tuple[Tuple[ast.AST, bool], ...]:
    """The terms reading `self.` of the tests (text, branch) that must hold, each with the value it
    needs: an `and` taken (an `or` not taken) splits into its operands. The same tests come back
    on every pass of the language server, so they are parsed once; the trees are only read."""
    out = []
    for text, branch in tests:
        try:
            test = ast.parse(text, mode="eval").body
        except SyntaxError:
            continue  # the note cut short ("…"), or not an expression
        for term in (test.values if isinstance(test, ast.BoolOp) and
                     isinstance(test.op, ast.And if branch else ast.Or) else [test]):
            if "self." in ast.unparse(term):
                out.append((term, branch))
    return tuple(out)


def _one_per_config(project, roots: List[str]) -> List[str]:
    """A root for each config class the roots declare (many roots share a few configs)."""
    out: Dict[str, str] = {}
    for f in roots:
        cls = f.rsplit(".", 1)[0]
        config = config_flags.config_class(project, cls) if cls in project.classes else None
        if config is not None:
            out.setdefault(config, f)
    return list(out.values())


def function_node(project, fid: str, trees: Trees) -> Optional[ast.AST]:
    """The `def` of a project function (`project`: the index), from the pass's parsed modules."""
    summary, info = project.functions[fid]
    return trees.function(summary.path, info.row)


def _loops_of(project, fid: str) -> List[Tuple[int, int]]:
    info = project.functions[fid][1]
    return [(info.row + lo, info.row + hi) for lo, hi in info.loops]


def components_holding(fr: Frames, members: Set[str]) -> List[Tuple[str, List[str]]]:
    """(root, the `members` among the frames of its model, sorted) for each compiled root (a root
    and the frames reachable from it: one process compiles one model, so a code object is shared
    only within one root's frames). The members' callers are followed up to the roots, not every
    root's calls down: a few members against every root's reach."""
    roots_of: Dict[str, Set[str]] = {}
    for member in members:
        seen, todo = {member}, [member]
        while todo:
            for caller, _ in fr.callers.get(todo.pop(), ()):
                if caller not in seen:
                    seen.add(caller)
                    todo.append(caller)
        roots_of[member] = seen
    return [(root, sorted(m for m in members if root in roots_of[m]))
            for root, why in fr.why.items() if why == "the compiled root"]


def positional_count(fr: Frames, caller: str, call, trees: Trees) -> Optional[int]:
    """How many positional arguments the call at `call.row` passes (None: unknown, `*args`)."""
    node = function_node(fr.index, caller, trees)
    found = call_at(trees, node, call.row, call.col) if node is not None else None
    if found is None or any(isinstance(a, ast.Starred) for a in found.args):
        return None
    return len(found.args)


def call_at(trees: Trees, fn: ast.AST, row: int, col: int) -> Optional[ast.Call]:
    """The call in `fn` a summary's `Call` (row, 1-based column) stands for: on its row, the nearest column."""
    on_row = trees.derived(fn, "calls by row", _calls_by_row).get(row, ())
    found = sorted(on_row, key=lambda n: abs(n.col_offset + 1 - col))
    return found[0] if found else None


def _calls_by_row(fn: ast.AST) -> Dict[int, List[ast.Call]]:
    """A function's calls by row (a frame's calls are looked up one by one, on every pass)."""
    out: Dict[int, List[ast.Call]] = {}
    for n in ast.walk(fn):
        if isinstance(n, ast.Call):
            out.setdefault(n.lineno, []).append(n)
    return out


def exclusive(fr: Frames, a: str, b: str, trees: Optional[Trees] = None) -> bool:
    """Can frames `a` and `b` never run in one model? True when the paths to them pass through one
    submodule whose class `__init__` chooses by a test, `a`'s on one branch and `b`'s on the other
    (`self.encoder = EncoderStableLayerNorm(config) if config.do_stable_layer_norm else
    Encoder(config)`: the two layer classes share a wrapper but never meet), or through two
    submodules of one class built under two flags that its `__init__` asserts apart
    (`init_asserts`; given `trees`)."""
    ca, cb = _choices(fr.index, fr, a), _choices(fr.index, fr, b)
    if any(not (ca[k] & cb[k]) for k in ca.keys() & cb.keys()):
        return True
    if trees is None:
        return False
    project = fr.index
    for ka, sa in ca.items():
        for kb, sb in cb.items():
            if ka[0] == kb[0] and ka[1] != kb[1] and len(sa) == 1 and len(sb) == 1:
                init = project.method(ka[0], "__init__")
                row = project.classes[init.rsplit(".", 1)[0]][1].row
                if asserted_apart(project, trees, init, row + ka[2], next(iter(sa)), row + kb[2], next(iter(sb))):
                    return True
    return False


def _choices(project, fr: Frames, fid: str) -> Dict[tuple, Set[bool]]:
    """(class, attribute, row of the choosing test) → the branches taken on the paths up to `fid`."""
    out: Dict[tuple, Set[bool]] = {}
    seen, todo = {fid}, [fid]
    while todo:
        callee = todo.pop()
        for caller, call in fr.callers.get(callee, ()):
            if call.kind in ("self", "attr") and "." in caller:
                for key, branch in _assignment_branches(project, caller.rsplit(".", 1)[0], call.target,
                                                         callee.rsplit(".", 1)[0]):
                    out.setdefault(key, set()).add(branch)
            if caller not in seen:
                seen.add(caller)
                todo.append(caller)
    return out


def _assignment_branches(project, cls: str, attr: str, built: str) -> List[Tuple[tuple, bool]]:
    """Where `cls.__init__` assigns `self.<attr>` a class whose MRO holds `built`, the branches of
    the tests choosing it: [((cls, attr, row of the test), branch)] (the rows as `ClassInfo.built_under`
    counts them, from the row of the class defining that `__init__`)."""
    init = project.method(cls, "__init__")
    if init is None:
        return []
    summary, info = project.classes[init.rsplit(".", 1)[0]]
    out: List[Tuple[tuple, bool]] = []
    for names, path in info.built_under.get(attr, ()):
        if any(built in project.mro(project.canonical(f"{summary.module}.{name}")) for name in names):
            out.extend(((cls, attr, row), b) for row, b in path)
    return out


def execution_order(fr: Frames, chosen: Optional[Dict[tuple, bool]] = None) -> Dict[str, int]:
    """fid → when the compiled roots first run it: a depth-first walk of the calls in row order,
    a submodule `__init__` builds only under a test after the others (the first instance of a
    stage may lack it: a first stage built with `downsample = nn.Identity()`). `chosen`: what an
    earlier call over the same project found of (class, attribute, built class) → built under a test
    (default: the frames' kept answers, `Frames.chosen`, where there are). A function's callees
    in order come from `Frames.kept_calls` where its file has the content they were sorted in."""
    chosen = chosen if chosen is not None else fr.chosen if fr.chosen is not None else {}
    project = fr.index

    def later(caller: str, callee: str, call) -> tuple:
        if call.kind not in ("self", "attr") or "." not in caller:
            return False, call.row
        key = (caller.rsplit(".", 1)[0], call.target, callee.rsplit(".", 1)[0])
        if key not in chosen:
            chosen[key] = bool(_assignment_branches(project, *key))
        return chosen[key], call.row

    order: Dict[str, int] = {}
    for root in sorted(f for f, why in fr.why.items() if why == "the compiled root"):
        todo = [root]
        while todo:
            fid = todo.pop()
            if fid in order:
                continue
            order[fid] = len(order)
            edges = fr.edges.get(fid, ())
            kept = fr.call_order.get(fid)
            if kept is None or kept[0] is not edges:
                kept = fr.call_order[fid] = (edges, _in_order(fr, fid, edges, later))
            todo.extend(kept[1])
    return order


def _in_order(fr: Frames, fid: str, edges, later) -> List[str]:
    """A function's callees in `execution_order`'s order: kept (`Frames.kept_calls`) by its file's
    content key, else sorted. One call has no order to choose (most functions): not asked."""
    if len(edges) < 2:
        return [callee for callee, _ in edges]
    key = fr.file_keys.get(fr.index.functions[fid][0].path) if fr.kept_calls is not None else None
    entry = fr.kept_calls.get(fid) if key is not None else None
    if entry is not None and entry[0] == key:
        return entry[1]
    callees = [callee for callee, _ in sorted(edges, key=lambda e: later(fid, e[0], e[1]), reverse=True)]
    if key is not None:
        fr.kept_calls[fid] = (key, callees)
    return callees


def frame_of(fr: Frames, fid: str) -> str:
    """The frame `fid` runs in: itself when it is one, else the nearest frame calling it."""
    seen, todo = {fid}, [fid]
    while todo:
        f = todo.pop(0)
        if f in fr.why:
            return f
        for caller, _ in fr.callers.get(f, ()):
            if caller not in seen:
                seen.add(caller)
                todo.append(caller)
    return fid
