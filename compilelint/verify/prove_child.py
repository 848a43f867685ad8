"""Subprocess entry for proving fixes: run ONE target of a factory, seeded, eager then compiled,
and keep its outputs (and gradients in train mode) so a second run of the fixed code can be
compared with it.

    python -m compilelint.verify.prove_child SPEC.json

SPEC: {"example", "index", "mode": "eval" | "train" | "call", "seed", "backend", "device", "calls",
"trace_files", "out" (JSON lines), "save" (a .pt file for this run's values), "reference" (the .pt
file of the run to compare with, or null), "dynamo_config": {name: value}, "dynamic": true | null, "path_first": [folders first on sys.path]}.

Records (JSON lines, flushed as they go, like child.py):
    {"type": "start", "torch": ..., "device": ...}
    {"type": "count", "n": N, "modules": [whether target i is (a method of) a module, ...]}
    {"type": "reached", "lines": {file: [line, ...]}}
    {"type": "events", "events": [...]}
    {"type": "compare", "eager": VERDICT, "compiled": VERDICT}   (only with a reference)
    {"type": "timing", "round": r, "seconds": [...]}   (only with "time": {"dir", "side", "rounds",
                                                         "calls"}: nothing else is run then)
    {"type": "error", "phase": ..., "message": one line}
    {"type": "done"}
VERDICT = {"equal": "bitwise" | "allclose" | "as-accurate" | "as-compiled" | "differs" | "mismatch",
"max_abs": float, "rtol", "atol", "what": the value that differs most; as-accurate adds "rmse",
"rmse_ref", "tol", "multiplier"; as-compiled "compiled_max_abs", "multiplier"}. A saved run (the
original's) also keeps its values run in float64, the reference of as-accurate.
Eager compares the fixed code run eagerly with the reference's eager run (what the fix changes in
eager behaviour); compiled compares the compiled run of the fixed code with the reference's eager
run, allowing what the reference's own compiled run strays (`compare`).

Every phase re-seeds and rebuilds the target from the factory, so weights, dropout masks and
mutated state are the same in every run.
"""
from __future__ import annotations

import sys
from typing import Optional

from compilelint.verify.child import Results, load_factory, place, reset_dynamo, resolve_device, targets_of
from compilelint.verify.child import main as child_main
from compilelint.verify.events import Capture, dedupe, metrics_events, one_line
from compilelint.verify.trace import LineTracer


def _seed(seed: int):
    import random

    import torch

    random.seed(seed)
    torch.manual_seed(seed)
    try:
        import numpy

        numpy.random.seed(seed)
    except ImportError:
        pass


def _build(factory, index: int, seed: int, device: str, mode: str):
    import torch

    _seed(seed)
    fn, args, kwargs = place(targets_of(factory)[index], device)
    module = fn if isinstance(fn, torch.nn.Module) else getattr(fn, "__self__", None)
    if isinstance(module, torch.nn.Module) and mode in ("eval", "train"):
        module.train(mode == "train")
    return fn, args, kwargs, module


def flatten(obj, prefix="out"):
    """(path, tensor) pairs of every tensor in a nested output (tuples, lists, dicts, ModelOutput)."""
    import torch

    if isinstance(obj, torch.Tensor):
        return [(prefix, obj)]
    if isinstance(obj, dict):
        return [p for k, v in obj.items() for p in flatten(v, f"{prefix}.{k}")]
    if isinstance(obj, (tuple, list)):
        return [p for i, v in enumerate(obj) for p in flatten(v, f"{prefix}[{i}]")]
    return []


def _call(fn, args, kwargs, module, mode: str, seed: int) -> dict:
    """One seeded call → {path: tensor}; in train mode also backward and the parameters' grads."""
    import torch

    _seed(seed)
    if mode != "train":
        with torch.no_grad():
            out = fn(*args, **kwargs)
        return {p: t.detach().cpu() for p, t in flatten(out)}
    if module is not None:
        module.zero_grad(set_to_none=True)
    out = fn(*args, **kwargs)
    values = {p: t.detach().cpu() for p, t in flatten(out)}
    loss = [t.float().sum() for _, t in flatten(out) if t.requires_grad]
    if loss:
        torch.stack(loss).sum().backward()
    if module is not None:
        for name, p in module.named_parameters():
            if p.grad is not None:
                values[f"grad.{name}"] = p.grad.detach().cpu()
    return values


