"""Inside the user's own program (`verify --run CMD`): wrap the flagged functions as they are imported.

The parent puts a directory on PYTHONPATH whose `sitecustomize.py` (SITECUSTOMIZE below) calls
`install()` and then chains to the sitecustomize it shadows. `install()` reads the spec named by
$COMPILELINT_VERIFY_SPEC and puts a finder first on `sys.meta_path`; when a module whose file holds
a compiled-region root is executed, the roots (`helper`, `TinyModel.forward`) are replaced by a
wrapper. On the first N real calls the wrapper

1. deep-copies the arguments (including `self`),
2. runs the original eagerly under the line tracer and hands that result to the program, which so
   behaves exactly as before, then
3. calls one `torch.compile` object per root (kept across calls, so recompiles show) on the
   copies, collecting Dynamo's break/recompile events.

When the arguments cannot be deep-copied, the compiled version runs *instead of* the eager one and
its result is returned (eager again if compiling fails). The wrapper steps aside inside a
compilation (`torch.compiler.is_compiling()`), inside another wrapper's verification, and after N
calls. Nothing of ours ever raises into user code: our failures are recorded as errors. Results
are appended as JSON lines to the spec's `out` file (one write per record, so concurrent processes
of the same command interleave whole lines).
"""
from __future__ import annotations

import copy
import functools
import importlib.abc
import json
import os
import sys

SPEC_ENV = "COMPILELINT_VERIFY_SPEC"

SITECUSTOMIZE = '''\
# Written by `compilelint verify --run`: wraps flagged functions, then chains to the real sitecustomize.
import importlib.util as _ilu
import os as _os
import sys as _sys

try:
    from compilelint.verify import hook as _hook
    _hook.install()
except Exception as _e:
    _sys.stderr.write("compilelint verify: import hook not installed: %s\\n" % (_e,))

_here = _os.path.dirname(_os.path.abspath(__file__))
_ours = _sys.modules.pop("sitecustomize", None)
_saved = list(_sys.path)
_sys.path[:] = [p for p in _sys.path if _os.path.abspath(p or ".") != _here]
try:
    if _ilu.find_spec("sitecustomize") is not None:
        import sitecustomize  # noqa: F401  (the one this file shadows)
finally:
    _sys.path[:] = _saved
    if "sitecustomize" not in _sys.modules and _ours is not None:
        _sys.modules["sitecustomize"] = _ours
'''


def _norm(path: str) -> str:
    return os.path.realpath(os.path.abspath(path))


class _Active:
    """A plain object, not threading.local: Dynamo may trace the wrapper and reads this cheaply."""

    on = False


_ACTIVE = _Active()
_SPEC: dict = {}


def _write(**record) -> None:
    try:
        line = json.dumps(record, default=str) + "\n"
        with open(_SPEC["out"], "a", encoding="utf-8") as f:
            f.write(line)
    except Exception:
        pass


def install() -> None:
    path = os.environ.get(SPEC_ENV)
    if not path or _SPEC:
        return
    with open(path, encoding="utf-8") as f:
        _SPEC.update(json.load(f))
    _SPEC["roots"] = {_norm(k): v for k, v in _SPEC["roots"].items()}
    finder = _Finder()
    sys.meta_path.insert(0, finder)
    for module in list(sys.modules.values()):  # anything imported before us (rare)
        try:
            origin = getattr(module, "__file__", None)
        except Exception:  # noqa: BLE001 (a lazy module whose deferred import fails has no file yet)
            continue
        if origin and _norm(origin) in _SPEC["roots"]:
            _patch(module, _norm(origin))
    script = sys.argv[0] if sys.argv and sys.argv[0] not in ("", "-c", "-m") else ""
    if script and os.path.isfile(script) and _norm(script) in _SPEC["roots"]:
        _watch_main(_norm(script))


def _watch_main(origin: str) -> None:
    """`python train.py` with the flagged functions in train.py itself: no import to hook, so trace
    the script's top-level frame and wrap each root as soon as its `def`/`class` has run (before
    the `__main__` block can call it), then stop tracing."""
    pending = {q for q in _SPEC["roots"][origin] if "<locals>" not in q}

    def local(frame, event, arg):
        if event in ("line", "return"):
            module = sys.modules.get("__main__")
            for qualname in sorted(pending):
                if qualname.split(".")[0] in frame.f_globals:
                    pending.discard(qualname)
                    try:
                        _patch_one(module, origin, qualname)
                    except Exception as e:
                        _write(type="error", message=f"could not wrap {qualname} in {origin}: {e}")
            if not pending or event == "return":
                sys.settrace(None)
        return local

    def watch(frame, event, arg):
        code = frame.f_code
        if code.co_name == "<module>" and _norm(code.co_filename) == origin:
            return local
        return None

    sys.settrace(watch)


