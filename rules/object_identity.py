import ast

from compilelint.rule import Rule


class ObjectIdentity(Rule):
    """
    ## What it does
    Finds `id(t)` of a tensor inside compiled code (cache keys, "seen" sets, memo dicts).

    ## Why is this bad?
    Dynamo turns `id(x)` into a constant and guards on the object's identity
    (`___check_obj_id`): every call with a new tensor object fails the guard and recompiles,
    until `recompile_limit` (8), then the frame runs eager. It does not graph-break, so
    `explain()` calls it clean (measured: 2 recompiles in 3 calls).

    ## Example
    ```python
    key = id(hidden_states)
    if key not in self._memo:
        self._memo[key] = self.proj(hidden_states)
    ```

    ## Use instead
    Key caches by something stable that is not the object (a layer index, a name, the shape),
    or do the memoisation outside the compiled region.

    ## References
    https://docs.pytorch.org/docs/stable/compile/programming_model.recompilation.html
    """

    code = "CL404"
    name = "object-identity"
    triggers = ('id',)
    message = ("`id(tensor)` guards on the object identity: every call with a new tensor recompiles until "
               "recompile_limit (8), then the frame runs eager; key by something stable, or move it out of the "
               "compiled region")
    kind = "recompile"
    severity = "warning"

    def visit_Call(self, node: ast.Call):
        if self.ctx.resolve(node.func) == "builtins.id" and len(node.args) == 1 and self.ctx.is_tensor(node.args[0]):
            self.report(node)

    INVALID = [
        """
import torch
from torch import nn

class Memo(nn.Module):
    def __init__(self):
        super().__init__()
        self.proj = nn.Linear(8, 8)
        self.seen = {}

    def forward(self, x):
        key = id(x)  # <-
        self.seen[key] = True
        return self.proj(x)
""",
    ]
    VALID = [
        """
import torch
from torch import nn

class Memo(nn.Module):
    def __init__(self):
        super().__init__()
        self.proj = nn.Linear(8, 8)
        self.key = id(self.proj)  # eager

    def forward(self, x, layer_idx: int):
        ptr = x.data_ptr()
        name = id(layer_idx)
        return self.proj(x)
""",
    ]
