import ast

from compilelint.analysis.astutil import walk
from compilelint.rule import Rule

# The dimensions that vary between calls (batch, sequence/tokens); a fixed feature dim never recompiles.
DYNAMIC_DIMS = (0, 1)


class ShapeSpecialization(Rule):
    """
    ## What it does
    Finds `if`/`while`/ternary conditions on a tensor's leading sizes — `x.shape[0]`,
    `x.shape[1]`, `x.size(0)`, `len(x)`, `x.numel()`, or names unpacked from `x.shape` /
    `x.size()` — inside compiled code. Off by default; on under `profile = "vllm"`.

    ## Why is this bad?
    With dynamic shapes Dynamo compiles one graph for all batch sizes, but a Python branch on
    a size adds a guard (`s0 > 3`): each side of the branch is its own graph, so a new range of
    sizes recompiles (measured: batch sizes 2..5 with `if x.shape[0] > 3` give 2 recompiles
    instead of 1), and with `fail_on_recompile` (vLLM) that is an error. Branches such as
    `if seq_len == 1` (decode vs prefill) specialise the whole model per side, up to
    `recompile_limit` (8) graphs.

    ## Example
    ```python
    bsz, q_len, _ = hidden_states.size()
    if q_len > 1:
        attn = self.prefill(hidden_states)
    else:
        attn = self.decode(hidden_states)
    ```

    ## Use instead
    Write shape-agnostic code (masks, `torch.where`), pad to a few bucket sizes, move the
    branch out of the compiled function (compile each side separately), or mark the dimension
    with `torch._dynamo.mark_dynamic` and accept the guard where it is intended.

    ## References
    https://docs.pytorch.org/docs/stable/compile/programming_model.recompilation.html
    """

    code = "CL405"
    name = "shape-specialization"
    message = ("branching on a tensor's size adds a shape guard: each side recompiles (one graph per branch, up to "
               "recompile_limit 8); write shape-agnostic code or move the branch out of the compiled region")
    kind = "recompile"
    severity = "warning"
    default_enabled = False

    def __init__(self, ctx):
        super().__init__(ctx)
        self._shape_names = {}  # id(FunctionInfo) -> names bound to leading tensor sizes

    # ----- which expressions are sizes ---------------------------------------------------------
    def _size_expr(self, node: ast.AST) -> bool:
        ctx = self.ctx
        if isinstance(node, ast.Subscript) and isinstance(node.value, ast.Attribute) and node.value.attr == "shape":
            return self._leading(node.slice) and ctx.is_tensor(node.value.value)
        if isinstance(node, ast.Call):
            func = node.func
            if isinstance(func, ast.Attribute):  # the method's name before tensor inference (most calls)
                if func.attr == "size" and len(node.args) == 1:
                    if ctx.is_tensor(func.value):
                        return self._leading(node.args[0])
                elif func.attr == "numel" and not node.args:
                    if ctx.is_tensor(func.value):
                        return True
            if ctx.resolve(func) == "builtins.len" and len(node.args) == 1 and ctx.is_tensor(node.args[0]):
                return True
        if isinstance(node, ast.Subscript) and isinstance(node.value, ast.Call):
            func = node.value.func  # x.size()[0]
            if isinstance(func, ast.Attribute) and func.attr == "size" and not node.value.args and ctx.is_tensor(func.value):
                return self._leading(node.slice)
        if isinstance(node, ast.Name):
            return node.id in self._shape_names.get(id(ctx.function), ())
        return False

    @staticmethod
    def _leading(index: ast.AST) -> bool:
        return isinstance(index, ast.Constant) and index.value in DYNAMIC_DIMS

    def visit_Assign(self, node: ast.Assign):
        value = node.value
        names = self._shape_names.setdefault(id(self.ctx.function), set())
        whole = (isinstance(value, ast.Attribute) and value.attr == "shape" and self.ctx.is_tensor(value.value)) or \
            (isinstance(value, ast.Call) and isinstance(value.func, ast.Attribute) and value.func.attr == "size"
             and not value.args and self.ctx.is_tensor(value.func.value))
        for t in node.targets:
            if whole and isinstance(t, (ast.Tuple, ast.List)):
                for i, e in enumerate(t.elts[:len(DYNAMIC_DIMS)]):
                    if isinstance(e, ast.Name) and e.id != "_":
                        names.add(e.id)
            elif isinstance(t, ast.Name):
                if self._size_expr(value):
                    names.add(t.id)
                else:
                    names.discard(t.id)

    # ----- conditions --------------------------------------------------------------------------
    def _check(self, test: ast.AST):
        if isinstance(test, ast.Compare) and any(isinstance(op, (ast.Is, ast.IsNot)) for op in test.ops):
            return
        for sub in walk(test):
            if self._size_expr(sub):
                self.report(test)
                return

    def visit_If(self, node: ast.If):
        self._check(node.test)

    def visit_While(self, node: ast.While):
        self._check(node.test)

    def visit_IfExp(self, node: ast.IfExp):
        self._check(node.test)

    INVALID = [
        """
import torch
from torch import nn

class Attention(nn.Module):
    def forward(self, hidden_states):
        bsz, q_len, _ = hidden_states.size()
        if q_len > 1:  # <-
            hidden_states = hidden_states * 2
        if hidden_states.shape[0] > 8:  # <-
            hidden_states = hidden_states + 1
        scale = 0.5 if len(hidden_states) == 1 else 1.0  # <-
        return hidden_states * scale
""",
    ]
    VALID = [
        """
import torch
from torch import nn

class Attention(nn.Module):
    def __init__(self, head_dim):
        super().__init__()
        self.head_dim = head_dim

    def forward(self, x, mask=None):
        if x.shape[-1] != self.head_dim:
            raise ValueError("bad head dim")
        if x.dim() == 2:
            x = x.unsqueeze(0)
        if mask is None:
            mask = torch.ones_like(x)
        return x * mask
""",
    ]
