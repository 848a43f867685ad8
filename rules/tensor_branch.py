import ast

from compilelint.analysis import tensors as T
from compilelint.analysis.astutil import is_self
from compilelint.fix import builder
from compilelint.fix.notes import BOTH_BRANCHES, explained
from compilelint.rule import Rule

# fix builders, imported when a finding asks for its fix
where_for_if = builder("where", "where_for_if")
where_for_ifexp = builder("where", "where_for_ifexp")
where_for_return = builder("where", "where_for_return")
split_assert = builder("assert_split", "split_assert")
tensor_on_every_path = builder("paths", "tensor_on_every_path")
raise_to_assert_async = builder("tensor_raise", "raise_to_assert_async")
keep_python_flag = builder("buffer_flag", "keep_python_flag")
keep_empty_mask = builder("empty_mask", "keep_empty_mask")
guard_warning_check = builder("warn_guard", "guard_warning_check")

# torch's samplers and in-place fills: what they return is a fresh random draw on every call.
RANDOM_DRAWS = frozenset(f"torch.{n}" for n in (
    "rand", "rand_like", "randn", "randn_like", "randint", "randint_like", "bernoulli", "multinomial", "normal",
    "poisson",
))
RANDOM_FILLS = frozenset({"uniform_", "normal_", "bernoulli_", "random_", "exponential_", "geometric_",
                          "log_normal_", "cauchy_"})
RANDOM_SKIP = ("`{what}` on a random draw (a layer skipped at random, LayerDrop) graph-breaks ({{gb}}) and no "
               "rewrite keeps the outputs (torch.cond re-draws the layer's dropout in backward; running the layer "
               "every time shifts every later random draw): for compiled training set the drop probability "
               "({p}) to 0, an eager change (no layer is skipped)")


BUFFER_FLAG = ("`{what}` on the buffer `self.{name}` reads its value on every call and graph-breaks ({{gb}}); no "
               "rewrite keeps it exactly: the flag is module state (in-place copies and load_state_dict change it), which "
               "neither torch.where nor a traced branch can read into Python control flow. Keep a plain Python "
               "bool beside it for the check, set where the buffer is set (Dynamo guards on it and recompiles "
               "once when it flips): an eager change")


def buffer_flag(ctx, expr) -> str:
    """The name of the registered buffer `expr` is (`self.initted`), or ""."""
    cls = ctx.cls
    if cls is None or not (isinstance(expr, ast.Attribute) and is_self(expr.value)):
        return ""
    return expr.attr if expr.attr in cls.buffer_attrs else ""


def truth_tested(test: ast.AST):
    """The expressions Python calls bool() on when it evaluates `test` as a condition."""
    if isinstance(test, ast.BoolOp):
        for value in test.values:
            yield from truth_tested(value)
    elif isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
        yield from truth_tested(test.operand)
    else:
        yield test


def _where_or_check(ctx, node, expr):
    return where_for_if(ctx, node, expr) or where_for_return(ctx, node, expr) or raise_to_assert_async(ctx, node, expr)


def _bindings(ctx, name: str):
    """The values assigned to local `name` in the function (`name = value`), or None when it is also
    bound another way (a parameter, a loop target, a tuple target, `+=`...)."""
    fn = ctx.function_node
    if fn is None or any(a.arg == name for a in ast.walk(fn.args) if isinstance(a, ast.arg)):
        return None
    values, stores = [], 0
    for node in ctx.nodes(fn):
        if isinstance(node, ast.Name) and node.id == name and not isinstance(node.ctx, ast.Load):
            stores += 1
        elif isinstance(node, ast.Assign):
            values += [node.value for t in node.targets if isinstance(t, ast.Name) and t.id == name]
        elif isinstance(node, ast.AnnAssign) and node.value is not None and \
                isinstance(node.target, ast.Name) and node.target.id == name:
            values.append(node.value)
    return values if values and len(values) == stores else None


def _drawn(ctx, node) -> bool:
    """A fresh random draw: `torch.rand([])`, `torch.empty(()).uniform_()`, or a local holding one."""
    if isinstance(node, ast.Call):
        func = node.func
        return ctx.resolve(func) in RANDOM_DRAWS or isinstance(func, ast.Attribute) and func.attr in RANDOM_FILLS
    if isinstance(node, ast.Name):
        values = _bindings(ctx, node.id)
        return values is not None and all(isinstance(v, ast.Call) and _drawn(ctx, v) for v in values)
    return False