def compare(ref: dict, got: dict, compiled: Optional[dict] = None, fp64: Optional[dict] = None) -> dict:
    """Bitwise when every value is identical (NaN where NaN); else allclose with torch.testing's
    default tolerances for the dtype; else as-accurate when `fp64` (the original run in float64)
    is known and `got` is as close to it as `ref` is, by torch's own accuracy check
    (`torch._dynamo.utils.same`: rmse at most `multiplier` times ref's, 2×, 3× in half precision,
    plus its tol / 10): a change of rounding, not of what is computed; else as-compiled when
    `compiled` (the original code's compiled values on the same call) strays from `ref` too and
    `got` strays at most `multiplier` times as far: that much is the compiler's rounding; else
    differs. The tolerances are reported, never hidden."""
    import torch
    from torch.testing._comparison import default_tolerances

    # A gradient that is None on one side and all zeros on the other is the same derivative (a
    # parameter the fixed code multiplies by 0 instead of skipping); it is counted, not hidden.
    zero_grads = sorted(k for k in set(ref) ^ set(got) if k.startswith("grad.")
                        and not bool((ref.get(k) if k in ref else got[k]).count_nonzero()))
    ref = {k: v for k, v in ref.items() if k not in zero_grads}
    got = {k: v for k, v in got.items() if k not in zero_grads}
    if set(ref) != set(got):
        missing = sorted(set(ref) ^ set(got))
        return {"equal": "mismatch", "what": f"values differ in kind: {missing[0]}", "max_abs": None}
    verdict, worst, what, rtol_used, atol_used, allowed, rmse = "bitwise", 0.0, "", 0.0, 0.0, 0.0, (0.0, 0.0)
    for key in ref:
        a, b = ref[key], got[key]
        if a.shape != b.shape or a.dtype != b.dtype:
            return {"equal": "mismatch", "what": f"{key}: {tuple(a.shape)} {a.dtype} vs {tuple(b.shape)} {b.dtype}",
                    "max_abs": None}
        if torch.equal(a, b) or (a.is_floating_point() and torch.equal(a.isnan(), b.isnan())
                                 and torch.equal(a.nan_to_num(), b.nan_to_num())):
            continue
        if not (a.is_floating_point() or a.is_complex()):
            return {"equal": "differs", "what": key, "max_abs": None}
        rtol, atol = default_tolerances(a)
        rtol_used, atol_used = max(rtol_used, rtol), max(atol_used, atol)
        diff = float((a.double() - b.double()).abs().nan_to_num(float("inf")).max())
        if diff > worst:
            worst, what = diff, key
        if torch.allclose(a, b, rtol=rtol, atol=atol, equal_nan=True):
            verdict = "allclose" if verdict == "bitwise" else verdict
        elif (error := _rmse_within(a, b, (fp64 or {}).get(key))) is not None:
            verdict = "as-accurate" if verdict in ("bitwise", "allclose") else verdict
            if error[0] >= rmse[0]:
                rmse = error
        elif (own := _own_deviation(a, (compiled or {}).get(key))) and diff <= _multiplier(a) * own:
            verdict = "as-compiled" if verdict in ("bitwise", "allclose", "as-accurate") else verdict
            allowed = max(allowed, own)
        else:
            verdict = "differs"
    out = {"equal": verdict, "max_abs": worst, "what": what}
    if zero_grads:
        out["zero_grads"] = len(zero_grads)
    if verdict != "bitwise":
        out.update(rtol=rtol_used, atol=atol_used)
    if verdict in ("as-compiled", "as-accurate"):
        out.update(multiplier=_multiplier(ref[what]))
    if verdict == "as-compiled":
        out.update(compiled_max_abs=allowed)
    if verdict == "as-accurate":
        out.update(rmse=rmse[0], rmse_ref=rmse[1], tol=SAME_TOL)
    return out


# torch._dynamo.utils.same's default tolerance: the float64 check adds a tenth of it.
SAME_TOL = 1e-4


def _rmse_within(ref, got, fp64):
    """(got's rmse from the float64 value, ref's) when got is as accurate as ref by torch's check;
    None when it is not or the float64 value is unknown."""
    if fp64 is None or fp64.shape != ref.shape or not fp64.is_floating_point():
        return None
    exact = fp64.double()
    ref_error = float((exact - ref.double()).square().mean().sqrt())
    got_error = float((exact - got.double()).square().mean().sqrt())
    if got_error != got_error or ref_error != ref_error:  # NaN: not comparable this way
        return None
    return (got_error, ref_error) if got_error <= _multiplier(ref) * ref_error + SAME_TOL / 10 else None


def _own_deviation(ref, compiled) -> float:
    """How far the original's compiled value strays from its eager one (0.0: not known or none)."""
    if compiled is None or compiled.shape != ref.shape or compiled.dtype != ref.dtype:
        return 0.0
    return float((ref.double() - compiled.double()).abs().nan_to_num(0.0).max())


def _multiplier(t) -> float:
    import torch

    return 3.0 if t.dtype in (torch.float16, torch.bfloat16) else 2.0


def _fp64_values(factory, index: int, seed: int, device: str, mode: str) -> Optional[dict]:
    """The target run eagerly in float64 (its module and floating inputs cast): the reference of
    torch's accuracy check. None when the code does not run so (it builds float32 tensors of its own,
    say): then only the other checks apply."""
    import torch

    try:
        fn, args, kwargs, module = _build(factory, index, seed, device, mode)
        if module is not None:
            module.double()

        def wide(x):
            if isinstance(x, torch.Tensor):
                return x.double() if x.is_floating_point() else x
            if isinstance(x, (list, tuple)):
                return type(x)(wide(v) for v in x)
            if isinstance(x, dict):
                return {k: wide(v) for k, v in x.items()}
            return x

        return _call(fn, wide(args), wide(kwargs), module, mode, seed)
    except Exception:
        return None


