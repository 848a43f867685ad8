import ast

from compilelint.analysis.astutil import self_attr, walk
from compilelint.fix import builder
from compilelint.fix.notes import BUFFER, explained
from compilelint.rule import Rule

# fix builders, imported when a finding asks for its fix
buffer_counter = builder("counter", "buffer_counter")


def _reads(value: ast.AST, attr: str) -> bool:
    return any(self_attr(n) == attr and isinstance(n.ctx, ast.Load) for n in walk(value))


_BINDINGS = frozenset((ast.Assign, ast.AugAssign, ast.AnnAssign, ast.For))


def _copies(fn: ast.AST, of_kinds) -> dict:
    """{local: attr} for the locals of `fn` bound only by `local = self.attr` (`n = self.count`):
    a value computed from the local is computed from the attribute's value at the read. Read only.
    `of_kinds`: `RuleContext.of_kinds` (the function's shared node lists, not a walk of its own)."""
    bound: dict = {}
    for node in of_kinds(fn, _BINDINGS):
        targets = node.targets if isinstance(node, ast.Assign) else [node.target] \
            if isinstance(node, (ast.AugAssign, ast.AnnAssign, ast.For)) else []
        for t in targets:
            for name in (n for n in walk(t) if isinstance(n, ast.Name)):
                simple = isinstance(node, ast.Assign) and t is name and len(node.targets) == 1
                bound.setdefault(name.id, set()).add(self_attr(node.value) if simple else None)
    return {name: attrs.pop() for name, attrs in bound.items() if len(attrs) == 1 and None not in attrs}


def _reads_copy(value: ast.AST, attr: str, copies: dict) -> bool:
    """`self.n = n + 1` after `n = self.n`: a new value from the old one. A bare `self.n = n`
    puts back the value read, which changes nothing by itself."""
    if isinstance(value, ast.Name):
        return False
    return any(isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load) and copies.get(n.id) == attr
               for n in walk(value))


