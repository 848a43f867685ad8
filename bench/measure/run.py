"""Measure snippets under torch.compile(backend="eager"): graph breaks, skipped frames, recompiles.

    python bench/measure/run.py bench/measure/snippets_rules.py [NAME ...]

A snippet file defines `CASES = {name: (make, calls)}`: `make()` returns the callable to compile,
`calls` is a list of argument tuples (one call each, or a callable returning them); `SOURCE`, when
set, is the file whose code the cases run (a fixture loaded with fixture.py), where the events are read. Each case runs
in a fresh Dynamo state; events come from compilelint.verify.events (the log artifacts plus the
compilation metrics, so breaks that explain() drops are seen too). The output is the evidence a
rule's gb_types are taken from: keep it next to the snippets (`*.out`).
"""
import importlib.util
import os
import sys
import sysconfig

import torch
import torch._dynamo
from compilelint.verify.events import Capture, dedupe, metrics_events, metrics_snapshot


STDLIB = sysconfig.get_paths()["stdlib"] + os.sep


def _where(path: str) -> str:
    return ("stdlib " if path.startswith(STDLIB) else "torch ") + os.path.basename(path)


def measure(make, calls):
    torch._dynamo.reset()
    fn = make()
    compiled = torch.compile(fn, backend="eager")
    skip = metrics_snapshot()
    error = ""
    with Capture() as cap:
        try:
            for args in (calls() if callable(calls) else calls):
                compiled(*args)
        except Exception as e:  # the snippet fails in eager too: say so
            error = f"{type(e).__name__}: {str(e).splitlines()[0][:160]}"
    events = dedupe(cap.events + metrics_events(skip))
    return events, error


def main(argv):
    path, names = argv[0], set(argv[1:])
    spec = importlib.util.spec_from_file_location("snippets", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    source = os.path.abspath(getattr(mod, "SOURCE", path))
    print(f"# torch {torch.__version__}, backend=eager, {os.path.basename(path)}"
          + (f" (the code of {os.path.basename(source)})" if source != os.path.abspath(path) else ""))
    for name, (make, calls) in mod.CASES.items():
        if names and name not in names:
            continue
        events, error = measure(make, calls)
        kinds = sorted({(e["event"], e["line"], e["gb_type"], e["gb_id"]) for e in events if e["file"] == source})
        # A break inside torch itself (nn.Module.__setattr__ for a rebound buffer) or in the standard
        # library it calls (copy.deepcopy) is the snippet's too.
        inside = sorted({(e["event"], f"{_where(e['file'])}:{e['line']}", e["gb_type"], e["gb_id"])
                         for e in events if e["event"] != "recompile" and e["file"] and
                         e["file"] != source and (os.sep + "torch" + os.sep in e["file"]
                                                                 or e["file"].startswith(STDLIB))})
        verdict = "clean" if not kinds and not inside else "; ".join(
            [f"{k} L{ln} {gb or ''} {gid}".strip() for k, ln, gb, gid in kinds] +
            [f"{k} in {where} {gb or ''} {gid}".strip() for k, where, gb, gid in inside])
        print(f"{name}: {verdict}" + (f"  [error: {error}]" if error else ""))
        for e in events:
            if e["event"] == "recompile" and e["file"] == source:
                print(f"    {e['reason'][:150]} (x{e.get('count', 1)})")


if __name__ == "__main__":
    main(sys.argv[1:])
