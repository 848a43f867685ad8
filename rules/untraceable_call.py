import ast

from compilelint.rule import Rule

# Each entry was measured to graph-break on torch 2.13 (dynamo-truth.md, plus one-off probes).
CLOCKS = frozenset({
    "time.time", "time.time_ns", "time.perf_counter", "time.perf_counter_ns", "time.monotonic",
    "time.monotonic_ns", "time.process_time", "time.process_time_ns", "time.thread_time",
    "datetime.datetime.now", "datetime.datetime.utcnow", "datetime.datetime.today", "datetime.date.today",
})
# random.randint/uniform/randrange trace cleanly (measured); these break.
RANDOM = frozenset({
    "random.random", "random.choice", "random.choices", "random.shuffle", "random.sample",
    "random.seed", "random.gauss", "random.getrandbits", "random.normalvariate", "uuid.uuid4", "uuid.uuid1",
})
IO = frozenset({
    "builtins.open", "builtins.input", "io.open", "time.sleep", "sys.stdout.write", "sys.stderr.write",
    "sys.stdout.flush", "sys.stderr.flush", "importlib.import_module", "importlib.reload",
    "builtins.__import__",
    "os.listdir", "os.scandir", "os.walk", "os.makedirs", "os.mkdir", "os.remove", "os.unlink",
    "os.rmdir", "os.rename", "os.replace", "os.stat", "os.getpid", "os.cpu_count", "os.system",
    "os.path.exists", "os.path.isfile", "os.path.isdir", "os.path.getsize", "os.path.getmtime",
    "os.path.islink", "os.path.realpath",
    "shutil.copy", "shutil.copyfile", "shutil.rmtree", "shutil.move",
    "subprocess.run", "subprocess.call", "subprocess.check_call", "subprocess.check_output", "subprocess.Popen",
})
MODULE_PREFIXES = ("json.", "hashlib.", "pickle.")
# torch builtins Dynamo skips (measured on 2.13: "Attempted to call function marked as skipped";
# the sparse result then skips the frame where it is used, "Attempted to wrap sparse Tensor").
TORCH_SKIPPED = frozenset({"torch.sparse_coo_tensor"})
# Python functions of torch that Dynamo's trace rules skip (measured on 2.13 and in the 2.11 truth:
# "Attempted to call function marked as skipped"); `pad_sequence` is traced and not listed, nor is
# `pad_packed_sequence` (skipped on 2.13, but 2.11 traces into it and fails on fake tensors).
TORCH_SKIPPED_FUNCTIONS = frozenset({"torch.nn.utils.rnn.pack_padded_sequence", "torch.nn.utils.rnn.pack_sequence"})


