import ast

from compilelint.rule import Rule

MARK_DYNAMIC = frozenset({"torch._dynamo.mark_dynamic", "torch._dynamo.decorators.mark_dynamic"})


class MarkDynamicSizeOne(Rule):
    """
    ## What it does
    Finds `torch._dynamo.mark_dynamic(t, dim)`, anywhere in the code.

    ## Why is this bad?
    Dynamo specializes sizes 0 and 1 even on a dimension marked dynamic: the graph compiled for
    the marked dimension assumes `2 <= size`, so a call where it is 1 (a batch of one request, a
    single decode token) fails the guard and recompiles. Measured on torch 2.13: sizes 2, 3, 1, 4
    with `mark_dynamic(x, 0)` give a recompile at the 1 (guard `2 <= x.size()[0]`); without
    any marking, 2, 3, 1, 4 recompile twice. Under `fail_on_recompile` (vLLM) that is an error.

    ## Example
    ```python
    torch._dynamo.mark_dynamic(input_ids, 0)
    logits = compiled_model(input_ids)
    ```

    ## Use instead
    If the dimension can be 0 or 1, use `torch._dynamo.mark_unbacked(t, dim)` (no 0/1
    specialization; the code must not branch on that size), or set
    `torch.fx.experimental._config.backed_size_oblivious = True`.

    ## References
    https://docs.pytorch.org/docs/stable/compile/programming_model.dynamic_shapes_zero_one_specialization.html
    """

    code = "CL409"
    name = "mark-dynamic-size-one"
    kind = "recompile"
    severity = "warning"
    region_only = False
    triggers = ("mark_dynamic",)
    message = ("sizes 0 and 1 are specialized even on a dim marked dynamic: a call where it is 1 recompiles; if "
               "it can be 0 or 1, use torch._dynamo.mark_unbacked(t, dim)")

    def visit_Call(self, node: ast.Call):
        if self.ctx.resolve(node.func) in MARK_DYNAMIC:
            self.report(node)

    INVALID = [
        """
import torch
from torch._dynamo import mark_dynamic

def serve(model, input_ids):
    compiled = torch.compile(model)
    mark_dynamic(input_ids, 0)  # <-
    torch._dynamo.mark_dynamic(input_ids, 1)  # <-
    return compiled(input_ids)
""",
    ]
    VALID = [
        """
import torch

def serve(model, input_ids):
    compiled = torch.compile(model)
    torch._dynamo.mark_unbacked(input_ids, 0)
    return compiled(input_ids)
""",
    ]
