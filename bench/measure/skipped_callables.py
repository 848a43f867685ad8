"""Which calls Dynamo refuses, asked of Dynamo itself: writes the table CL206 (untraceable-call)
reads, `compilelint/data/untraceable-<torch major.minor>.json`, for the torch that runs it.

    python bench/measure/skipped_callables.py [--out FILE]

For each public callable of the stdlib modules model code calls (MODULES; classmethods of their
classes too: `datetime.datetime.now`), of `torch`, `torch.jit` and `torch.sparse`, and for the calls
PROBES names by hand (methods of objects, builtins):
1. `torch._dynamo.trace_rules.lookup(obj)`: the variable Dynamo would build for it
   (`SkipFunctionVariable`: the function is marked as skipped; the skip reason too). A torch
   callable Dynamo puts in the graph or inlines is left out of the table.
2. A real compile of a small call of it (`torch.compile(backend=<counting backend>)`, called twice),
   where arguments can be built: PROBES' arguments, else the first of ARGUMENTS that runs eagerly
   (tried only for modules in AUTO: calling the others with made-up arguments could change the
   machine). Dynamo's graph-break counter gives the verdict: "breaks" (with the break's title and
   GB id) or "traces"; "recompiles" when the second call compiled again (the value is guarded);
   "returns": the type of what the call returned eagerly (a tensor with its layout).
   Dynamo special-cases functions of skipped files (`random.randint`, `os.path.join` trace), so
   the lookup alone decides nothing: an entry without a probe has the verdict "unprobed" and no
   rule reports it.
Everything runs in a temporary working directory; the probes touch only files made there.
"""
from __future__ import annotations

import argparse
import builtins
import contextlib
import hashlib
import importlib
import importlib.util
import inspect
import io
import json
import os
import pickle
import random
import re
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
import time
import warnings

import torch
import torch._dynamo
import torch._dynamo.trace_rules as trace_rules
from torch._dynamo.utils import counters

MODULES = ["time", "datetime", "random", "uuid", "os", "os.path", "shutil", "subprocess", "io", "sys",
           "json", "pickle", "hashlib", "copy", "inspect", "importlib", "warnings", "traceback",
           "threading", "tempfile", "glob", "pathlib", "platform", "socket"]
TORCH_MODULES = ["torch", "torch.jit", "torch.sparse"]  # and `torch.nn.utils.rnn`, by hand in probes()
# Modules whose callables may be called with ARGUMENTS to find ones that run: they read, compute
# or print, never write, delete, spawn or block.
AUTO = {"time", "datetime", "random", "uuid", "os.path", "json", "pickle", "hashlib", "copy", "inspect",
        "traceback", "glob", "platform", "pathlib"}
# Never called with made-up arguments, even in AUTO modules (they block, crash or change the process).
NEVER_AUTO = {"time.sleep", "time.pthread_getcpuclockid", "random.seed", "random.setstate", "inspect.getsource",
              "inspect.getsourcelines",
              "inspect.getsourcefile", "inspect.findsource", "inspect.getblock", "inspect.stack",
              "inspect.trace", "traceback.clear_frames", "traceback.walk_stack", "traceback.walk_tb"}


class Plain:
    """A plain object with a number attribute: what model code copies, hashes, inspects."""

    def __init__(self):
        self.n = 1


def sample(x):
    return x + 1


def arguments(tmp: str):
    """The made-up argument tuples tried in order for AUTO callables."""
    return [(), (tmp,), ("a",), (1,), ("1",), (b"a",), (Plain(),), ([1, 2],), ({"a": 1},), (sample,), ("a", "b"),
            (1, 2), ([1, 2], 1), (Plain, "n"), (Plain(), Plain)]


