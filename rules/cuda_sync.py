import ast
import re

from compilelint.rule import Rule

DEVICE_SYNC = frozenset({"torch.cuda.synchronize", "torch.accelerator.synchronize", "torch.xpu.synchronize"})
# Calls that return a CUDA stream or event.
STREAM_FACTORIES = frozenset({
    "torch.cuda.Stream", "torch.cuda.Event", "torch.cuda.current_stream", "torch.cuda.default_stream",
    "torch.cuda.streams.Stream", "torch.cuda.streams.Event", "torch.Stream", "torch.Event",
    "torch.accelerator.current_stream",
})
STREAMY = re.compile(r"stream|event", re.I)


class CudaSync(Rule):
    """
    ## What it does
    Finds host-device synchronisation inside compiled code: `torch.cuda.synchronize()`,
    `torch.cuda.current_stream().synchronize()`, and `.synchronize()` on a CUDA stream or event
    (one made by `torch.cuda.Stream/Event(...)`/`current_stream()`, or named like `*stream*` /
    `*event*`).

    ## Why is this bad?
    On torch 2.11 `torch.cuda.synchronize()` graph-breaks ("Attempted to call function marked as
    skipped", GB0007, measured on an H100). Newer Dynamo (2.13) traces it as a side-effecting
    `streams::synchronize_device` op instead, but the graph still stalls the CPU on every call,
    and under CUDA graphs (`mode="reduce-overhead"`, vLLM) synchronising while the stream is
    being captured is an error.

    ## Example
    ```python
    y = self.mlp(x)
    torch.cuda.synchronize()
    ```

    ## Use instead
    Synchronise outside the compiled region (around the compiled call, e.g. for timing), and
    order work inside it with stream semantics (`wait_stream`, events) rather than a host wait.

    ## References
    https://meta-pytorch.github.io/compile-graph-break-site/gb/gb0007.html
    """

    code = "CL213"
    name = "cuda-sync"
    triggers = ('synchronize',)
    message = ("a host-device synchronize inside compiled code graph-breaks on torch 2.11 ({gb@2.11}) and stalls "
               "every call (illegal during CUDA-graph capture): synchronize outside the compiled region")
    gb_types = ("Attempted to call function marked as skipped",)
    gb_ids = {"2.11": ("GB0007",), "2.13": ()}

    def __init__(self, ctx):
        super().__init__(ctx)
        self._streams = {}  # id(FunctionInfo) -> local names bound to streams/events

    def visit_Assign(self, node: ast.Assign):
        if isinstance(node.value, ast.Call) and self.ctx.resolve(node.value.func) in STREAM_FACTORIES:
            names = self._streams.setdefault(id(self.ctx.function), set())
            for t in node.targets:
                if isinstance(t, ast.Name):
                    names.add(t.id)

    def visit_Call(self, node: ast.Call):
        func = node.func
        if self.ctx.resolve(func) in DEVICE_SYNC:
            self.report(node)
            return
        if not (isinstance(func, ast.Attribute) and func.attr == "synchronize") or node.args or node.keywords:
            return
        recv = func.value
        if isinstance(recv, ast.Call) and self.ctx.resolve(recv.func) in STREAM_FACTORIES:
            self.report(node)
        elif isinstance(recv, ast.Name) and recv.id in self._streams.get(id(self.ctx.function), ()):
            self.report(node)
        elif isinstance(recv, (ast.Name, ast.Attribute)) and STREAMY.search(recv.id if isinstance(recv, ast.Name) else recv.attr):
            self.report(node)

    INVALID = [
        """
import torch
from torch import nn

class Overlap(nn.Module):
    def forward(self, x):
        side = torch.cuda.Stream()
        done = torch.cuda.Event()
        y = x * 2
        torch.cuda.synchronize()  # <-
        torch.cuda.current_stream().synchronize()  # <-
        side.synchronize()  # <-
        done.synchronize()  # <-
        self.copy_stream.synchronize()  # <-
        return y
""",
    ]
    VALID = [
        """
import threading
import time
import torch
from torch import nn

class Overlap(nn.Module):
    def forward(self, x):
        side = torch.cuda.current_stream()
        side.wait_stream(torch.cuda.current_stream())
        return x * 2

def bench(model, x):
    torch.cuda.synchronize()  # timing around the compiled call is fine
    t0 = time.perf_counter()
    model(x)
    torch.cuda.synchronize()
    return time.perf_counter() - t0

class Worker(nn.Module):
    def forward(self, x):
        lock = self.barrier
        lock.synchronize()  # not a stream or event
        return x
""",
    ]
