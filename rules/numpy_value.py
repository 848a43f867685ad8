import ast
from typing import Dict, Set

from compilelint.analysis.astutil import walk
from compilelint.fix import builder
from compilelint.rule import Rule

# fix builders, imported when a finding asks for its fix
assume_numpy_answer_constant = builder("numpy_constant", "assume_numpy_answer_constant")
disable_numpy_planner = builder("numpy_planner", "disable_numpy_planner")

# NumPy calls that give constants Dynamo folds (types, dtypes, seeding) or that measured clean.
CONSTANT_CALLS = frozenset({"numpy.dtype", "numpy.random.seed", "numpy.random.rand", "numpy.random.randn"})
# Random planning that Dynamo cannot trace (permutation: GB0294) or reads back as data (randint: GB0033).
# np.random.choice: "Data dependent operator" on torch 2.11 in the truth corpus (wav2vec2's SpecAugment);
# `np.random.uniform(0, 1)` (LayerDrop in VITS and older models): GB0033 where it is read (measured, 2.13).
RANDOM_CALLS = {"numpy.random.permutation": "{gb3}", "numpy.random.randint": "{gb1}",
                "numpy.random.choice": "{gb1}", "numpy.random.uniform": "{gb1}"}
# Metadata of an array: static under Dynamo, like a tensor's shape.
METADATA = frozenset({"shape", "ndim", "dtype", "size", "itemsize", "nbytes"})
REDUCTIONS = frozenset({"sum", "prod", "max", "min", "lcm", "gcd", "argmax", "argmin", "count_nonzero"})
# Array constructors whose first argument is a size: a NumPy reduction there is data (BigBird's plan).
SIZED = frozenset({"numpy.zeros", "numpy.ones", "numpy.empty", "numpy.full", "numpy.arange"})
CASTS = {"builtins.int": "int", "builtins.range": "range"}