class UntraceableCall(Rule):
    """
    ## What it does
    Finds calls Dynamo cannot trace inside compiled code: clocks (`time.time()`,
    `time.perf_counter()`, `time.sleep()`…), `random.random()`-style calls, `json.*`,
    `hashlib.*`, `pickle.*`, `open()`, `input()`, `sys.stdout.write()`, `importlib.import_module()`
    and file-system calls such as `os.listdir()`, `os.makedirs()`, `os.path.exists()`,
    `torch.sparse_coo_tensor()`, and the sequence packing of `torch.nn.utils.rnn`
    (`pack_padded_sequence()`, `pack_sequence()`).

    ## Why is this bad?
    These are C functions or I/O: Dynamo graph-breaks at each call ("Attempted to call function
    marked as skipped", GB0007; `json.dumps`, `sys.stdout.write`: "Unsupported method call",
    GB0156; `open`/`input`: "Failed to trace builtin operator", GB0059). `time.*` and
    `random.random()` also recompile on the next call: the value they return is guarded as a
    constant. A break inside `with open(...)` makes the rest of the frame run eager (GB0142).
    No config knob helps. `os.environ.get()`, `os.getenv()`, `os.path.join()`,
    `importlib.util.find_spec()`, `random.randint()` and `random.uniform()` trace cleanly and are
    not reported.

    ## Example
    ```python
    start = time.perf_counter()
    y = self.mlp(x)
    self.elapsed = time.perf_counter() - start
    ```

    ## Use instead
    Move the call out of the compiled region: time and log around the compiled call, read
    files in `__init__`, draw random numbers with `torch.rand` (traced) or pass them in.

    ## References
    https://meta-pytorch.github.io/compile-graph-break-site/gb/gb0007.html
    """

    code = "CL206"
    name = "untraceable-call"
    message = "this call is not traceable and graph-breaks ({gb}): move it out of the compiled region"
    gb_types = ("Attempted to call function marked as skipped", "Unsupported method call",
                "Failed to trace builtin operator", "Unsupported context manager", "Attempted to wrap sparse Tensor")
    gb_ids = {"2.13": ("GB0007", "GB0156", "GB0059", "GB0142", "GB0015"),
              "2.11": ("GB0007", "GB0156", "GB0059", "GB0142", "GB0015")}

    def __init__(self, ctx):
        super().__init__(ctx)
        self.sparse: dict = {}  # (function, local) → row where a skipped sparse constructor bound it

    def visit_Assign(self, node: ast.Assign):
        if isinstance(node.value, ast.Call) and self.ctx.resolve(node.value.func) in TORCH_SKIPPED:
            for t in node.targets:
                if isinstance(t, ast.Name):
                    self.sparse[(id(self.ctx.function_node), t.id)] = node.lineno

    def visit_Name(self, node: ast.Name):
        key = (id(self.ctx.function_node), node.id)
        row = self.sparse.get(key)
        if row is not None and isinstance(node.ctx, ast.Load) and node.lineno > row:
            del self.sparse[key]  # the first use skips the frame; nothing after it is traced
            self.report(node, f"`{node.id}` holds a sparse tensor: using it in compiled code skips the frame "
                              "({gb4}); stay dense, or build and use it outside the compiled region")

    def visit_Call(self, node: ast.Call):
        name = self.ctx.resolve(node.func)
        if not name:
            return
        short = name[9:] if name.startswith("builtins.") else name
        if name in CLOCKS or name in ("random.random",):
            self.report(node, f"`{short}()` graph-breaks ({{gb}}) and recompiles on the next call (its value is "
                              "guarded as a constant): measure or draw it outside the compiled region")
        elif name in RANDOM:
            self.report(node, f"`{short}()` graph-breaks ({{gb}}): use torch.rand/torch.randint (traced) or pass "
                              "the value in")
        elif name in ("builtins.open", "io.open"):
            self.report(node, "`open()` graph-breaks ({gb2}); inside `with` the rest of the frame runs eager "
                              "({gb3}): read files outside the compiled region")
        elif name in TORCH_SKIPPED:
            self.report(node, f"`{short}()` is skipped by Dynamo and graph-breaks ({{gb}}); using its sparse result "
                              "skips the frame: build it outside the compiled region, or stay dense")
        elif name in TORCH_SKIPPED_FUNCTIONS:
            self.report(node, f"`{short}()` is skipped by Dynamo and graph-breaks ({{gb}}): pack outside the compiled "
                              "region, or keep the padded tensor and a mask")
        elif name in IO or name.startswith(MODULE_PREFIXES):
            self.report(node, f"`{short}()` is not traceable and graph-breaks: move it out of the compiled region")

    INVALID = [
        """
import json
import os
import random
import sys
import time
from time import perf_counter
import torch
from torch import nn

class Block(nn.Module):
    def forward(self, x):
        start = perf_counter()  # <-
        if random.random() < 0.1:  # <-
            x = x * 2
        sys.stdout.write("step\\n")  # <-
        meta = json.dumps({"n": 1})  # <-
        if os.path.exists("/tmp/dump"):  # <-
            os.makedirs("/tmp/dump/out", exist_ok=True)  # <-
        with open("/tmp/log.txt", "a") as f:  # <-
            pass
        time.sleep(0)  # <-
        return x

def pair_counts(a, b):
    counts = torch.sparse_coo_tensor(torch.stack((a, b)), torch.ones(a.shape[0]), (4, 4))  # <-
    return counts.to_dense()  # <-

class Counts(nn.Module):
    def forward(self, a, b):
        return pair_counts(a, b)

class Packer(nn.Module):
    def forward(self, x, lengths):
        packed = nn.utils.rnn.pack_padded_sequence(x, lengths, batch_first=True, enforce_sorted=False)  # <-
        return packed.data.sum()
""",
    ]
    VALID = [
        """
import os
import random
import importlib.util
import torch
from torch import nn

HAS_TRITON = importlib.util.find_spec("triton") is not None

class Block(nn.Module):
    def forward(self, x):
        if os.environ.get("BLOCK_DEBUG") == "1":
            x = x + 1
        path = os.path.join("a", "b")
        k = random.randint(0, 3)
        if torch.cuda.is_available() and x.device.type == "cuda":
            x = x * 2
        return x * k + len(path)

class Padder(nn.Module):
    def forward(self, a, b):
        return nn.utils.rnn.pad_sequence([a, b], batch_first=True).sum()

def open(path):  # shadows the builtin in this module
    return path

class Reader(nn.Module):
    def forward(self, x):
        open("weights")
        return x
""",
    ]
