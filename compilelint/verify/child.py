"""Subprocess entry for `verify --example`: run ONE target of a factory, eagerly and compiled.

    python -m compilelint.verify.child SPEC.json

SPEC names the factory, the target index, the files to trace, device, backend, call count and the
results file. Results go to that file as JSON lines (never stdout: user code prints there), one
record per step, flushed as it goes, so when user code crashes or hangs the parent still knows how
far it got:

    {"type": "start", "torch": ..., "device": ...}
    {"type": "count", "n": N, "labels": [...]}        (target 0 only: the parent then starts the rest)
    {"type": "target", "label": ..., "entry": [file, firstline] | null}
    {"type": "phase", "phase": "eager" | "compile" | "fullgraph"}
    {"type": "reached", "lines": {file: [line, ...]}, "columns": {file: [[line, column], ...]}}
    {"type": "events", "events": [...]}
    {"type": "fullgraph", "result": "ok" | "raises: <gb_type>", "where": [file, line] | null}
    {"type": "error", "phase": ..., "message": one line}
    {"type": "done"}

The three phases each get fresh objects from the factory, so state mutated by one call (a
`self.counter += 1`) cannot leak into the next phase.
"""
from __future__ import annotations

import importlib
import inspect
import json
import os
import sys
from typing import Sequence

from compilelint.verify.events import Capture, dedupe, fullgraph_failure, metrics_events, one_line
from compilelint.verify.trace import LineTracer
from compilelint.verify.varying import Varying, args_at, call_count


class Results:
    def __init__(self, path: str):
        self.path = path

    def emit(self, **record):
        with open(self.path, "a", encoding="utf-8") as f:
            f.write(json.dumps(record, default=str) + "\n")


def load_factory(spec: str, first: Sequence[str] = ()):
    """`path/to/file.py:factory` or `dotted.module:factory` → the factory callable.

    A file inside a package is imported by its dotted name from the package's root, so its
    relative imports work and its functions keep their real file names. `first`: folders that go
    before everything on sys.path, the working folder included (a fixed copy of the code: the
    module form `mypkg.examples:make` must import `mypkg` from the copy, not from the working
    folder that holds the original)."""
    mod_part, sep, attr = spec.rpartition(":")
    if not sep or not mod_part or not attr:
        raise ValueError(f"--example must look like MODULE_OR_FILE:FACTORY, got {spec!r}")
    if mod_part.endswith(".py") or os.sep in mod_part:
        path = os.path.abspath(mod_part)
        if not os.path.isfile(path):
            raise FileNotFoundError(f"no such file: {mod_part}")
        parts = [os.path.splitext(os.path.basename(path))[0]]
        root = os.path.dirname(path)
        while os.path.isfile(os.path.join(root, "__init__.py")):
            parts.insert(0, os.path.basename(root))
            root = os.path.dirname(root)
        sys.path.insert(0, root)
        name = ".".join(p for p in parts if p != "__init__") or parts[0]
    else:
        sys.path.insert(0, os.getcwd())
        name = mod_part
    sys.path[:0] = [p for p in first if p]
    module = importlib.import_module(name)
    obj = module
    for piece in attr.split("."):
        obj = getattr(obj, piece)
    return obj


def targets_of(factory) -> list:
    """The factory returns `(callable, args, kwargs)` or an iterable of such triples."""
    got = factory()
    if isinstance(got, tuple) and len(got) == 3 and callable(got[0]):
        got = [got]
    out = []
    for item in got:
        fn, args, kwargs = item
        out.append((fn, args if isinstance(args, Varying) else tuple(args or ()), dict(kwargs or {})))
    return out


def to_device(obj, device):
    import torch

    if isinstance(obj, (torch.Tensor, torch.nn.Module)):
        return obj.to(device)
    if isinstance(obj, Varying):
        return obj.map(lambda c: to_device(c, device))
    if isinstance(obj, tuple):
        return tuple(to_device(o, device) for o in obj)
    if isinstance(obj, list):
        return [to_device(o, device) for o in obj]
    if isinstance(obj, dict):
        return {k: to_device(v, device) for k, v in obj.items()}
    return obj


def place(target, device):
    import torch

    fn, args, kwargs = target
    owner = getattr(fn, "__self__", None)
    if isinstance(fn, torch.nn.Module):
        fn = fn.to(device)
    elif isinstance(owner, torch.nn.Module):
        owner.to(device)  # a bound method such as `model.generate`: move its module in place
    return fn, to_device(args, device), to_device(kwargs, device)