def _random_compare(ctx, node):
    """`torch.rand([]) < p`: the probability `p` (a number, a scalar, or a setting of the module such as
    `self.layerdrop`), else None (`x.mean() > torch.rand([])` thresholds data, it skips no layer)."""
    if not (isinstance(node, ast.Compare) and len(node.ops) == 1 and
            isinstance(node.ops[0], (ast.Lt, ast.LtE, ast.Gt, ast.GtE))):
        return None
    left, right = node.left, node.comparators[0]
    for drawn, other in ((left, right), (right, left)):
        setting = isinstance(other, ast.Attribute) and is_self(other.value) and not ctx.is_tensor(other)
        if _drawn(ctx, drawn) and (isinstance(other, ast.Constant) or ctx.kind(other) == T.SCALAR or setting):
            return other
    return None


def random_skip(ctx, expr):
    """The drop probability of a LayerDrop-style test (`torch.rand([]) < p`, or a flag assigned that
    comparison and otherwise only constants), else None."""
    p = _random_compare(ctx, expr)
    if p is not None or not isinstance(expr, ast.Name):
        return p
    compared = [_random_compare(ctx, v) for v in _bindings(ctx, expr.id) or () if not isinstance(v, ast.Constant)]
    return compared[0] if compared and None not in compared else None


