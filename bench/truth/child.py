"""Run ONE model of the truth corpus under torch.compile and print what Dynamo did, as JSON.

    python bench/truth/child.py LIB NAME
    python bench/truth/child.py --lines LIB NAME   # eager only: the library lines each mode runs
    python bench/truth/child.py [--lines] LIB NAME VARIANT   # the model built as a variant (models.VARIANTS)

The model is built small (models.py), run once in eager (a model that fails there is not in the
corpus; a `fresh` variant is then built again, never called), then compiled with the `eager`
backend (Dynamo alone decides breaks and recompiles; no code generation) in two modes, each on a
fresh Dynamo:
  eval:  `model.eval()`, under `torch.no_grad()`, called 3 times on the same inputs;
  train: `model.train()`, forward + backward of the outputs' sum, 2 times.
Breaks and recompiles are read with compilelint's verify machinery (the graph_breaks/recompiles
log artifacts plus the compilation metrics; `explain()` under-reports). Each event keeps Dynamo's
gb_type and the innermost frame inside the model's library (`site`), which is what a static
finding can point at.
"""
from __future__ import annotations

import json
import os
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

EVAL_CALLS = 3
TRAIN_CALLS = 2


def _floats(out):
    import torch

    if isinstance(out, torch.Tensor):
        return [out] if out.is_floating_point() and out.requires_grad else []
    if isinstance(out, dict) or hasattr(out, "to_tuple"):
        out = list(out.values()) if isinstance(out, dict) else list(out.to_tuple())
    if isinstance(out, (list, tuple)):
        return [t for o in out for t in _floats(o)]
    return []


def _relative(path: str, lib: str) -> str:
    """`.../site-packages/transformers/models/bert/modeling_bert.py` → `transformers/models/...`."""
    path = path or ""
    idx = path.rfind(f"/{lib}/")
    return path[idx + 1:] if idx >= 0 else ""


def _site(event, lib):
    """The innermost frame of the event inside `lib`: the break's own line when Dynamo reports
    one there, else the deepest library frame of its user stack."""
    own = _relative(event.get("file", ""), lib)
    if own:
        fn = event["stack"][-1][2] if event.get("stack") else ""
        return own, event["line"], fn
    for file, line, fn in reversed(event.get("stack") or []):
        rel = _relative(file, lib)
        if rel:
            return rel, line, fn
    return "", 0, ""


def _skipped_frame(event, lib) -> dict:
    """`{"frame": [file, first line, code name]}` of the library frame Dynamo gave up on (the
    scorer: none of its lines ran compiled), or {}."""
    file, first, name = event.get("frame") or ("", 0, "")
    rel = _relative(file, lib)
    return {"frame": [rel, first, name]} if rel else {}


def _events(raw, lib):
    out = []
    for e in raw:
        file, line, fn = _site(e, lib)
        out.append({
            "event": e["event"], "gb_type": e.get("gb_type", ""), "reason": (e.get("reason") or "")[:300],
            "file": file, "line": line, "function": fn, "count": e.get("count", 1),
            "raw_file": _relative(e.get("file") or "", "site-packages") or os.path.basename(e.get("file") or ""),
            "raw_line": e.get("line", 0), "input_driven": e.get("input_driven", False),
            **_skipped_frame(e, lib),
        })
    return out


def run_mode(model, inputs, mode, lib):
    import torch

    from compilelint.verify.child import reset_dynamo
    from compilelint.verify.events import Capture, dedupe, metrics_events, one_line

    reset_dynamo()
    error = ""
    model.train(mode == "train")
    compiled = torch.compile(model, backend="eager")
    t0 = time.perf_counter()
    with Capture() as cap:
        try:
            if mode == "eval":
                with torch.no_grad():
                    for _ in range(EVAL_CALLS):
                        compiled(**inputs)
            else:
                for _ in range(TRAIN_CALLS):
                    grads = _floats(compiled(**inputs))
                    if grads:
                        sum(g.float().sum() for g in grads).backward()
                    model.zero_grad(set_to_none=True)
        except Exception as e:
            error = one_line(e)
    events = _events(dedupe(cap.events + metrics_events()), lib)
    return {"events": events, "error": error, "seconds": round(time.perf_counter() - t0, 2)}


def _eager_call(model, inputs):
    """One eval call without grad: the check that a model runs, which the compiled runs follow."""
    import torch

    model.eval()
    with torch.no_grad():
        model(**inputs)


def eager_lines(lib, name, variant=None):
    """The library lines the eager run executes, per mode (see lines.py), after the eager call the
    compiled runs follow too, and whether it ran."""
    import torch

    import models
    from lines import ExecutedLines

    from compilelint.verify.events import one_line

    torch.set_num_threads(1)
    record = {"lib": lib, "name": name, "torch": torch.__version__, **({"variant": variant} if variant else {})}
    try:
        model, inputs = models.build(lib, name, variant)
    except Exception as e:
        return dict(record, status="build-error", error=one_line(e))
    # The compiled runs (`main`) follow an eager call, and a first call can change the model
    # (BigBird switches to full attention, FSMT grows its positions): what they execute is what a
    # second call does, so the lines are recorded after the same eager call (not for a fresh variant).
    if not models.is_fresh(lib, name, variant):
        try:
            _eager_call(model, inputs)
        except Exception as e:
            return dict(record, status="eager-error", error=one_line(e))
    record["status"] = "ok"
    for mode in ("eval", "train"):
        model.train(mode == "train")
        error = ""
        with ExecutedLines(lib) as seen:
            try:
                if mode == "eval":
                    with torch.no_grad():
                        model(**inputs)
                else:
                    grads = _floats(model(**inputs))
                    if grads:
                        sum(g.float().sum() for g in grads).backward()
            except Exception as e:
                error = one_line(e)
        record[mode] = {"error": error, "lines": seen.by_file(), "columns": seen.columns_by_file()}
    return record


def main(lib, name, variant=None):
    import torch

    import models

    torch.set_num_threads(1)
    record = {"lib": lib, "name": name, "torch": torch.__version__, **({"variant": variant} if variant else {})}
    try:
        model, inputs = models.build(lib, name, variant)
        record["file"], record["class"] = models.defining_class(model)
    except Exception as e:
        from compilelint.verify.events import one_line
        record["status"] = "build-error"
        record["error"] = one_line(e)
        return record
    try:
        _eager_call(model, inputs)
        if models.is_fresh(lib, name, variant):  # that call checked eager; compile a model never called
            model, inputs = models.build(lib, name, variant)
    except Exception as e:
        from compilelint.verify.events import one_line
        record["status"] = "eager-error"
        record["error"] = one_line(e)
        return record
    record["status"] = "ok"
    for mode in ("eval", "train"):
        record[mode] = run_mode(model, inputs, mode, lib)
    return record


if __name__ == "__main__":
    import warnings

    warnings.filterwarnings("ignore")
    args = sys.argv[1:]
    if args[0] == "--lines":
        result = eager_lines(*args[1:4])
    else:
        result = main(*args[0:3])
    sys.stdout.flush()
    print("TRUTH-RESULT " + json.dumps(result))
