"""`compilelint verify --try-settings`: which Dynamo settings remove the breaks, measured.

Many breaks vanish with a setting instead of a code change: `.item()` with
`capture_scalar_outputs`, `nonzero()`/masks with `capture_dynamic_output_shape_ops`, print and
`warnings.warn` with `reorderable_logging_functions`, nn.LSTM/GRU/RNN submodules with `allow_rnn`,
recompiles with `dynamic=True`, branches on NumPy arrays the code holds (a space's bounds) with
`trace_numpy = False`, breaks in called functions met once per enclosing frame with
`nested_graph_breaks`. The settings tried are the ones the findings (by rule) or the observed breaks (by gb_type) point to. Each target
runs once with none of them (the reference: its eager outputs), then with each setting alone, then
greedily with the best ones together; a setting counts only when the compiled outputs still equal
the reference. The suggestion is the smallest set that removes the most breaks.
"""
from __future__ import annotations

import linecache
import os
import shutil
import tempfile
from dataclasses import dataclass, field
from typing import Callable, Dict, List, Optional, Sequence, Tuple

from compilelint.verify.prove import EQUAL, breaks, run_target

# setting → (rule codes that point to it, words of the gb_types it answers)
KNOBS: Dict[str, Tuple[frozenset, Tuple[str, ...]]] = {
    # GB0033 "Data dependent operator" is `_local_scalar_dense`: a number read out of a tensor
    # (`.item()`, `.tolist()`), which capture_scalar_outputs traces; GB0036's output shapes are the other.
    "capture_scalar_outputs": (frozenset({"CL101", "CL102", "CL103"}),
                               ("capture_scalar_outputs", "Tensor.item", "Data dependent operator")),
    # a write through a boolean mask (`x[mask] = v`, its nonzero) breaks as "Dynamic shape operator" on torch
    # 2.13 but as "Data dependent operator" on 2.11 (the GPU runs: explained_variance-style masked writes)
    "capture_dynamic_output_shape_ops": (frozenset({"CL301", "CL302", "CL105"}),
                                         ("Dynamic shape operator", "Data dependent operator")),
    "reorderable_logging_functions": (frozenset({"CL201", "CL203"}), ("Failed to trace builtin operator",)),
    # GB0014: nn.RNN/GRU/LSTM submodules (CL216) are traced, as one `aten.lstm`/`gru` op, only with this
    "allow_rnn": (frozenset({"CL216"}), ("wrap RNN",)),
    "dynamic": (frozenset({"CL401", "CL402", "CL403", "CL405"}), ()),
    # NumPy arrays in traced code become tensors in the graph, so `np.any(a != 0) or ...` on an array the
    # module holds is data-dependent (GB0170: nothing in the break says NumPy; the line does). Not
    # traced, NumPy calls run in Python (measured on torch 2.13: 3 breaks -> 1, the array comparison
    # itself still breaks; outputs equal). NumPy on tensors then breaks instead: measured per target.
    "trace_numpy": (frozenset({"CL106"}), ()),
    # A break inside a function the compiled frame calls (its traceback has more than one user frame):
    # without this Dynamo compiles every enclosing frame again up to the call and breaks there too, one
    # break per level of nesting; with it, it resumes in the inner function (torch 2.13: 6 breaks → 2
    # across three levels, bitwise, tests/test_verify_settings.py). Pointed to by the breaks' stacks.
    "nested_graph_breaks": (frozenset(), ()),
}
# the value a setting is set to (True unless named here)
VALUES = {"trace_numpy": False}
# words of the breaking line's source that point to a setting
SOURCE_WORDS = {"trace_numpy": ("np.", "numpy.")}


def spelled(knob: str) -> str:
    if knob == "dynamic":
        return "torch.compile(..., dynamic=True)"
    if knob == "reorderable_logging_functions":
        return "torch._dynamo.config.reorderable_logging_functions = {print, warnings.warn}"
    return f"torch._dynamo.config.{knob} = {VALUES.get(knob, True)}"


def run_kwargs(knobs: Sequence[str]) -> dict:
    """The child's `dynamo_config` and `dynamic` for a set of settings."""
    config = {k: VALUES.get(k, True) for k in knobs if k not in ("dynamic", "reorderable_logging_functions")}
    if "reorderable_logging_functions" in knobs:
        config["reorderable_logging_functions"] = ["builtins.print", "warnings.warn"]
    return {"dynamo_config": config, "dynamic": True if "dynamic" in knobs else None}


def pointed_to(codes: Sequence[str], gb_types: Sequence[str], sources: Sequence[str] = (),
               nested: bool = False) -> List[str]:
    """The settings the findings' rule codes, the breaks' gb_types or the breaking lines' source
    text (`sources`) point to; `nested`: a break was met in a called function (`nested_breaks`)."""
    out = []
    for knob, (rules, words) in KNOBS.items():
        if set(codes) & rules or any(w.lower() in g.lower() for g in gb_types for w in words) \
                or any(w in line for line in sources for w in SOURCE_WORDS.get(knob, ())) \
                or knob == "nested_graph_breaks" and nested:
            out.append(knob)
    return out