class TensorBranch(Rule):
    """
    ## What it does
    Finds `if`, `elif`, `while`, ternaries, comprehension filters, `and`/`or`/`not` whose
    condition is a tensor inside compiled code.

    ## Why is this bad?
    Python needs a real `True`/`False` to pick a branch, which means reading tensor data.
    Dynamo graph-breaks at the branch (gb_type "Data-dependent branching", GB0170) and
    `fullgraph=True` raises. No config knob removes it.

    ## Example
    ```python
    if x.sum() > 0:
        y = x * 2
    else:
        y = x - 1
    ```

    ## Use instead
    `y = torch.where(x.sum() > 0, x * 2, x - 1)` (both sides are computed), or `torch.cond` for
    branches with different work. Conditions on shapes, `is None`, `isinstance` and
    `self.training` are fine: they are not data.

    A layer skipped at random in training (LayerDrop: `if torch.rand([]) < self.layerdrop:`) has
    no rewrite that keeps the outputs: `torch.cond` re-draws the layer's dropout masks in backward
    (measured on a 4-layer stack: outputs equal, gradients differ by 1.9), and running the layer
    every time to select afterwards shifts every later random draw. Its finding says so and names
    the setting that avoids it: a drop probability of 0 for compiled training (an eager change).

    ## Fix safety
    Safe: `assert a and b, "msg"` (plain operands, a constant message or none, the statement on
    lines of its own with no comment) → `assert a, "msg"` then `assert b, "msg"`. Python tests the
    operands and builds the message in the same order, so eager behaviour is the same; under compile a
    failed check raises `RuntimeError`, as any traced tensor `assert` does.

    Unsafe, offered only for `if c:` / `if not c:` where `c` is a tensor on every path (a boolean
    one for `torch.where`, or another tensor tested as `c.bool()`: non-zero, NaN included, is True as
    in Python; where eager raises because `c` has several elements, `torch.where` broadcasts instead):
    - `a if c else b`, a side a tensor → `torch.where(c, a, b)`;
    - `if c: return a` followed by `return b` → `return torch.where(c, a, b)` (`c` also `p and q` /
      `p or q` of boolean tensors: `torch.logical_and` / `logical_or`; the result takes both sides'
      promoted dtype: `return torch.tensor(0)` beside a float now returns `0.0`);
    - an `if`/`else` (no `elif`) whose branches only assign the same names → `y = torch.where(c, a, b)`;
      with no `else`, names bound before it → `y = torch.where(c, a, y)`; warning calls leading the `if`
      branch stay in `if not torch.compiler.is_compiling() and (c):` (c evaluated twice in eager);
      under `if mask.any():`, writes through that mask leading the branch (`x[mask] = v`) leave the
      `if` (a write through an all-False mask writes nothing; `v` is computed on the empty selection)
      and the assignments after them take `torch.where(mask.any(), a, y)`;
    - `if c: raise E("msg")` alone → `torch._assert_async(torch.logical_not(c), "msg")`; also with
      `a or b` of tensors (`torch.logical_or`), Python operands before `and` (kept as a Python `if`),
      and an f-string message (a plain string naming its fields: nothing built on every call);
      `if not (p and t): raise` → `if not (p): raise` as written, then the check on `t`;
      `if p or t: raise` (Python operands first) → `if p: raise` as written, then the check on `t`;
    - `if not mask.any(): mask = None` → deleted: the all-False mask is kept (fix/empty_mask.py);
    - `if c:` whose body only warns or logs → `if not torch.compiler.is_compiling() and (c):`
      (fix/warn_guard.py; eager unchanged, under compile the check and its warning are skipped).

    `torch.where` computes both branches every time (their cost, and their errors or NaN/inf, even on
    the side not taken), and the result is always a tensor. The `raise` rewrite raises `RuntimeError`
    with the same text instead of `E`, asynchronously on CUDA. The kept mask makes the code after take
    its masked path with a mask that masks nothing: equal where it only applies the mask.

    A registered buffer read as a flag (`if self.initted: return`) has no rewrite that keeps its
    meaning exactly (module state that in-place copies and load_state_dict change). Where the class
    registers it in `__init__` with `torch.tensor(<Python value>)` (or a one-element list of it,
    `torch.Tensor([<Python value>])`), writes it only with `.copy_(torch.tensor(<Python value>))` /
    `.fill_(<Python value>)` and reads it only in `if` tests,
    the unsafe fix keeps a Python bool beside it, set after each of those writes and by a
    load_state_dict post hook (fix/buffer_flag.py; measured on torch 2.13: 1 break → 0, and 2 → 0
    when the flag flips in the compiled call). Eager change: writes to the buffer from outside the
    class no longer change what the check sees.

    ## References
    https://meta-pytorch.github.io/compile-graph-break-site/gb/gb0170.html
    """

    code = "CL104"
    name = "tensor-branch"
    message = ("branching on a tensor's value graph-breaks ({gb}): use torch.where(cond, a, b) "
               "or torch.cond")
    gb_types = ("Data-dependent branching",)
    gb_ids = {"2.13": ("GB0170",), "2.11": ("GB0170",)}
    fix = "sometimes"  # safe: `assert a and b` split; unsafe: torch.where for assignment-only if/else and ternaries

    def _check(self, test: ast.AST, what: str, build=None, owner=None):
        for expr in truth_tested(test):
            if self.ctx.is_tensor(expr):
                p = random_skip(self.ctx, expr)
                if p is not None:
                    self.report(expr, RANDOM_SKIP.format(what=what, p=f"`{ast.unparse(p)}`"))
                    continue
                fix = build(self.ctx, owner, expr) if build is not None and tensor_on_every_path(self.ctx, expr) else None
                if fix is None and isinstance(owner, ast.If):  # its mask is None only where the fix deletes
                    fix = keep_empty_mask(self.ctx, owner, expr) or guard_warning_check(
                        self.ctx, owner, expr, next(e for e in truth_tested(test) if self.ctx.is_tensor(e)))
                fix = explained(fix, BOTH_BRANCHES)
                flag = buffer_flag(self.ctx, expr) if fix is None else ""
                if flag:
                    self.report(expr, BUFFER_FLAG.format(what=what, name=flag),
                                fix=keep_python_flag(self.ctx, expr) if what == "if" else None)
                    continue
                self.report(expr, f"`{what}` on a tensor's value graph-breaks ({{gb}}): "
                                  "use torch.where(cond, a, b) or torch.cond", fix=fix)

    def visit_If(self, node: ast.If):
        self._check(node.test, "if", _where_or_check, node)

    def visit_While(self, node: ast.While):
        self._check(node.test, "while")

    def visit_IfExp(self, node: ast.IfExp):
        self._check(node.test, "x if cond else y", where_for_ifexp, node)

    def visit_comprehension(self, node: ast.comprehension):
        for test in node.ifs:
            self._check(test, "comprehension if")

    def visit_Assert(self, node: ast.Assert):
        # `assert t` itself is traced (Dynamo asserts asynchronously), but the jumps of `assert a and b`
        # call bool() on every operand before the last (measured: GB0170, IBert's NaN check).
        test = node.test
        if isinstance(test, ast.BoolOp):
            op = "and" if isinstance(test.op, ast.And) else "or"
            first = True  # one fix for the statement, on its first finding (built only then: most asserts have none)
            for value in test.values[:-1]:
                for expr in truth_tested(value):
                    if self.ctx.is_tensor(expr):
                        fix = split_assert(self.ctx, node) if first else None
                        first = False
                        self.report(expr, f"`assert ... {op} ...` calls bool() on a tensor and graph-breaks ({{gb}}): "
                                          "assert each condition on its own, or combine them with `&`", fix=fix)

    def visit_BoolOp(self, node: ast.BoolOp):
        # Inside a condition the whole test is checked by the statement; here only values used as data.
        parent = self.ctx.parent()
        if isinstance(parent, (ast.If, ast.While, ast.IfExp, ast.BoolOp, ast.UnaryOp, ast.Assert)) or \
                isinstance(parent, ast.comprehension):
            return
        op = "and" if isinstance(node.op, ast.And) else "or"
        for value in node.values[:-1]:
            for expr in truth_tested(value):
                if self.ctx.is_tensor(expr):
                    self.report(expr, f"`{op}` calls bool() on a tensor and graph-breaks ({{gb}}): "
                                      "use logical_and/logical_or or torch.where")

    def visit_UnaryOp(self, node: ast.UnaryOp):
        if not isinstance(node.op, ast.Not):
            return
        parent = self.ctx.parent()
        if isinstance(parent, (ast.If, ast.While, ast.IfExp, ast.BoolOp, ast.UnaryOp, ast.Assert, ast.comprehension)):
            return
        if self.ctx.is_tensor(node.operand):
            self.report(node.operand, "`not` on a tensor calls bool() and graph-breaks ({gb}): use "
                                      "torch.logical_not(t) or `~mask`")

    # (before, after `--fix --unsafe-fixes`): what the fix does; tests/test_fix.py runs them.
    FIXES = [
        (
            """
import torch
from torch import nn

class Gate(nn.Module):
    def forward(self, x):
        if x.sum() > 0:
            y = x * 2
        else:
            y = x - 1
        return y if y.mean() > 0 else -y
""",
            """
import torch
from torch import nn

class Gate(nn.Module):
    def forward(self, x):
        y = torch.where(x.sum() > 0, x * 2, x - 1)
        return torch.where(y.mean() > 0, y, -y)
""",
        ),
        (
            """
import torch
from torch import nn

class Act(nn.Module):
    def forward(self, x):
        x_min, x_max = x.min(), x.max()
        assert x_max.isnan().sum() == 0 and x_min.isnan().sum() == 0, (
            "NaN detected"
        )
        return x
""",
            """
import torch
from torch import nn

class Act(nn.Module):
    def forward(self, x):
        x_min, x_max = x.min(), x.max()
        assert x_max.isnan().sum() == 0, "NaN detected"
        assert x_min.isnan().sum() == 0, "NaN detected"
        return x
""",
        ),
    ]

    INVALID = [
        """
import torch
from torch import nn

class Ratio(nn.Module):
    def forward(self, num, den):
        out = torch.full_like(num, float("nan"))
        valid = den != 0
        if valid.any():  # <-
            out[valid] = num[valid] / den[valid]
            out = out.clamp(-10, 10)
        return out
""",
        """
import torch
from torch import nn

class Gate(nn.Module):
    def forward(self, x):
        if x.sum() > 0:  # <-
            x = x * 2
        while x.max() > 1:  # <-
            x = x / 2
        y = x if x.mean() > 0 else -x  # <-
        if self.training and torch.isnan(x).any():  # <-
            x = torch.zeros_like(x)
        assert x.isnan().sum() == 0 and y.isnan().sum() == 0, "NaN"  # <-
        return x + y
""",
        """
import torch
from torch import nn

class Encoder(nn.Module):
    def __init__(self, layers, layerdrop: float = 0.1):
        super().__init__()
        self.layers = nn.ModuleList(layers)
        self.layerdrop = layerdrop

    def forward(self, x):
        for layer in self.layers:
            skip = False
            if self.training:
                skip = torch.rand([]) < self.layerdrop
            if not skip:  # <-
                x = layer(x)
            if x.mean() > torch.rand([]):  # <- a random threshold on data: not a layer skip
                x = -x
        return x
""",
        """
import torch
from torch import nn

class Codebook(nn.Module):
    def __init__(self, n: int):
        super().__init__()
        self.register_buffer("ready", torch.tensor(False))
        self.register_buffer("codes", torch.zeros(n, 4))

    def initialise(self, x):
        if self.ready:  # <- a buffer read as a flag: the fix keeps a Python bool beside it
            return
        self.codes.copy_(x[: self.codes.shape[0]])
        self.ready.fill_(True)

    def forward(self, x, ids: torch.Tensor):
        self.initialise(x)
        pad = ids.eq(0)
        if not pad.any():  # <- an empty mask dropped (fixed where the line has no comment)
            pad = None
        if torch.isnan(x).any():  # <- a check that only warns: skipped under compile
            print("NaN in the input")
        return x @ self.codes.T if pad is None else (x @ self.codes.T).masked_fill(pad[:, None], 0)
""",
    ]
    VALID = [
        """
import torch
from torch import nn

class Block(nn.Module):
    def forward(self, x, mask=None):
        if x.shape[0] > 2:
            x = x * 2
        if mask is None:
            mask = torch.ones_like(x)
        if self.training:
            x = x + 1
        if isinstance(x, torch.Tensor) and x.dim() == 2:
            x = x.t()
        assert (x > -100).all()
        return torch.where(x.sum() > 0, x, mask)
""",
    ]
