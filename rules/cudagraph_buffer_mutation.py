import ast

from compilelint.analysis.astutil import self_attr
from compilelint.rule import Rule


class CudagraphBufferMutation(Rule):
    """
    ## What it does
    Under CUDA graphs (`torch.compile(mode="reduce-overhead"/"max-autotune")`, vLLM's
    `@support_torch_compile`, or `profile = "vllm"`), finds assignments to a module's tensor
    attributes in compiled code: `self.buf = ...` and `self.buf += ...`, where `self.buf` is a
    parameter, a registered buffer or a tensor attribute.

    ## Why is this bad?
    Re-binding a buffer inside the traced forward is replayed as a Python side effect after the
    graph (a `_buffers` dict update). vLLM refuses it when it compiles with CUDA graphs:
    "Assigning / modifying buffers of nn.Module during forward pass is not allowed when using
    cudagraph inside the compiler because it will cause silent errors". With
    `mode="reduce-overhead"` a tensor attribute bound to a graph output points into the CUDA
    graph memory pool, which the next replay overwrites. In-place updates of a buffer
    (`self.buf.copy_(x)`, `self.buf[i] = v`) keep its address and are fine: CUDA graph trees
    allow mutating parameters and buffers (static inputs).

    ## Example
    ```python
    def forward(self, positions, q):
        self.cos_sin_cache = self.cos_sin_cache.to(q.dtype)
    ```

    ## Use instead
    Use a local (`cache = self.cos_sin_cache.to(q.dtype)`), update the buffer in place
    (`self.buf.copy_(new)`), or prepare it outside the compiled forward (`__init__`,
    `process_weights_after_loading`).

    ## References
    https://docs.vllm.ai/en/latest/design/torch_compile.html
    """

    code = "CL502"
    name = "cudagraph-buffer-mutation"
    message = ("re-assigning a module buffer in compiled code is refused under CUDA graphs (vLLM: \"Assigning / "
               "modifying buffers of nn.Module during forward pass is not allowed when using cudagraph\"): use a "
               "local, or update it in place with copy_()")
    kind = "usage"

    def _check(self, target: ast.AST, node: ast.AST, how: str):
        attr = self_attr(target)
        cls = self.ctx.cls
        if attr is None or cls is None or attr not in cls.tensor_attrs:
            return
        self.report(node, f"`self.{attr} {how} ...` re-binds a module tensor inside compiled code: under CUDA graphs "
                          "vLLM refuses it (\"Assigning / modifying buffers of nn.Module during forward pass is not "
                          f"allowed when using cudagraph\"); use a local, or `self.{attr}.copy_(...)` in place",
                    condition="cudagraph")

    def visit_Assign(self, node: ast.Assign):
        for t in node.targets:
            self._check(t, node, "=")

    def visit_AugAssign(self, node: ast.AugAssign):
        op = {ast.Add: "+=", ast.Sub: "-=", ast.Mult: "*=", ast.Div: "/="}.get(type(node.op), "op=")
        self._check(node.target, node, op)

    INVALID = [
        """
import torch
from torch import nn

class Rotary(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.register_buffer("cos_sin_cache", torch.zeros(4096, dim))
        self.register_buffer("steps", torch.zeros((), dtype=torch.long))

    def forward(self, positions, q):
        self.cos_sin_cache = self.cos_sin_cache.to(q.dtype)  # <-
        self.steps += 1  # <-
        return q * self.cos_sin_cache[positions]

model = torch.compile(Rotary(64), mode="reduce-overhead")
""",
    ]
    VALID = [
        """
import torch
from torch import nn

class Rotary(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.register_buffer("cos_sin_cache", torch.zeros(4096, dim))
        self.register_buffer("steps", torch.zeros((), dtype=torch.long))

    def forward(self, positions, q):
        cache = self.cos_sin_cache.to(q.dtype)
        self.steps.add_(1)
        self.cos_sin_cache[0].copy_(cache[0])
        return q * cache[positions]

model = torch.compile(Rotary(64), mode="reduce-overhead")

class Eager(nn.Module):
    def __init__(self):
        super().__init__()
        self.register_buffer("buf", torch.zeros(4))

    def forward(self, x):
        self.buf = x * 2  # no CUDA graphs here
        return self.buf
""",
    ]