def probes(tmp: str, folder: str):
    """Hand-made calls: name → (callable, args). Writes go to files made for the probe in `folder`."""
    fresh = os.path.join(folder, "fresh")
    return {
        "builtins.open": (builtins.open, (tmp,)),
        "builtins.input": (builtins.input, ("",)),
        "builtins.__import__": (builtins.__import__, ("json",)),
        "io.open": (io.open, (tmp,)),
        "time.sleep": (time.sleep, (0,)),
        "random.seed": (random.seed, (0,)),
        "sys.stdout.write": (sys.stdout.write, ("",)),
        "sys.stderr.write": (sys.stderr.write, ("",)),
        "sys.stdout.flush": (sys.stdout.flush, ()),
        "sys.stderr.flush": (sys.stderr.flush, ()),
        "sys.getsizeof": (sys.getsizeof, (1,)),
        "sys.getrecursionlimit": (sys.getrecursionlimit, ()),
        "sys.getdefaultencoding": (sys.getdefaultencoding, ()),
        "sys.is_finalizing": (sys.is_finalizing, ()),
        "sys.intern": (sys.intern, ("a",)),
        "sys.exc_info": (sys.exc_info, ()),
        "sys._getframe": (sys._getframe, ()),
        "json.dump": (json.dump, (1, io.StringIO())),
        "json.load": (json.load, (io.StringIO("1"),)),
        "pickle.loads": (pickle.loads, (pickle.dumps(1),)),
        "pickle.load": (pickle.load, (io.BytesIO(pickle.dumps(1)),)),
        "pickle.dump": (pickle.dump, (1, io.BytesIO())),
        "hashlib.new": (hashlib.new, ("md5",)),
        "importlib.import_module": (importlib.import_module, ("json",)),
        "importlib.reload": (importlib.reload, (json,)),
        "importlib.util.find_spec": (importlib.util.find_spec, ("json",)),
        "os.listdir": (os.listdir, (folder,)),
        "os.scandir": (os.scandir, (folder,)),
        "os.walk": (os.walk, (folder,)),
        "os.makedirs": (os.makedirs, (fresh,), {"exist_ok": True}),
        "os.mkdir": (os.mkdir, (os.path.join(folder, "missing", "m"),)),
        "os.remove": (os.remove, (os.path.join(folder, "missing.txt"),)),
        "os.unlink": (os.unlink, (os.path.join(folder, "missing.txt"),)),
        "os.rmdir": (os.rmdir, (os.path.join(folder, "missing"),)),
        "os.rename": (os.rename, (os.path.join(folder, "missing.txt"), os.path.join(folder, "b.txt"))),
        "os.replace": (os.replace, (os.path.join(folder, "missing.txt"), os.path.join(folder, "b.txt"))),
        "os.stat": (os.stat, (tmp,)),
        "os.getpid": (os.getpid, ()),
        "os.getcwd": (os.getcwd, ()),
        "os.cpu_count": (os.cpu_count, ()),
        "os.getenv": (os.getenv, ("HOME",)),
        "os.environ.get": (os.environ.get, ("HOME",)),
        "os.urandom": (os.urandom, (4,)),
        "os.fspath": (os.fspath, (tmp,)),
        "os.fsencode": (os.fsencode, (tmp,)),
        "os.system": (os.system, ("true",)),
        "shutil.copy": (shutil.copy, (tmp, os.path.join(folder, "c.txt"))),
        "shutil.copyfile": (shutil.copyfile, (tmp, os.path.join(folder, "c.txt"))),
        "shutil.rmtree": (shutil.rmtree, (os.path.join(folder, "missing"),), {"ignore_errors": True}),
        "shutil.move": (shutil.move, (os.path.join(folder, "missing.txt"), os.path.join(folder, "b.txt"))),
        "shutil.which": (shutil.which, ("true",)),
        "shutil.get_terminal_size": (shutil.get_terminal_size, ()),
        "subprocess.run": (subprocess.run, (["true"],)),
        "subprocess.call": (subprocess.call, (["true"],)),
        "subprocess.check_call": (subprocess.check_call, (["true"],)),
        "subprocess.check_output": (subprocess.check_output, (["true"],)),
        "subprocess.Popen": (subprocess.Popen, (["true"],)),
        "threading.current_thread": (threading.current_thread, ()),
        "threading.get_ident": (threading.get_ident, ()),
        "threading.Lock": (threading.Lock, ()),
        "threading.RLock": (threading.RLock, ()),
        "threading.active_count": (threading.active_count, ()),
        "tempfile.gettempdir": (tempfile.gettempdir, ()),
        "tempfile.mkdtemp": (tempfile.mkdtemp, (), {"dir": folder}),
        "tempfile.mkstemp": (tempfile.mkstemp, (), {"dir": folder}),
        "tempfile.NamedTemporaryFile": (tempfile.NamedTemporaryFile, (), {"dir": folder}),
        "tempfile.TemporaryDirectory": (tempfile.TemporaryDirectory, (), {"dir": folder}),
        "socket.gethostname": (socket.gethostname, ()),
        "warnings.simplefilter": (warnings.simplefilter, ("default",)),
        "warnings.filterwarnings": (warnings.filterwarnings, ("default",)),
        "warnings.catch_warnings": (warnings.catch_warnings, ()),
        "torch.jit.isinstance": (torch.jit.isinstance, (torch.ones(2), torch.Tensor)),
        "torch.jit.is_scripting": (torch.jit.is_scripting, ()),
        # in the graph by lookup, but Dynamo's handler refuses it ("Encountered
        # torch.is_inference_mode_enabled during tracing"; the truth corpus's sparse auto-encoder)
        "torch.is_inference_mode_enabled": (torch.is_inference_mode_enabled, ()),
        "torch.jit.is_tracing": (torch.jit.is_tracing, ()),
        "torch.jit.annotate": (torch.jit.annotate, (int, 1)),
        "torch.jit.wait": (torch.jit.wait, (None,)),
        "torch.typename": (torch.typename, (torch.ones(2),)),
        "torch.sparse_coo_tensor": (torch.sparse_coo_tensor, (torch.tensor([[0, 1], [1, 0]]), torch.ones(2), (2, 2))),
        "torch.sparse_csr_tensor": (torch.sparse_csr_tensor, (torch.tensor([0, 1, 2]), torch.tensor([0, 1]),
                                                              torch.ones(2), (2, 2))),
        "torch.set_num_threads": (torch.set_num_threads, (torch.get_num_threads(),)),
        "torch.get_num_threads": (torch.get_num_threads, ()),
        "torch.save": (torch.save, (torch.ones(2), os.path.join(folder, "t.pt"))),
        "torch.load": (torch.load, (os.path.join(folder, "saved.pt"),)),
        "torch.nn.utils.rnn.pack_padded_sequence": (torch.nn.utils.rnn.pack_padded_sequence,
                                                    (torch.ones(3, 2, 4), torch.tensor([3, 2]))),
        "torch.nn.utils.rnn.pack_sequence": (torch.nn.utils.rnn.pack_sequence, ([torch.ones(3, 4), torch.ones(2, 4)],)),
        "torch.nn.utils.rnn.pad_sequence": (torch.nn.utils.rnn.pad_sequence, ([torch.ones(3, 4), torch.ones(2, 4)],)),
        "torch.nn.utils.rnn.pad_packed_sequence": (torch.nn.utils.rnn.pad_packed_sequence, (
            torch.nn.utils.rnn.pack_padded_sequence(torch.ones(3, 2, 4), torch.tensor([3, 2])),)),
    }