class _Finder(importlib.abc.MetaPathFinder):
    def __init__(self):
        self._busy = False

    def find_spec(self, fullname, path, target=None):
        if self._busy:
            return None
        self._busy = True
        try:
            spec = None
            for finder in sys.meta_path:
                if finder is self or not hasattr(finder, "find_spec"):
                    continue
                spec = finder.find_spec(fullname, path, target)
                if spec is not None:
                    break
        finally:
            self._busy = False
        if spec is None or not spec.origin or spec.loader is None or not hasattr(spec.loader, "exec_module"):
            return spec
        origin = _norm(spec.origin)
        if origin not in _SPEC["roots"]:
            return spec
        run_module = spec.loader.exec_module

        def exec_module(module):
            run_module(module)
            _patch(module, origin)

        spec.loader.exec_module = exec_module  # this loader instance serves this spec only
        return spec


def _patch(module, origin: str) -> None:
    for qualname in _SPEC["roots"][origin]:
        try:
            _patch_one(module, origin, qualname)
        except Exception as e:
            _write(type="error", message=f"could not wrap {qualname} in {origin}: {e}")


def _patch_one(module, origin: str, qualname: str) -> None:
    parts = qualname.split(".")
    if "<locals>" in parts:
        return  # a nested function has no attribute to replace
    owner = module
    for p in parts[:-1]:
        owner = getattr(owner, p)
    name = parts[-1]
    raw = owner.__dict__.get(name) if isinstance(owner, type) else getattr(owner, name, None)
    if raw is None or getattr(raw, "__compilelint_wrapped__", False):
        return
    descriptor = type(raw) if isinstance(raw, (staticmethod, classmethod)) else None
    fn = raw.__func__ if descriptor else raw
    if not callable(fn):
        return
    wrapped = _wrapper(fn, f"{origin}:{qualname}")
    setattr(owner, name, descriptor(wrapped) if descriptor else wrapped)
    _write(type="wrapped", root=f"{origin}:{qualname}")


class _Root:
    def __init__(self, root: str, eager, entry):
        self.root = root
        self.eager = eager
        self.entry = entry
        self.calls = 0
        self.compiled = None


def _wrapper(fn, root: str):
    import torch  # the flagged module imports torch anyway

    # `@torch.compile` roots: trace and compile the original, not the compiled wrapper.
    eager = getattr(fn, "_torchdynamo_orig_callable", fn)
    code = getattr(eager, "__code__", None)
    state = _Root(root, eager, [_norm(code.co_filename), code.co_firstlineno] if code else None)
    limit = int(_SPEC.get("calls", 3))

    @functools.wraps(eager)
    def wrapper(*args, **kwargs):
        if torch.compiler.is_compiling() or _ACTIVE.on or state.calls >= limit:
            return fn(*args, **kwargs)
        return _verify_call(state, args, kwargs)

    wrapper.__compilelint_wrapped__ = True
    return wrapper


def _verify_call(state: _Root, args, kwargs):
    from compilelint.verify.events import one_line
    from compilelint.verify.trace import LineTracer

    _ACTIVE.on = True
    state.calls += 1
    record = {"type": "call", "root": state.root, "n": state.calls, "entry": state.entry}
    try:
        _start_once()
        try:
            copies = copy.deepcopy((args, kwargs))
        except Exception as e:
            copies, record["deepcopy"] = None, one_line(e)
        if copies is None:
            return _compiled_instead(state, args, kwargs, record)
        tracer = LineTracer(_SPEC["trace_files"], _SPEC.get("column_rows"))
        try:
            with tracer:
                result = state.eager(*args, **kwargs)
        except BaseException as e:
            record.update(reached=tracer.as_json(), columns=tracer.columns_json(),
                          error=f"raised in eager: {one_line(e)}")
            _write(**record)
            raise  # the program sees its own exception, as without verify
        record.update(reached=tracer.as_json(), columns=tracer.columns_json())
        events, error = _compile_call(state, copies[0], copies[1])
        record.update(events=events, error=error)
        _write(**record)
        return result
    finally:
        _ACTIVE.on = False


def _compiled_instead(state: _Root, args, kwargs, record):
    events, error, result, ok = _compile_call(state, args, kwargs, want_result=True)
    record.update(events=events, error=error, reach_unknown=True)
    _write(**record)
    return result if ok else state.eager(*args, **kwargs)


def _compile_call(state: _Root, args, kwargs, want_result=False):
    """Call the root's compiled version; never raises. Returns (events, error[, result, ok])."""
    from compilelint.verify.events import Capture, dedupe, metrics_events, metrics_snapshot, one_line

    result, ok, error, events = None, False, "", []
    try:
        import torch

        if state.compiled is None:
            state.compiled = torch.compile(state.eager, backend=_SPEC.get("backend", "eager"))
        before = metrics_snapshot()
        with Capture() as cap:
            try:
                result = state.compiled(*args, **kwargs)
                ok = True
            except Exception as e:
                error = f"torch.compile failed: {one_line(e)}"
        events = dedupe(cap.events + metrics_events(before))
    except Exception as e:
        error = f"verify could not compile: {one_line(e)}"
    return (events, error, result, ok) if want_result else (events, error)


def _start_once() -> None:
    if _SPEC.get("_started"):
        return
    _SPEC["_started"] = True
    import torch

    device = "cuda" if torch.cuda.is_available() else "cpu"
    _write(type="start", torch=torch.__version__, device=device, pid=os.getpid())