def nested_breaks(events) -> bool:
    """A break whose user traceback holds more than one frame: it was met in a called function."""
    return any(len(e.get("stack") or ()) > 1 for e in events if e.get("event") != "recompile")


def source_lines(events) -> List[str]:
    """The source text of the lines the breaks are at."""
    return [linecache.getline(e["file"], e["line"]) for e in events
            if e.get("event") != "recompile" and e.get("file") and e.get("line")]


@dataclass
class Trial:
    knobs: Tuple[str, ...]
    breaks: int = 0
    recompiles: int = 0
    equal: bool = True
    worst: str = ""  # how the outputs differ, when they do
    places: set = field(default_factory=set)  # (file, line) of the breaks left
    errors: List[str] = field(default_factory=list)


@dataclass
class Search:
    baseline: Trial
    trials: List[Trial]
    suggested: Optional[Trial]


def try_settings(example: str, codes: Sequence[str], *, trace_files: Sequence[str] = (), under: str = "",
                 device: str = "cpu", backend: str = "eager", timeout: float = 300.0,
                 memory_limit_mb: Optional[int] = None, copy=None,
                 progress: Optional[Callable[[int, int, str], None]] = None) -> Search:
    """Try the settings the findings (`codes`) and the baseline's breaks point to; see the module doc.
    `under`: count only the breaks in files under this folder; `copy`: run the code of this copy
    (code_copy.Copy), e.g. after its fixes."""
    tmp = tempfile.mkdtemp(prefix="compilelint-knobs-")
    kw = {"device": device, "backend": backend, "timeout": timeout, "memory_limit_mb": memory_limit_mb,
          "copy": copy}
    try:
        first = run_target(example, 0, "eval", trace_files=trace_files, save=os.path.join(tmp, "0.pt"), **kw)
        count = first.count or 0
        base_runs = [first] + [run_target(example, i, "eval", save=os.path.join(tmp, f"{i}.pt"), **kw)
                               for i in range(1, count)]
        baseline = _trial((), base_runs, under)
        events = [e for r in base_runs for e in r.events]
        knobs = pointed_to(codes, [e.get("gb_type", "") for e in events], source_lines(events), nested_breaks(events))
        done = [0]

        def trial(ks: Tuple[str, ...]) -> Trial:
            done[0] += 1
            if progress:
                progress(done[0], len(knobs) * 2, " + ".join(ks))
            runs = [run_target(example, i, "eval", reference=os.path.join(tmp, f"{i}.pt"), **kw, **run_kwargs(ks))
                    for i in range(count)]
            return _trial(ks, runs, under)

        singles = [trial((k,)) for k in knobs]
        trials = list(singles)
        good = sorted([t for t in singles if t.equal and t.breaks < baseline.breaks], key=lambda t: t.breaks)
        best = good[0] if good else None
        chosen = list(best.knobs) if best else []
        for t in good[1:]:  # greedy: add a setting while it removes more with outputs equal
            both = trial(tuple(chosen + list(t.knobs)))
            trials.append(both)
            if both.equal and both.breaks < best.breaks:
                best, chosen = both, chosen + list(t.knobs)
        return Search(baseline, trials, best)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def _trial(knobs, runs, under) -> Trial:
    t = Trial(tuple(knobs))
    for r in runs:
        t.breaks += breaks(r.events, under)
        t.places |= {(e["file"], e["line"]) for e in r.events if e["event"] != "recompile"
                     and (not under or os.path.realpath(e["file"]).startswith(os.path.realpath(under) + os.sep))}
        t.recompiles += sum(e.get("count", 1) for e in r.events if e["event"] == "recompile" and not e.get("input_driven"))
        if r.error:
            t.errors.append(r.error)
            t.equal = False
        v = (r.compare or {}).get("compiled")
        if r.compare is not None and (v or {}).get("equal") not in EQUAL:
            t.equal = False
            t.worst = t.worst or f"{v.get('equal')} ({v.get('what', '')})"
    return t


def render(search: Search) -> str:
    b = search.baseline
    lines = [f"settings: without any, {b.breaks} breaks, {b.recompiles} recompiles"]
    for t in search.trials:
        removed = b.breaks - t.breaks
        outputs = "outputs equal" if t.equal else f"outputs differ: {t.worst or '; '.join(t.errors[:1])}"
        gone = sorted(b.places - t.places)
        where = f" ({', '.join(f'{os.path.relpath(f)}:{n}' for f, n in gone[:6])}{', ...' if len(gone) > 6 else ''})" \
            if gone else ""
        lines.append(f"    {' + '.join(spelled(k) for k in t.knobs)}: removes {removed} of {b.breaks} breaks{where}, "
                     f"{t.recompiles} recompiles; {outputs}")
    s = search.suggested
    if s is None:
        lines.append("suggested: none (no setting removes a break with outputs equal)")
    else:
        lines.append(f"suggested: {'; '.join(spelled(k) for k in s.knobs)} removes {b.breaks - s.breaks} of "
                     f"{b.breaks} breaks; outputs equal")
    return "\n".join(lines) + "\n"