def public_callables(module_name: str):
    """(dotted name, object) of the module's public functions and the classmethods and static
    methods of its public classes (`datetime.datetime.now`)."""
    module = importlib.import_module(module_name)
    for name in sorted(dir(module)):
        if name.startswith("_"):
            continue
        obj = getattr(module, name, None)
        if inspect.ismodule(obj) or not callable(obj):
            continue
        yield f"{module_name}.{name}", obj
        if inspect.isclass(obj) and module_name in AUTO:
            for attr in sorted(dir(obj)):  # inherited ones too: `datetime.datetime.today` is date's
                raw = inspect.getattr_static(obj, attr)
                if not attr.startswith("_") and isinstance(raw, (classmethod, staticmethod)) or \
                        type(raw).__name__ == "classmethod_descriptor" and not attr.startswith("_"):
                    yield f"{module_name}.{name}.{attr}", getattr(obj, attr)


def lookup(obj) -> str:
    """The name of the VariableTracker class Dynamo's trace rules pick for `obj`."""
    try:
        found = trace_rules.lookup(obj)
    except Exception as e:  # noqa: BLE001 - some objects are not hashable or not functions
        return f"error: {type(e).__name__}"
    return found.__name__ if found is not None else "none"


def is_skipped(kind: str) -> bool:
    return "Skip" in kind


class CountingBackend:
    def __init__(self):
        self.graphs = 0

    def __call__(self, gm, example_inputs):
        self.graphs += 1
        return gm.forward


GB_ID = re.compile(r"/gb/(gb\d+)\.html")


def compile_probe(fn, args, kwargs) -> dict:
    """Compile a frame that calls `fn(*args, **kwargs)` between two tensor ops, call it twice, and
    read Dynamo's graph-break counter and how many graphs the second call compiled."""
    torch._dynamo.reset()
    counters.clear()
    backend = CountingBackend()

    with open(os.devnull, "w") as null, contextlib.redirect_stdout(null), contextlib.redirect_stderr(null):
        try:
            value = fn(*args, **kwargs)
        except Exception:  # noqa: BLE001 - a call that fails eagerly is still traced up to its break
            value = None
    number = isinstance(value, (int, float)) and not isinstance(value, bool)
    generator = inspect.isgenerator(value)  # `os.walk(...)` runs only when iterated
    layout = f"({value.layout})".replace("torch.", "") if isinstance(value, torch.Tensor) else ""
    returns = type(value).__name__ + layout

    def frame(x):  # a number is used the way model code uses a clock's value; a generator is iterated
        a = x + 1
        r = fn(*args, **kwargs)
        if generator:
            for _ in r:
                pass
        return a + r if number else a + 1

    compiled = torch.compile(frame, backend=backend)
    x = torch.ones(2)
    raised = ""
    with open(os.devnull, "w") as null, contextlib.redirect_stdout(null), contextlib.redirect_stderr(null):
        try:
            compiled(x)
            first = backend.graphs
            compiled(x)
        except Exception as e:  # noqa: BLE001 - the call itself may fail; the counter is read anyway
            raised = type(e).__name__
            first = backend.graphs
    breaks = sorted(counters["graph_break"])
    row = {"verdict": "breaks" if breaks else ("traces" if not raised else "error"), "returns": returns}
    if breaks:
        title = breaks[0].split("\n", 1)[0].strip()
        row["gb_type"] = title
        found = GB_ID.search(breaks[0])
        if found:
            row["gb_id"] = found.group(1).upper()
        reason = re.search(r"skip reason: ([^\n]*)", breaks[0])
        if reason:
            row["skip_reason"] = reason.group(1).split(" (")[0]
    if raised:
        row["raised"] = raised
    if not raised and backend.graphs > first:
        row["recompiles"] = True
    return row