class NumpyValue(Rule):
    """
    ## What it does
    Finds NumPy values that decide control flow inside compiled code: a NumPy call (or a name or
    same-file helper holding one: `n = np.lcm(a, b)`, `arr = t.cpu().numpy()`) in an `if`, `while`
    or ternary condition, an integer reduction (`np.sum`, `np.lcm`, `a.max()`) passed to `int()` or
    `range()` or used as the size of `np.zeros(...)`, and NumPy random
    planning (`np.random.permutation`, `np.random.randint`, `np.random.uniform`).

    ## Why is this bad?
    Dynamo traces NumPy through `torch._numpy`: every NumPy result is a tensor in the graph,
    even `np.lcm(4, 6)` of two Python ints. Measured on torch 2.13: branching on it graph-breaks
    with "Data-dependent branching" (GB0170 on torch 2.13) (transformers' Reformer: `if len % np.lcm(...)`),
    even `np.sqrt` of a size; `int(np.sum(...))` with "Data dependent operator" (GB0033 on torch 2.13),
    `int(np.lcm(a, b))` with GB0208, `range(np.sum(...))` with "Failed to trace builtin operator"
    (GB0059 on torch 2.13) (while `int(np.sqrt(n))` and `int(np.ceil(n / 3))` traced cleanly); `np.random.permutation` with "attempted to trace numpy
    function unsupported by PyTorch" (GB0294, BigBird's random attention) and
    `np.random.randint` with GB0033, `p = np.random.uniform(0, 1)` read by a later test with GB0033 at the call.

    ## Example
    ```python
    if seq_len % np.lcm(self.lsh_chunk, self.local_chunk) != 0:
        x = pad(x)
    ```

    ## Use instead
    Use Python's `math` on Python numbers (`math.lcm`, `math.prod`, `sum`), compute the value once
    in `__init__`, or keep tensor data in torch (`torch.randperm`, `torch.where`). On arrays that are
    NumPy's own (a space's bounds the module holds, not a tensor's `.numpy()`), the setting
    `torch._dynamo.config.trace_numpy = False` runs NumPy in Python instead of tracing it (measured on
    torch 2.13: `np.any(a != 0) or np.any(b != 255)` 3 breaks → 1, the array comparison itself
    still breaks); NumPy on tensors then breaks instead, so `verify --try-settings` measures it.

    ## Fix safety
    Safe: a module-level function (not a method, not nested, no decorator, not handed to
    `torch.compile` in the file) that draws from `np.random` gets `@torch.compiler.disable`.
    `torch.compiler.disable` does nothing outside torch.compile, so eager behaviour is unchanged; under
    compile the function runs eagerly, drawing from NumPy's own generator (Dynamo would draw from
    torch's), at the cost of one break at its call.

    Unsafe: a module-level function that tests NumPy values, whose parameters are all annotated with
    types that are not tensors or arrays and whose return is annotated `bool`/`int`/`float`/`str`
    (a Python answer from Python objects: `is_image(space: Box) -> bool` testing `space.low`), with no
    global, attribute or item stores, gets `@torch.compiler.assume_constant_result`: Dynamo runs it in
    Python while tracing and puts its answer in the graph as a constant, no break. The compiled code
    keeps that answer while the same objects are passed (measured on torch 2.13: another object
    recompiles; an in-place change to an array the object holds is not seen). Eager is unchanged.
    On torch 2.11 such a call fails to compile (its arguments must be Python constants there), so with
    `--torch-version 2.11` the helper gets `@torch.compiler.disable` instead: it runs in Python on every
    call, one break at each call instead of the branches on traced NumPy inside it (measured on torch
    2.13 CPU on the breadth corpus's policies' observation-space check: 8 → 6 breaks per policy, outputs
    bitwise).

    ## References
    https://meta-pytorch.github.io/compile-graph-break-site/gb/gb0170.html
    """

    code = "CL106"
    name = "numpy-value"
    triggers = ("numpy",)
    message = ("a NumPy value in a condition is a traced tensor and graph-breaks ({gb} on torch 2.13): use Python's math "
               "on Python numbers (math.lcm, sum), or compute it in __init__; on arrays that are NumPy's own, "
               "`torch._dynamo.config.trace_numpy = False` runs NumPy in Python (verify --try-settings measures it)")
    gb_types = ("Data-dependent branching", "Data dependent operator", "Failed to trace builtin operator",
                "attempted to trace numpy function unsupported by PyTorch", "torch.* op returned non-Tensor")
    gb_ids = {"2.13": ("GB0170", "GB0033", "GB0059", "GB0294", "GB0208")}  # measured on 2.13 CPU only
    fix = "sometimes"  # safe: `@torch.compiler.disable` on a helper planning with np.random (fix/numpy_planner.py);
    # unsafe: `@torch.compiler.assume_constant_result` on a helper answering from its arguments' arrays (fix/numpy_constant.py)

    def __init__(self, ctx):
        super().__init__(ctx)
        self.helpers: Set[str] = set()  # module functions that return a NumPy value
        self.names: Dict[int, Set[str]] = {}  # function (by id) → locals holding a NumPy value
        self.seen: Set[int] = set()  # the `and`/`or` (by id) whose tests were looked at already
        self.disabled: Set[int] = set()  # functions (by id) whose random planning got its fix
        self.constant: Set[int] = set()  # functions (by id) whose NumPy test was offered the constant fix

    # ----- what holds a NumPy value ---------------------------------------------------------------
    def _locals(self) -> Set[str]:
        return self.names.setdefault(id(self.ctx.function), set())

    def _is_numpy_call(self, node) -> bool:
        if not isinstance(node, ast.Call):
            return False
        name = self.ctx.resolve(node.func) or ""
        if name.startswith("numpy.") and name not in CONSTANT_CALLS:
            return True
        func = node.func
        if isinstance(func, ast.Attribute) and func.attr == "numpy" and not node.args and self.ctx.is_tensor(func.value):
            return True  # t.numpy(), t.cpu().numpy()
        return isinstance(func, ast.Name) and func.id in self.helpers

    def _numpy_valued(self, node, names: Set[str]) -> bool:
        """Whether the expression's value is a NumPy value (a traced tensor under Dynamo); metadata
        (`len(a)`, `a.shape`, `a.dtype`), `is None` tests and `int(...)` results are not."""
        if isinstance(node, ast.Name):
            return node.id in names
        if isinstance(node, ast.Call):
            if self._is_numpy_call(node):
                return True
            func = node.func
            return isinstance(func, ast.Attribute) and func.attr not in METADATA and \
                self._numpy_valued(func.value, names)  # a.sum(), a.max()
        if isinstance(node, ast.Attribute):
            return node.attr not in METADATA and self._numpy_valued(node.value, names)
        if isinstance(node, ast.Subscript):
            return self._numpy_valued(node.value, names)
        if isinstance(node, ast.BinOp):
            return self._numpy_valued(node.left, names) or self._numpy_valued(node.right, names)
        if isinstance(node, ast.UnaryOp):
            return self._numpy_valued(node.operand, names)
        if isinstance(node, ast.BoolOp):
            return any(self._numpy_valued(v, names) for v in node.values)
        if isinstance(node, ast.Compare):
            if any(isinstance(op, (ast.Is, ast.IsNot)) for op in node.ops):
                return False
            return any(self._numpy_valued(v, names) for v in [node.left] + node.comparators)
        if isinstance(node, ast.IfExp):
            return self._numpy_valued(node.body, names) or self._numpy_valued(node.orelse, names)
        return False

    def visit_FunctionDef(self, node):
        if self.ctx.function is None:  # module level: note helpers that return NumPy values
            for sub in walk(node):
                if isinstance(sub, ast.Return) and sub.value is not None and self._is_numpy_call(sub.value):
                    self.helpers.add(node.name)
                    return

    def visit_Assign(self, node: ast.Assign):
        if self.ctx.function is None:
            return
        names = self._locals()
        holds = self._numpy_valued(node.value, names)
        for target in node.targets:
            if isinstance(target, ast.Name):
                (names.add if holds else names.discard)(target.id)

    def _integer_reduction(self, node) -> bool:
        """`np.sum(a)`, `a.max()`, `np.lcm(m, n)`: measured to break under int()/range(); float math
        such as `int(np.sqrt(n))` or `int(np.ceil(n / 3))` traced cleanly, so it is left alone."""
        if not isinstance(node, ast.Call):
            return False
        name = self.ctx.resolve(node.func) or ""
        if name.startswith("numpy."):
            return name.rsplit(".", 1)[-1] in REDUCTIONS
        func = node.func
        return isinstance(func, ast.Attribute) and func.attr in REDUCTIONS and \
            self._numpy_valued(func.value, self._locals())

    # ----- where it breaks ------------------------------------------------------------------------
    def _tested(self, expr, truth_tested: bool) -> list:
        """The operands whose truth Python tests, in order: every operand of `a and b` but the
        last, and the last too when the whole is tested (`if a and b:`); `not` flips a test.
        Nested `and`/`or` are noted as seen, so that `visit_BoolOp` leaves them to this test."""
        if isinstance(expr, ast.BoolOp):
            self.seen.add(id(expr))
            last = len(expr.values) - 1
            return [o for i, v in enumerate(expr.values) for o in self._tested(v, truth_tested or i < last)]
        if truth_tested and isinstance(expr, ast.UnaryOp) and isinstance(expr.op, ast.Not):
            return self._tested(expr.operand, True)
        return [expr] if truth_tested else []

    def _first_break(self, expr, truth_tested: bool):
        # Dynamo breaks at the first test of a NumPy value; the tests after it ran past the break
        # without one (measured: fixtures/precision/numpy_short_circuit.py), so one finding
        if self.ctx.function is None:
            return
        names = self._locals()
        hit = next((o for o in self._tested(expr, truth_tested) if self._numpy_valued(o, names)), None)
        if hit is not None:
            # one fix per helper: on its first break
            fix = assume_numpy_answer_constant(self.ctx) if id(self.ctx.function) not in self.constant else None
            self.constant.add(id(self.ctx.function))
            self.report(hit, fix=fix)

    def _condition(self, test):
        self._first_break(test, True)

    def visit_If(self, node: ast.If):
        self._condition(node.test)

    def visit_While(self, node: ast.While):
        self._condition(node.test)

    def visit_IfExp(self, node: ast.IfExp):
        self._condition(node.test)

    def visit_BoolOp(self, node: ast.BoolOp):
        # `a and b` as a value tests every operand but the last (Reformer: `len % np.lcm(...) != 0 and ...`)
        if id(node) not in self.seen:
            self._first_break(node, False)

    def visit_Call(self, node: ast.Call):
        if self.ctx.function is None:
            return
        name = self.ctx.resolve(node.func)
        if name in RANDOM_CALLS:
            # one fix per helper: on its first random call
            fix = disable_numpy_planner(self.ctx) if id(self.ctx.function) not in self.disabled else None
            self.disabled.add(id(self.ctx.function))
            self.report(node, f"`{name.replace('numpy', 'np')}()` inside compiled code graph-breaks "
                              f"({RANDOM_CALLS[name]}): use torch.randperm / torch.randint, or plan outside the region",
                        fix=fix)
        elif name in SIZED and node.args and any(self._integer_reduction(sub) for sub in ast.walk(node.args[0])):
            self.report(node, f"`{name.replace('numpy', 'np')}()` sized by a NumPy reduction reads a traced tensor and "
                              "graph-breaks ({gb1} on torch 2.13): compute the size with Python numbers (sum(), math.lcm)")
        elif name in CASTS and node.args and self._integer_reduction(node.args[0]):
            self.report(node, f"`{CASTS[name]}()` of a NumPy value reads a traced tensor and graph-breaks "
                              "({gb1} on torch 2.13): compute it with Python numbers, or outside the compiled region")

    # (before, after `--fix --unsafe-fixes`): what the fix does; tests/test_fix.py runs them.
    FIXES = [
        (
            """
import numpy as np
import torch

def _span_starts(length, n):
    return np.random.choice(np.arange(length), n, replace=False)

@torch.compile
def mask_spans(x):
    starts = _span_starts(x.shape[1], 2)
    return x * 2, starts
""",
            """
import numpy as np
import torch

@torch.compiler.disable
def _span_starts(length, n):
    return np.random.choice(np.arange(length), n, replace=False)

@torch.compile
def mask_spans(x):
    starts = _span_starts(x.shape[1], 2)
    return x * 2, starts
""",
        ),
    ]

    INVALID = [
        """
import numpy as np
import torch
from torch import nn

def in_unit_box(box: object, strict: bool = True) -> bool:
    outside = np.any(box.low < 0) or np.any(box.high > 1)  # <-
    return not (strict and outside)

def loose_box(box: object) -> np.ndarray:
    return box.low if np.any(box.low < 0) else box.high  # <-

class Scaler(nn.Module):
    def __init__(self, box):
        super().__init__()
        self.box = box

    def forward(self, x):
        low = loose_box(self.box)
        return x.clamp(0, 1) if in_unit_box(self.box) else x + low.sum()
""",
        """
import numpy as np
import torch
from torch import nn

def _lcm_chunk_len(config):
    return np.lcm(config.lsh_chunk, config.local_chunk)

class Reformer(nn.Module):
    def forward(self, x):
        chunk = _lcm_chunk_len(self.config)
        must_pad = (
            x.shape[-1] % chunk != 0  # <-
            and x.shape[-1] > 4
        )
        if must_pad:  # <-
            x = x * 2
        if x.shape[-1] % chunk != 0:  # <-
            x = x[..., : x.shape[-1] - x.shape[-1] % chunk]
        plan = np.array([x.shape[0], 2]) // 2
        total = int(np.sum(plan))  # <-
        rand = np.zeros((4, np.sum(plan[:1])), dtype=np.int32)  # <-
        perm = np.random.permutation(np.arange(1, 7))[:3]  # <-
        return x * total, perm
""",
        """
import torch

@torch.compile
def gate(x):
    a = x.cpu().numpy()
    return x * 2 if a.sum() > 0 else x  # <-
""",
    ]
    VALID = [
        """
import math
import numpy as np
import torch
from torch import nn

class Block(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.chunk = int(np.lcm(config.a, config.b))  # __init__ is not compiled

    def forward(self, x, d):
        np.random.seed(0)
        if x.shape[-1] % math.lcm(4, 6) != 0:
            x = x * 2
        if x.dtype == np.float32:
            x = x + 1
        plan = np.zeros((4, 2))
        n = int(np.ceil(x.shape[-1] / 3))  # float math cast to int: traced cleanly
        if len(plan) == 0 or plan.shape[0] > n or plan is None:  # metadata and None tests
            x = x * 2
        return x / np.sqrt(d)
""",
    ]
