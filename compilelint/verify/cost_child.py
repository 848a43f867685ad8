"""Subprocess entry for `verify --cost`: time ONE target of a factory in several versions, in one
process, interleaved.

    python -m compilelint.verify.cost_child SPEC.json

SPEC: {"example", "index", "device", "backend", "compile_mode", "seed", "out", "roots" (folders
whose modules are imported afresh for every version: the checked code and its copies),
"variants": [{"name", "pythonpath": [...], "example", "compile": bool, "dynamo_config": {...},
"dynamic": true | null, "compile_mode"?: this version's mode, else the spec's}], "min_rounds",
"max_rounds", "min_s", "budget_s", "warmup", "timing_lock"?: a file locked while timing (children
that compile side by side take turns to time)}.

Each version is imported from its own folder (the original, or a copy holding some fixes): the
modules under `roots` are dropped from `sys.modules` before it loads, so every version runs its
own code; all versions then live side by side and are timed in the same process, round after
round (timing.interleaved), in eval mode under `torch.no_grad()`. One call is timed with CUDA
events on a GPU, with a clock read after `synchronize()` elsewhere.

Records (JSON lines):
    {"type": "start", "torch", "device", "device_name"}
    {"type": "count", "n": N, "labels": [...]}
    {"type": "variant", "name", "compile_s", "first_call_s", "frames", "breaks", "recompiles",
     "outputs": VERDICT (against the original's eager outputs) | null, "error": ""}
    {"type": "samples", "samples": {name: [seconds, ...]}, "rounds", "stable", "seconds"}
    {"type": "error", "phase", "message"}
    {"type": "done"}
"""
from __future__ import annotations

import os
import sys
import time
import types

from compilelint.verify.child import Results, label_of, load_factory, reset_dynamo, resolve_device, targets_of
from compilelint.verify.child import main as child_main
from compilelint.verify.events import Capture, dedupe, one_line
from compilelint.verify.prove_child import _build, _resolve, compare, flatten
from compilelint.verify.timing import interleaved
from compilelint.verify.varying import args_at, call_count


def _forget(roots, factory_module: str) -> None:
    """Drop every module imported from `roots` (and the factory's), so the next import reads the
    next version's files."""
    roots = [os.path.realpath(r) for r in roots]
    own = os.path.dirname(os.path.dirname(os.path.realpath(__file__)))  # compilelint itself stays

    def under(real: str, root: str) -> bool:
        # an environment inside the project (.venv/.../site-packages/torch) is not the project's code
        return real.startswith(root + os.sep) and not any(
            part in ("site-packages", "dist-packages") or part.startswith(".") for part in
            real[len(root) + 1:].split(os.sep)[:-1])

    lazy, dropped = [], set()
    for name, mod in list(sys.modules.items()):
        path = module_file(mod)
        if not path and type(mod) is not types.ModuleType:
            lazy.append(name)  # a lazy proxy (a module type of its own): no file until it imports
            continue
        real = os.path.realpath(path) if path else ""
        if real.startswith(own + os.sep):
            continue
        if name == factory_module or (real and any(under(real, r) for r in roots)):
            del sys.modules[name]
            dropped.add(name.partition(".")[0])
    # A package's lazy submodules go with it: left behind, they would be the old version's objects
    # inside the next version's package. (Other file-less modules, such as an extension's
    # submodules, stay: they cannot be imported again.)
    for name in lazy:
        if "." in name and name.partition(".")[0] in dropped:
            sys.modules.pop(name, None)


def _loaded_from(folders) -> bool:
    """Whether any module now imported comes from one of `folders` (a fixed copy)."""
    folders = [os.path.realpath(f) for f in folders]
    return any(os.path.realpath(path).startswith(tuple(f + os.sep for f in folders))
               for path in (module_file(m) for m in list(sys.modules.values())) if path)


def module_file(mod) -> str:
    """The file a module was loaded from, or "". Read from the module's own namespace, never through
    its attributes: a lazy module imports its target on attribute access, and an import in the
    middle of `_forget` re-runs a package's `__init__` against half-dropped submodules ("partially
    initialized module")."""
    try:
        return vars(mod).get("__file__") or ""
    except TypeError:  # an object without a namespace in sys.modules
        return ""


def _factory_module(example: str) -> str:
    mod = example.rpartition(":")[0]
    if mod.endswith(".py") or os.sep in mod:
        return os.path.splitext(os.path.basename(mod))[0]
    return mod


def _config(variant: dict) -> dict:
    out = {}
    for name, value in (variant.get("dynamo_config") or {}).items():
        out[name] = {_resolve(d) for d in value} if name == "reorderable_logging_functions" else value
    return out


class _Config:
    """Set Dynamo settings for the calls of one version (recompiles trace under them too)."""

    def __init__(self, values: dict):
        self.values, self.saved = values, {}

    def __enter__(self):
        import torch._dynamo

        for name, value in self.values.items():
            self.saved[name] = getattr(torch._dynamo.config, name)
            setattr(torch._dynamo.config, name, value)

    def __exit__(self, *exc):
        import torch._dynamo

        for name, value in self.saved.items():
            setattr(torch._dynamo.config, name, value)
        return False


def _timer(device: str):
    """A function that runs `call()` once and returns its seconds, the device's work included."""
    import torch

    if device.startswith("cuda"):
        def timed(call):
            start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            torch.cuda.synchronize()
            start.record()
            call()
            end.record()
            end.synchronize()
            return start.elapsed_time(end) / 1e3
    else:
        def timed(call):
            t0 = time.perf_counter()
            call()
            return time.perf_counter() - t0
    return timed