def runs_eagerly(fn, args) -> bool:
    with open(os.devnull, "w") as null, contextlib.redirect_stdout(null), contextlib.redirect_stderr(null):
        try:
            fn(*args)
            return True
        except BaseException:  # noqa: BLE001 - SystemExit and KeyboardInterrupt included: made-up arguments
            return False


def describe(args) -> str:
    return "(" + ", ".join(type(a).__name__ for a in args) + ")"


def measure(tmp: str, folder: str, only=()) -> dict:
    table = {}
    hand = probes(tmp, folder)
    candidates = []
    for module_name in MODULES:
        candidates += [(name, obj, False) for name, obj in public_callables(module_name)]
    for module_name in TORCH_MODULES:
        candidates += [(name, obj, True) for name, obj in public_callables(module_name)]
    seen = set()
    if only:
        candidates = [c for c in candidates if c[0] in only]
        hand = {n: p for n, p in hand.items() if n in only}
    for name, obj, is_torch in candidates:
        seen.add(name)
        print(name, file=sys.__stderr__, flush=True)  # the last name shown is the one a crash was in
        kind = lookup(obj)
        if is_torch and not is_skipped(kind) and name not in hand:
            continue  # in the graph, or inlined: not this table's business
        row = {"lookup": kind}
        if name in hand:
            fn, args, *rest = hand[name]
            row.update(compile_probe(fn, args, rest[0] if rest else {}))
            row["measured"] = f"compiled probe {describe(args)}"
        elif (name.rsplit(".", 1)[0] in AUTO or name.rsplit(".", 2)[0] in AUTO or is_torch) and name not in NEVER_AUTO:
            pool = arguments(tmp) + ([(torch.ones(2),), (torch.ones(2), torch.ones(2))] if is_torch else [])
            for args in pool:
                if runs_eagerly(obj, args):
                    row.update(compile_probe(obj, args, {}))
                    row["measured"] = f"compiled probe {describe(args)}"
                    break
            else:
                row["verdict"] = "unprobed"
                row["measured"] = "lookup only: no argument tried ran eagerly"
        else:
            row["verdict"] = "unprobed"
            row["measured"] = "lookup only: no hand-made probe"
        table[name] = row
    for name, (fn, args, *rest) in hand.items():
        if name not in seen:
            row = {"lookup": lookup(fn)}
            row.update(compile_probe(fn, args, rest[0] if rest else {}))
            row["measured"] = f"compiled probe {describe(args)}"
            table[name] = row
    return table


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    version = ".".join(torch.__version__.split("+")[0].split(".")[:2])
    here = os.path.dirname(os.path.abspath(__file__))
    default = os.path.join(here, "..", "..", "compilelint", "data", f"untraceable-{version}.json")
    parser.add_argument("--out", default=default)
    parser.add_argument("--only", action="append", default=[], help="measure these names only (print, don't write)")
    parser.add_argument("--update", action="store_true", help="with --only: put those rows into the table at --out")
    options = parser.parse_args()
    out, only = os.path.abspath(options.out), options.only
    with tempfile.TemporaryDirectory() as folder:
        os.chdir(folder)
        tmp = os.path.join(folder, "f.txt")
        with open(tmp, "w") as f:
            f.write("1\n")
        torch.save(torch.ones(2), os.path.join(folder, "saved.pt"))
        table = measure(tmp, folder, set(only))
        os.chdir(here)
    if only and not options.update:
        print(json.dumps(table, indent=1))
        return
    if only:  # the rows measured now replace or join the table's, the rest stay as measured before
        with open(out, encoding="utf-8") as f:
            table = {**json.load(f)["calls"], **table}
    doc = {"torch": torch.__version__, "python": sys.version.split()[0],
           "made_by": "bench/measure/skipped_callables.py",
           "verdicts": {v: sum(r["verdict"] == v for r in table.values())
                        for v in ("breaks", "traces", "unprobed", "error")},
           "calls": dict(sorted(table.items()))}
    with open(out, "w", encoding="utf-8") as f:
        json.dump(doc, f, indent=1, sort_keys=False)
        f.write("\n")
    print(out, doc["verdicts"])


if __name__ == "__main__":
    main()
