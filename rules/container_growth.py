import ast

from compilelint.analysis.astutil import is_call_to, self_attr
from compilelint.analysis.names import dotted
from compilelint.rule import Rule

GROW = frozenset({"append", "extend", "insert"})


class ContainerGrowth(Rule):
    """
    ## What it does
    Finds `self.cache.append/extend/insert(...)` in compiled code where `self.cache` is a list
    created in `__init__`, and `.append/extend/insert` on a module-level list.

    ## Why is this bad?
    Dynamo guards on the length of lists it reads (`len(self.cache) == 3`). Growing one from
    compiled code fails that guard on the next call: a recompile per call (measured: 3 of 4
    calls for `self.cache.append`, 2 of 3 for a global list) until `recompile_limit` (8), then
    the frame runs eager. Local lists and module-level dict stores are fine, and so is a list
    the function first sets to a new one (`self.outputs = []` in its own body, above the
    append): every call starts from the same length (measured: 0 recompiles in 5 calls).

    ## Example
    ```python
    def forward(self, x):
        y = self.layer(x)
        self.history.append(y.detach())
        return y
    ```

    ## Use instead
    Return the values and collect them outside the compiled region, write into a
    preallocated tensor buffer (`self.history[i].copy_(y)`), or use a forward hook outside
    the compiled module.

    ## References
    https://docs.pytorch.org/docs/stable/compile/programming_model.recompilation.html
    """

    code = "CL403"
    name = "container-growth"
    triggers = ('append', 'extend', 'insert')
    message = ("growing a list that outlives the call recompiles on every call (its length is guarded) until "
               "recompile_limit (8), then the frame runs eager: return the values, or preallocate a tensor buffer")
    kind = "recompile"
    severity = "warning"

    def visit_Call(self, node: ast.Call):
        func = node.func
        if not isinstance(func, ast.Attribute) or func.attr not in GROW:
            return
        owner = func.value
        if self._fresh(owner, node):
            return  # `self.outputs = []` at the top of the call: the list dies with it
        if self_attr(owner) is not None:
            cls = self.ctx.cls
            if cls is not None and owner.attr in cls.init_lists:
                self.report(node, f"`self.{owner.attr}.{func.attr}()` grows a module list: its length is guarded, so "
                                  "every call recompiles until recompile_limit (8), then the frame runs eager; return "
                                  "the values or preallocate a tensor buffer")
        elif isinstance(owner, ast.Name) and self.ctx.function is not None and self.ctx.is_global_list(owner.id):
            self.report(node, f"`{owner.id}.{func.attr}()` grows a module-level list: its length is guarded, so every "
                              "call recompiles until recompile_limit (8), then the frame runs eager; return the values "
                              "instead")

    def _fresh(self, owner: ast.AST, call: ast.Call) -> bool:
        """Does the function bind `owner` to a new list in a statement of its own body (not under
        an `if` or a loop) above the call? Then every call starts from an empty list, and the
        guarded length is the same each time."""
        fn = self.ctx.function_node
        text = dotted(owner)
        if fn is None or text is None:
            return False
        for stmt in fn.body:
            if stmt.lineno >= call.lineno:
                return False
            if isinstance(stmt, (ast.Assign, ast.AnnAssign)) and stmt.value is not None and \
                    (isinstance(stmt.value, ast.List) or is_call_to(stmt.value, "list")) and \
                    any(dotted(t) == text for t in (stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target])):
                return True
        return False

    INVALID = [
        """
import torch
from torch import nn

_TRACE = []

class Recorder(nn.Module):
    def __init__(self):
        super().__init__()
        self.history = []

    def forward(self, x):
        y = x * 2
        self.history.append(y.detach())  # <-
        _TRACE.extend([y.sum()])  # <-
        return y
""",
    ]
    VALID = [
        """
import torch
from torch import nn

_LAST = {}

class Recorder(nn.Module):
    def __init__(self, n):
        super().__init__()
        self.blocks = nn.ModuleList([nn.Linear(4, 4) for _ in range(n)])
        self.history = []

    def forward(self, x):
        outs = []
        for block in self.blocks:
            x = block(x)
            outs.append(x)
        _LAST["x"] = x
        return torch.stack(outs)

    def record(self, y):
        self.history.append(y)  # not compiled


class Collector(nn.Module):
    def __init__(self):
        super().__init__()
        self.outputs = []

    def forward(self, x):
        self.outputs = []
        for _ in range(2):
            x = x * 2
            self.outputs.append(x)
        return x
""",
    ]