def _sync(device: str) -> None:
    import torch

    if device.startswith("cuda"):
        torch.cuda.synchronize()


def _lock(path):
    """The open file `path`, locked for this process alone (blocks until it is free); None: no lock."""
    if not path:
        return None
    import fcntl

    f = open(path, "a")
    fcntl.flock(f, fcntl.LOCK_EX)
    return f


def run(spec: dict, out: Results) -> None:
    import torch
    from torch._dynamo.utils import clear_compilation_metrics, get_compilation_metrics

    device = resolve_device(spec["device"])
    out.emit(type="start", torch=torch.__version__, device=device,
             device_name=torch.cuda.get_device_name() if device.startswith("cuda") else device)
    index, seed = spec["index"], spec.get("seed", 0)
    saved_path = list(sys.path)
    timed = _timer(device)
    reset_dynamo()
    calls, reference, as_is = {}, None, None

    for n, v in enumerate(spec["variants"]):
        _forget(spec.get("roots") or [], _factory_module(v["example"]))
        sys.path[:] = list(v.get("pythonpath") or []) + saved_path
        factory = load_factory(v["example"])
        if n == 0:
            targets = targets_of(factory)
            out.emit(type="count", n=len(targets), labels=[label_of(t[0], i) for i, t in enumerate(targets)])
            if index >= len(targets):
                out.emit(type="error", phase="setup", message=f"the factory returned only {len(targets)} targets")
                return
        fn, args, kwargs, _module = _build(factory, index, seed, device, "eval")
        if v.get("pythonpath") and not _loaded_from(v["pythonpath"]):
            # The factory found the original code first (its own folder holds it): timing that as
            # the fixed version would say "no difference" for the wrong reason.
            out.emit(type="variant", name=v["name"], compile_s=0.0, first_call_s=0.0, frames=0, breaks=0,
                     recompiles=0, outputs=None, error="the example imported the original code, not the fixed copy")
            continue
        config = _config(v)
        mode = v.get("compile_mode", spec.get("compile_mode"))
        # interleaved CUDA graphs: one step per call
        mark_step = torch.compiler.cudagraph_mark_step_begin if mode in ("reduce-overhead", "max-autotune") else None
        record = {"name": v["name"], "compile_s": 0.0, "first_call_s": 0.0, "frames": 0, "breaks": 0,
                  "recompiles": 0, "outputs": None, "error": ""}
        try:
            if v.get("compile"):
                fn = torch.compile(fn, backend=spec["backend"], mode=mode, dynamic=v.get("dynamic"))
            clear_compilation_metrics()
            with _Config(config), Capture() as cap, torch.no_grad():
                t0 = time.perf_counter()
                first = fn(*args_at(args, 0), **kwargs)
                _sync(device)
                record["first_call_s"] = time.perf_counter() - t0
                # read now: under CUDA graphs the next call overwrites the outputs of this one
                values = {p: t.detach().cpu() for p, t in flatten(first)}
                for i in range(1, call_count(args, spec.get("warmup", 3))):  # warm-up: recompiles show here
                    if mark_step and v.get("compile"):
                        mark_step()
                    fn(*args_at(args, i), **kwargs)
                _sync(device)
            metrics = get_compilation_metrics()
            events = dedupe(cap.events)
            record.update(
                compile_s=sum(getattr(m, "entire_frame_compile_time_s", None) or 0.0 for m in metrics),
                frames=len(metrics),
                breaks=sum(e.get("count", 1) for e in events if e["event"] != "recompile"),
                recompiles=sum(1 for m in metrics if getattr(m, "recompile_reason", None)))
            if not v.get("compile") and reference is None:
                reference = values  # the original, eager: what every compiled version must compute
            elif reference is not None:
                record["outputs"] = compare(reference, values, compiled=as_is)
                if v["name"] == "compiled":
                    as_is = values  # how far the compiler alone strays: allowed to the others (compare)
        except Exception as e:
            record["error"] = one_line(e)
            out.emit(type="variant", **record)
            continue
        out.emit(type="variant", **record)

        def call(fn=fn, args=args, kwargs=kwargs, compiled=bool(v.get("compile")), mark_step=mark_step):
            if mark_step and compiled:
                mark_step()
            with torch.no_grad():
                fn(*args_at(args, 0), **kwargs)

        calls[v["name"]] = (call, config)
    sys.path[:] = saved_path

    if not calls:
        out.emit(type="error", phase="compile", message="no version could run")
        return
    current = {}

    def between(name):  # each version's settings stay set for its own calls, outside the timed call
        if current.get("name") != name:
            if current.get("ctx") is not None:
                current["ctx"].__exit__(None, None, None)
            current["ctx"] = _Config(calls[name][1])
            current["ctx"].__enter__()
            current["name"] = name

    held = _lock(spec.get("timing_lock"))
    try:
        measured = interleaved({name: (lambda c=c: timed(c)) for name, (c, _) in calls.items()},
                               min_rounds=spec.get("min_rounds", 10), max_rounds=spec.get("max_rounds", 400),
                               budget_s=spec.get("budget_s", 30.0), min_s=spec.get("min_s", 0.0), between=between)
    finally:
        if current.get("ctx") is not None:
            current["ctx"].__exit__(None, None, None)
        if held is not None:
            held.close()  # closing the file releases the lock
    out.emit(type="samples", samples=measured.samples, rounds=measured.rounds, stable=measured.stable,
             seconds=measured.seconds)
    out.emit(type="done")


def main(argv=None) -> int:
    return child_main(argv, runner=run)


if __name__ == "__main__":
    sys.exit(main())
