import ast
import weakref

from compilelint.rule import Rule

# function → local name → the values it is assigned (`_assigned_values`)
_VALUES: "weakref.WeakKeyDictionary[ast.AST, dict]" = weakref.WeakKeyDictionary()

# Factories whose positional arguments are sizes or bounds (Python numbers to Dynamo).
SIZED_FACTORIES = frozenset(f"torch.{n}" for n in ("arange", "zeros", "ones", "empty", "rand", "randn"))
# The casts reported on a tensor (besides `math.*`).
SCALAR_CASTS = frozenset({"builtins.int", "builtins.float", "builtins.bool"})


class TensorToScalar(Rule):
    """
    ## What it does
    Finds `int(t)`, `float(t)`, `bool(t)` and `math.*(t)` of a tensor inside compiled code,
    including `range(int(t))`, factories sized by a tensor op (`torch.arange(lengths.max())`),
    slices bounded by a tensor (`x[:, :n]` with `n = sizes[0]`), indexing with the 0-d position a
    full `argmax` / `argmin` gives (`x[torch.argmax(x)]`) and `v in t` on a tensor.

    ## Why is this bad?
    Converting a tensor to a Python number reads its data: a plain `torch.compile` graph-breaks
    (GB0124 "Unsupported Tensor.item() call with capture_scalar_outputs=False"; `math.sqrt(t)`:
    GB0033 "Data dependent operator"). `bool(t)`, `math.*(t)` and `range(int(t))` fail even under
    `fullgraph=True` ("Could not guard on data-dependent expression"), and no config knob helps
    them. `int(t)`/`float(t)` are captured with `capture_scalar_outputs = True`. `torch.arange(t.max())`
    graph-breaks with "Data dependent operator" (GB0033; VITS's output lengths), and so does a 0-d
    index (`x[i]` reads `i` as a Python int; a 1-element index `x[i.view(1)]` does not).
    `v in t` runs `Tensor.__contains__`, which reads `(t == v).any()` (GB0124 on torch 2.13,
    "Data-dependent branching" on 2.11; bench/measure/snippets_scalar_reads.out).

    ## Example
    ```python
    n = int(lengths.max())
    return x[:, :n]
    ```

    ## Use instead
    Stay in tensor land (`torch.sqrt(t)`, `t.clamp(...)`, masks), pass the number in from outside
    the compiled region, or set `torch._dynamo.config.capture_scalar_outputs = True` for int/float.

    ## References
    https://meta-pytorch.github.io/compile-graph-break-site/gb/gb0124.html
    """

    code = "CL102"
    name = "tensor-to-scalar"
    triggers = ()
    message = "converting a tensor to a Python number graph-breaks"
    gb_types = ("Unsupported Tensor.item() call with capture_scalar_outputs=False", "Data dependent operator")
    gb_ids = {"2.13": ("GB0124", "GB0033"), "2.11": ("GB0124", "GB0033")}

    def visit_Call(self, node: ast.Call):
        name = self.ctx.resolve(node.func)
        if name in SIZED_FACTORIES:
            # `torch.arange(lengths.max())`: a size computed by a tensor op is read back as a number.
            if any(isinstance(a, ast.Call) and self.ctx.is_tensor(a) for a in node.args):
                self.report(node, f"`{name}()` sized by a tensor reads its data into Python and graph-breaks "
                                  "({gb1}): size it with Python numbers (shapes), or allocate the maximum and mask")
            return
        if len(node.args) != 1 or node.keywords:
            return
        if name is None or not (name in SCALAR_CASTS or name.startswith("math.")):
            return  # the name first: most calls of one argument are none of these, and tensor inference costs
        if not self.ctx.is_tensor(node.args[0]):
            return
        if name in ("builtins.int", "builtins.float"):
            self.report(node, f"`{name[9:]}(tensor)` reads tensor data into Python and graph-breaks "
                              "({gb}): keep the tensor, or set torch._dynamo.config.capture_scalar_outputs = True")
        elif name == "builtins.bool":
            self.report(node, "`bool(tensor)` is data-dependent and graph-breaks even under capture_scalar_outputs: "
                              "keep a boolean tensor and use torch.where / torch.cond")
        elif name.startswith("math."):
            self.report(node, f"`{name}(tensor)` reads tensor data into Python and graph-breaks ({{gb1}}): "
                              f"use the torch equivalent (torch.{name[5:]})")

    def visit_Subscript(self, node: ast.Subscript):
        # `x[:, :n]` with `n` a 0-d tensor: the bound is read back as a Python int.
        parts = node.slice.elts if isinstance(node.slice, ast.Tuple) else [node.slice]
        for part in parts:
            if isinstance(part, ast.Slice) and any(b is not None and self.ctx.is_tensor(b)
                                                   for b in (part.lower, part.upper, part.step)):
                self.report(node, "slicing with a tensor bound reads it into Python and graph-breaks ({gb}): "
                                  "pass the bound as a Python int, or set torch._dynamo.config.capture_scalar_outputs = True")
                return
            # `x[torch.argmax(x)]`: a 0-d index is read back as a Python int (a 1-d one is not).
            if isinstance(part, (ast.Name, ast.Call)) and self.ctx.is_tensor(node.value) and self._full_position(part):
                self.report(node, "indexing with the position a full `argmax` / `argmin` gives (a 0-d tensor) reads "
                                  "it into Python and graph-breaks ({gb1}): index with a 1-element tensor "
                                  "(`x[i.view(1)]`), or use `x.max()` / `x.min()` for the value")
                return

    def visit_Compare(self, node: ast.Compare):
        # `v in t`: Tensor.__contains__ compares in Python, reading the result of `(t == v).any()`.
        for op, right in zip(node.ops, node.comparators):
            if isinstance(op, (ast.In, ast.NotIn)) and self.ctx.is_tensor(right):
                self.report(node, "`in` on a tensor reads its data into Python (`Tensor.__contains__`) and "
                                  "graph-breaks: keep a tensor, `(t == v).any()`, and use torch.where / torch.cond")
                return

    def _assigned_values(self, fn) -> dict:
        """Local name → the values the function assigns it (worked out once per function)."""
        if fn is None:
            return {}
        values = _VALUES.get(fn)  # kept beside the rule, not on it: its state holds plain values only
        if values is None:
            values = _VALUES[fn] = {}
            for sub in self.ctx.nodes(fn):  # the file's shared walk of the function
                if isinstance(sub, (ast.Assign, ast.AnnAssign, ast.AugAssign)):
                    for t in sub.targets if isinstance(sub, ast.Assign) else [sub.target]:
                        if isinstance(t, ast.Name):
                            values.setdefault(t.id, []).append(sub.value)
        return values

    def _full_position(self, node: ast.AST) -> bool:
        """`torch.argmax(x)`, `x.argmin()` with no `dim`: the position in the flattened tensor, a
        0-d tensor; or a local whose one binding in the function is one."""
        if isinstance(node, ast.Name):
            values = self._assigned_values(self.ctx.function_node).get(node.id, ())
            return len(values) == 1 and isinstance(values[0], ast.Call) and self._full_position(values[0])
        if not isinstance(node, ast.Call) or any(k.arg == "dim" for k in node.keywords):
            return False
        if self.ctx.resolve(node.func) in ("torch.argmax", "torch.argmin"):
            return len(node.args) == 1
        return isinstance(node.func, ast.Attribute) and node.func.attr in ("argmax", "argmin") and not node.args \
            and self.ctx.is_tensor(node.func.value)

    INVALID = [
        """
import math
import torch
from torch import nn

class Decoder(nn.Module):
    def forward(self, x, lengths):
        n = int(lengths.max())  # <-
        keep = bool((x > 0).any())  # <-
        norm = math.sqrt(x.pow(2).sum())  # <-
        steps = torch.arange(lengths.max(), device=x.device)  # <-
        half = x[:, :lengths[0]]  # <-
        best = x[torch.argmax(x)]  # <-
        if 0 in lengths:  # <-
            return x
        return x[:, :n] / norm, steps, half, best
""",
    ]
    VALID = [
        """
import math
import torch
from torch import nn

class Decoder(nn.Module):
    def forward(self, x):
        n = int(x.shape[0] * 0.5)
        d = math.sqrt(x.size(-1))
        steps = torch.arange(x.shape[1], device=x.device)
        rows = x[torch.argmax(x, dim=1)]
        if 3 in x.shape:
            return rows
        return x[:n] / d, steps
""",
    ]