class ModuleScalarMutation(Rule):
    """
    ## What it does
    Finds `self.n += 1` / `self.n = self.n + 1` in compiled code where `self.n` is a Python
    int or float set to a constant in `__init__` (step counters, call counters, running
    scales). Also through a local copy: `n = self.n`, then `self.n = n + 1`.

    ## Why is this bad?
    Dynamo treats int attributes of an `nn.Module` as constants and guards on their value
    (`self.counter == 3`). Changing it makes the next call fail the guard and recompile: one
    recompile per call until `recompile_limit` (8), then the frame runs eager for good
    (measured: 12 calls, 8 recompiles, then eager; through a local copy on torch 2.13: 6 calls,
    6 graphs, the guard `self.count == 0` placed at `self.count = count + 1`). Nothing breaks, so
    `explain()` calls it clean. Putting back the value read (`self.n = n`) changes nothing.

    ## Example
    ```python
    def __init__(self):
        super().__init__()
        self.step = 0

    def forward(self, x):
        self.step += 1
        return x * self.step
    ```

    ## Use instead
    Keep the counter in a registered buffer and update it in place
    (`self.register_buffer("step", torch.zeros((), dtype=torch.long))`, then
    `self.step.add_(1)`: 0 recompiles), keep the count outside the compiled module, or set
    `torch._dynamo.config.allow_unspec_int_on_nn_module = True` (ints only; 8 recompiles → 1).

    ## Fix safety
    Unsafe: `self.n += k` (or `self.n = self.n + k`; `+ - * /`) in a `nn.Module` whose `__init__`
    sets `self.n = <number>` after `super().__init__()` → `self.register_buffer("n", torch.tensor(...),
    persistent=False)` there and `self.n.add_(k)` here. Offered only when every other write is another
    `self.n op= ...`, every read of `self.n` is an operand of arithmetic, and the step is a number
    literal (an int for an int counter, which takes no `/`; a float counter becomes float64). The counter becomes a non-persistent
    buffer: a 0-d tensor that follows `.to(device)`, is left out of `state_dict()`, and is shared by
    in-place updates.

    ## References
    https://docs.pytorch.org/docs/stable/compile/programming_model.recompilation.html
    """

    code = "CL401"
    name = "module-scalar-mutation"
    message = ("mutating a Python number attribute of the module recompiles on every call until recompile_limit "
               "(8), then the frame runs eager: keep it in a registered buffer updated in place, or set "
               "torch._dynamo.config.allow_unspec_int_on_nn_module = True")
    kind = "recompile"
    severity = "warning"
    # when provable: `self.n = 0` → a non-persistent buffer, `self.n += 1` → `self.n.add_(1)`
    fix = "unsafe"
    # A frame that also grows a list the object registers by name (`self.add("seen", [])`, then
    # `self.seen.append(x)`) recompiles every call for the list's length, and Dynamo names that
    # guard (measured: fixtures/precision/counter_behind_named_list.py): the counter adds no recompile.
    shadowed_by_grown_lists = True

    def __init__(self, ctx):
        super().__init__(ctx)
        self.copies: dict = {}  # id(function) → `_copies` of it

    def _check(self, target: ast.AST, node: ast.AST, fixable: bool = True):
        attr = self_attr(target)
        cls = self.ctx.cls
        if attr is None or cls is None or attr not in cls.init_numbers:
            return
        self.report(node, f"`self.{attr}` is a Python number attribute: changing it in compiled code recompiles on "
                          "every call until recompile_limit (8), then the frame runs eager; keep it in a registered "
                          "buffer updated in place (`self.%s.add_(1)`), or set "
                          "torch._dynamo.config.allow_unspec_int_on_nn_module = True" % attr,
                    fix=explained(buffer_counter(self.ctx, node, attr), BUFFER) if fixable else None)

    def visit_AugAssign(self, node: ast.AugAssign):
        self._check(node.target, node)

    def _copies_in(self, fn) -> dict:
        """`_copies(fn)`, once per function: asked at each `self.x = ...` of a number attribute."""
        key = id(fn)  # kept by id while the function is walked (the rule-state contract)
        if key not in self.copies:
            self.copies[key] = _copies(fn, self.ctx.of_kinds)
        return self.copies[key]

    def visit_Assign(self, node: ast.Assign):
        cls = self.ctx.cls
        for t in node.targets:
            attr = self_attr(t)
            if attr is None or cls is None or attr not in cls.init_numbers:
                continue  # before the function's copies: walking it for every `self.x = ...` was quadratic
            if _reads(node.value, attr):
                self._check(t, node)
            elif self.ctx.function_node is not None and \
                    _reads_copy(node.value, attr, self._copies_in(self.ctx.function_node)):
                self._check(t, node, fixable=False)  # `n = self.n; ...; self.n = n + 1`

    # (before, after `--fix --unsafe-fixes`): what the fix does; tests/test_fix.py runs them.
    FIXES = [
        (
            """
import torch
from torch import nn

class Counter(nn.Module):
    def __init__(self):
        super().__init__()
        self.calls = 0

    def forward(self, x):
        self.calls += 1
        return x * self.calls
""",
            """
import torch
from torch import nn

class Counter(nn.Module):
    def __init__(self):
        super().__init__()
        self.register_buffer("calls", torch.tensor(0), persistent=False)

    def forward(self, x):
        self.calls.add_(1)
        return x * self.calls
""",
        ),
    ]

    INVALID = [
        """
import torch
from torch import nn

class Counter(nn.Module):
    def __init__(self):
        super().__init__()
        self.calls = 0
        self.scale = 1.0

    def forward(self, x):
        self.calls += 1  # <-
        self.scale = self.scale * 0.99  # <-
        return x * self.scale


class SavedCounter(nn.Module):
    def __init__(self):
        super().__init__()
        self.seen = 0
        self.proj = nn.Linear(4, 4)

    def forward(self, x):
        seen = self.seen
        y = self.proj(x)
        self.seen = seen + 1  # <-
        return y
""",
    ]
    VALID = [
        """
import torch
from torch import nn

class Counter(nn.Module):
    def __init__(self):
        super().__init__()
        self.register_buffer("steps", torch.zeros((), dtype=torch.long))
        self.w = nn.Parameter(torch.ones(4))
        self.eps = 1e-5

    def forward(self, x):
        self.steps.add_(1)
        self.w.data = self.w.data * 0.5
        return x * self.w / (self.steps + self.eps)

    def reset(self):
        self.eps = 1e-6  # not compiled


class SavedAndRestored(nn.Module):
    def __init__(self):
        super().__init__()
        self.seen = 0
        self.proj = nn.Linear(4, 4)

    def forward(self, x):
        seen = self.seen
        self.seen = 5
        y = self.proj(x)
        self.seen = seen  # the value read, put back
        return y
""",
    ]