def entry_of(fn):
    """The file and first line of the Python function a target enters first."""
    import torch

    if isinstance(fn, torch.nn.Module):
        fn = type(fn).forward
    fn = getattr(fn, "__func__", fn)
    try:
        fn = inspect.unwrap(fn)
    except ValueError:
        pass
    code = getattr(fn, "__code__", None)
    return [os.path.abspath(code.co_filename), code.co_firstlineno] if code is not None else None


def label_of(fn, index):
    name = type(fn).__name__ if not inspect.isroutine(fn) else getattr(fn, "__qualname__", repr(fn))
    return f"#{index} {name}"


def resolve_device(requested: str) -> str:
    import torch

    if requested == "auto":
        return "cuda" if torch.cuda.is_available() else "cpu"
    return requested


def reset_dynamo():
    import torch
    from torch._dynamo.utils import clear_compilation_metrics, counters

    torch._dynamo.reset()
    counters.clear()
    clear_compilation_metrics()


def run(spec: dict, out: Results) -> None:
    import torch
    import torch._dynamo

    device = resolve_device(spec["device"])
    out.emit(type="start", torch=torch.__version__, device=device,
             device_name=torch.cuda.get_device_name() if device.startswith("cuda") else device)
    factory = load_factory(spec["example"])
    index = spec["index"]
    first = targets_of(factory)
    if index == 0:
        out.emit(type="count", n=len(first), labels=[label_of(t[0], i) for i, t in enumerate(first)])
    if index >= len(first):
        out.emit(type="error", phase="setup", message=f"the factory returned only {len(first)} targets")
        return
    fn, args, kwargs = place(first[index], device)
    out.emit(type="target", label=label_of(fn, index), entry=entry_of(fn))

    out.emit(type="phase", phase="eager")
    tracer = LineTracer(spec["trace_files"], spec.get("column_rows"))
    try:
        with tracer:
            fn(*args_at(args, 0), **kwargs)
    except Exception as e:  # the user's code fails without torch.compile: nothing to verify
        out.emit(type="reached", lines=tracer.as_json(), columns=tracer.columns_json())
        out.emit(type="error", phase="eager", message=f"raised in eager: {one_line(e)}")
        return
    out.emit(type="reached", lines=tracer.as_json(), columns=tracer.columns_json())

    out.emit(type="phase", phase="compile")
    fn, args, kwargs = place(targets_of(factory)[index], device)
    reset_dynamo()
    compile_error = None
    with Capture() as cap:
        try:
            compiled = torch.compile(fn, backend=spec["backend"])
            for i in range(call_count(args, spec["calls"])):  # repeated calls surface recompiles
                compiled(*args_at(args, i), **kwargs)
        except Exception as e:
            compile_error = one_line(e)
    events = dedupe(cap.events + metrics_events())
    out.emit(type="events", events=events)
    if compile_error:
        out.emit(type="error", phase="compile", message=f"torch.compile failed: {compile_error}")

    out.emit(type="phase", phase="fullgraph")
    fn, args, kwargs = place(targets_of(factory)[index], device)
    reset_dynamo()
    try:
        torch.compile(fn, backend=spec["backend"], fullgraph=True)(*args_at(args, 0), **kwargs)
        out.emit(type="fullgraph", result="ok", where=None)
    except Exception as e:  # TorchDynamoException, and whatever the backend raises
        info = fullgraph_failure(e)
        out.emit(type="fullgraph", result=f"raises: {info['gb_type']}", where=info["where"])
    out.emit(type="done")


def main(argv=None, runner=None) -> int:
    """Read the spec, run it with `runner` (this module's `run`, or another child's), report failures."""
    argv = sys.argv[1:] if argv is None else argv
    with open(argv[0], encoding="utf-8") as f:
        spec = json.load(f)
    out = Results(spec["out"])
    sys.stdin = open(os.devnull)  # noqa: SIM115  (input() in user code must not block)
    try:
        (runner or run)(spec, out)
    except Exception as e:  # factory import/call failures: reported, one line
        out.emit(type="error", phase="setup", message=one_line(e))
    return 0


if __name__ == "__main__":
    sys.exit(main())