def _resolve(dotted: str):
    import importlib

    module, _, attr = dotted.rpartition(".")
    return getattr(importlib.import_module(module), attr)


def run(spec: dict, out: Results) -> None:
    import torch

    device = resolve_device(spec["device"])
    out.emit(type="start", torch=torch.__version__, device=device)
    factory = load_factory(spec["example"], spec.get("path_first") or ())
    index, mode, seed = spec["index"], spec["mode"], spec.get("seed", 0)
    _seed(seed)
    targets = targets_of(factory)
    count = len(targets)
    out.emit(type="count", n=count, modules=[isinstance(fn, torch.nn.Module) or isinstance(
        getattr(fn, "__self__", None), torch.nn.Module) for fn, _, _ in targets])
    if index >= count:
        out.emit(type="error", phase="setup", message=f"the factory returned only {count} targets")
        return

    fn, args, kwargs, module = _build(factory, index, seed, device, mode)
    if mode == "train" and module is None:
        out.emit(type="error", phase="setup", message="not a module: no train run")
        return
    if spec.get("time"):
        reset_dynamo()
        time_compiled(torch.compile(fn, backend=spec["backend"], dynamic=spec.get("dynamic")),
                      args, kwargs, module, mode, seed, device, spec["time"], out)
        out.emit(type="done")
        return
    tracer = LineTracer(spec.get("trace_files") or ())
    try:
        with tracer:
            eager = _call(fn, args, kwargs, module, mode, seed)
    except Exception as e:
        out.emit(type="reached", lines=tracer.as_json())
        out.emit(type="error", phase="eager", message=f"raised in eager: {one_line(e)}")
        return
    out.emit(type="reached", lines=tracer.as_json())

    fn, args, kwargs, module = _build(factory, index, seed, device, mode)
    reset_dynamo()
    compiled_values, error = None, ""
    saved = {name: getattr(torch._dynamo.config, name) for name in spec.get("dynamo_config") or {}}
    try:
        for name, value in (spec.get("dynamo_config") or {}).items():
            if name == "reorderable_logging_functions":  # dotted names → the functions
                value = {_resolve(dotted) for dotted in value}
            setattr(torch._dynamo.config, name, value)
        with Capture() as cap:
            try:
                compiled = torch.compile(fn, backend=spec["backend"], dynamic=spec.get("dynamic"))
                for _ in range(spec.get("calls", 3)):  # repeated calls surface recompiles
                    compiled_values = _call(compiled, args, kwargs, module, mode, seed)
            except Exception as e:
                error = one_line(e)
        out.emit(type="events", events=dedupe(cap.events + metrics_events()))
    finally:
        for name, value in saved.items():
            setattr(torch._dynamo.config, name, value)
    if spec.get("save"):  # also when the compile failed: a fixed version that compiles compares with its eager run
        fp64 = _fp64_values(factory, index, seed, device, mode) if not spec.get("reference") else None
        torch.save({"eager": eager, "compiled": None if error else compiled_values, "fp64": fp64}, spec["save"])
    if error:
        out.emit(type="error", phase="compile", message=f"torch.compile failed: {error}")
        return
    if spec.get("reference"):
        reference = torch.load(spec["reference"])
        ref, fp64 = reference["eager"], reference.get("fp64")
        out.emit(type="compare", eager=compare(ref, eager, fp64=fp64),
                 compiled=compare(ref, compiled_values, compiled=reference.get("compiled"), fp64=fp64))
    out.emit(type="done")


def time_compiled(compiled, args, kwargs, module, mode: str, seed: int, device: str, plan: dict, out) -> None:
    """Time the compiled target in rounds that take turns with another child (fix_timing.py): after
    two warm-up calls (compilation), round r starts when the file `go-{side}-{r}` appears in
    `plan["dir"]`, times `plan["calls"]` calls (synchronised on CUDA), reports their seconds and
    leaves `done-{side}-{r}`."""
    import os
    import time

    import torch

    def sync():
        if device.startswith("cuda"):
            torch.cuda.synchronize()

    for _ in range(2):
        _call(compiled, args, kwargs, module, mode, seed)
    sync()
    folder, side = plan["dir"], plan["side"]
    for r in range(plan["rounds"]):
        go = os.path.join(folder, f"go-{side}-{r}")
        while not os.path.exists(go):
            time.sleep(0.001)
        seconds = []
        for _ in range(plan["calls"]):
            start = time.perf_counter()
            _call(compiled, args, kwargs, module, mode, seed)
            sync()
            seconds.append(time.perf_counter() - start)
        out.emit(type="timing", round=r, seconds=seconds)
        open(os.path.join(folder, f"done-{side}-{r}"), "w").close()


def main(argv=None) -> int:
    return child_main(argv, runner=run)


if __name__ == "__main__":
    sys.exit(main())
