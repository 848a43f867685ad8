import ast

from compilelint.fix import builder
from compilelint.rule import Rule

# fix builders, imported when a finding asks for its fix
disable_data_loop = builder("data_loop", "disable_data_loop")


class TensorTolist(Rule):
    """
    ## What it does
    Finds `t.tolist()` on a tensor inside compiled code, including `for v in t.tolist():`.

    ## Why is this bad?
    `.tolist()` copies every element into a Python number. For a float tensor Dynamo always
    graph-breaks ("Tensor.tolist() with non-integer tensor", GB0109), even under `fullgraph=True`;
    for an integer tensor a plain `torch.compile` breaks too ("Data dependent operator", GB0033)
    and the values become guards, so the next call with other values recompiles. Loops over the
    list are unrolled per value.

    ## Example
    ```python
    counts = torch.bincount(expert_ids, minlength=8)
    for e, n in enumerate(counts.tolist()):
        ...
    ```

    ## Use instead
    Stay in tensor land (index, mask, `torch.where`, `scatter`/`index_add`), or take the list
    outside the compiled region and pass it in. For integer tensors
    `torch._dynamo.config.capture_scalar_outputs = True` captures the values as symbolic ints;
    nothing helps float tensors.

    ## Fix safety
    Safe: where the list sets how many times a `for` loop of the same function runs
    (`sizes = counts.tolist()` then `for part in torch.split(x, sizes):`), the function gets
    `@torch.compiler.disable`: Dynamo would break at the `.tolist()` and again in every iteration it
    unrolls; run eagerly, the function costs one break at its call. `torch.compiler.disable` does
    nothing outside torch.compile, so eager behaviour is unchanged; under compile the function is not
    compiled. Offered on a module-level `def` or a method of a module-level class with no decorator,
    not a generator, not `forward`/`__call__`, not handed to `torch.compile` in the file.

    ## References
    https://meta-pytorch.github.io/compile-graph-break-site/gb/gb0109.html
    """

    code = "CL103"
    name = "tensor-tolist"
    triggers = ('tolist',)
    message = ("`.tolist()` on a tensor graph-breaks: integer tensors are captured with "
               "torch._dynamo.config.capture_scalar_outputs = True ({gb1}), float ones never ({gb}); "
               "keep the tensor or move the loop out of the compiled region")
    gb_types = ("Tensor.tolist() with non-integer tensor", "Data dependent operator")
    gb_ids = {"2.13": ("GB0109", "GB0033"), "2.11": ("GB0109", "GB0033")}
    fix = "safe"  # `@torch.compiler.disable` on a function looping over the list (fix/data_loop.py)

    def visit_Call(self, node: ast.Call):
        func = node.func
        if isinstance(func, ast.Attribute) and func.attr == "tolist" and not node.args and not node.keywords \
                and self.ctx.is_tensor(func.value):
            self.report(node, fix=disable_data_loop(self.ctx, node))

    INVALID = [
        """
import torch
from torch import nn

class Router(nn.Module):
    def forward(self, x, expert_ids):
        counts = torch.bincount(expert_ids.flatten(), minlength=8)
        sizes = counts.tolist()  # <-
        for w in x.mean(0).tolist():  # <-
            x = x * w
        return x.split(sizes)
""",
        """
import torch
from torch import nn

class GroupMean(nn.Module):
    def per_group(self, values, groups):
        sizes = torch.bincount(groups).tolist()  # <-
        return torch.stack([part.mean() for part in torch.split(values, sizes)])

    def forward(self, values, groups):
        return self.per_group(values, groups)
""",
    ]
    VALID = [
        """
import torch
from torch import nn

class Router(nn.Module):
    def __init__(self, sizes):
        super().__init__()
        self.sizes = list(sizes)

    def forward(self, x, cfg):
        shape = list(x.shape)
        widths = cfg.widths.tolist()  # not known to be a tensor: say nothing
        return x.reshape(shape).split(self.sizes, dim=-1)
""",
    ]
