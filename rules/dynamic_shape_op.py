import ast

from compilelint.analysis import tensors as T
from compilelint.fix import builder
from compilelint.rule import Rule

# fix builders, imported when a finding asks for its fix
dense_expert_loop = builder("expert_loop", "dense_expert_loop")
size_check = builder("size_check", "size_check")

# Ops whose output size depends on the data.
OPS = frozenset({"nonzero", "argwhere", "masked_select", "unique", "unique_consecutive", "bincount"})
NOT_TENSORS = (T.SCALAR, T.MODULE, T.LOGGER, T.NONE, T.SEQ)


class DynamicShapeOp(Rule):
    """
    ## What it does
    Finds operators whose output shape depends on tensor values inside compiled code:
    `torch.nonzero`/`t.nonzero()`, `argwhere`, `masked_select`, `unique`,
    `unique_consecutive`, `bincount`, `repeat_interleave` with tensor repeats, and the
    one-argument `torch.where(cond)`.

    ## Why is this bad?
    A plain `torch.compile` graph-breaks at each of them ("Dynamic shape operator", GB0036):
    the output size is unknown until the data is read. (`fullgraph=True` hides this: it turns
    on `capture_dynamic_output_shape_ops` by itself.) `torch.repeat_interleave(x, counts)`
    even makes the frame run eager. `repeat_interleave` with an int is fine.

    ## Example
    ```python
    token_idx = torch.nonzero(expert_mask[e]).squeeze(-1)
    ```

    ## Use instead
    Set `torch._dynamo.config.capture_dynamic_output_shape_ops = True` to capture them with
    unbacked sizes, or keep shapes static: masks with `torch.where(cond, a, b)`,
    `scatter`/`index_add` over a fixed size, `bincount(minlength=...)` outside the region, or
    sort-based routing with a fixed capacity.

    ## Fix safety
    Unsafe, for one shape only: the Mixtral-style expert loop (`for e in (mask.sum(...) > 0).nonzero():`
    with `idx, top = torch.where(mask[e])` and one `final.index_add_(0, top, ...)`) → a loop over every
    expert that runs it on every token, weighted by `torch.where(mask[e] != 0, weights, 0)`. Offered
    only when the loop's names are used in exactly those places and nothing leaves the loop early.
    Every expert computes every token (E× the expert FLOPs, which assumes experts act on each token
    row alone, as MLPs do); sums run in another order (equal up to rounding); a token an expert did
    not pick adds `0 · output`, NaN where that output is inf; dropout in the loop draws over all
    tokens; an expert no token picked gets zero gradients instead of None (optimizers then apply
    weight decay and momentum to it).

    Safe: the op's size read by `len(...)` or `.numel()` into a name and checked right after by
    `if <comparison of it>: raise RuntimeError(msg)` (directly or through one assigned name) →
    `torch._check(torch.sym_not(<comparison>), lambda: msg)` (`_check_value` for ValueError, ...;
    under `torch.compiler.is_compiling()` when the message has fields). Eager raises the same
    exception with the same message; with `capture_dynamic_output_shape_ops` the check becomes a
    runtime assert in the graph where the `if` broke ("Could not guard on data-dependent expression").

    ## References
    https://meta-pytorch.github.io/compile-graph-break-site/gb/gb0036.html
    """

    code = "CL301"
    name = "dynamic-shape-op"
    triggers = ('nonzero', 'argwhere', 'masked_select', 'unique', 'bincount', 'repeat_interleave', 'where')
    message = ("an op whose output shape depends on data graph-breaks ({gb}): set "
               "torch._dynamo.config.capture_dynamic_output_shape_ops = True or keep shapes static (torch.where)")
    gb_types = ("Dynamic shape operator",)
    gb_ids = {"2.13": ("GB0036",), "2.11": ("GB0036",)}
    fix = "sometimes"  # unsafe: the Mixtral-style expert loop (fix/expert_loop.py); safe: a size check (fix/size_check.py)

    def _say(self, node, what: str):
        self.report(node, f"`{what}` has a data-dependent output shape and graph-breaks ({{gb}}): set "
                          "torch._dynamo.config.capture_dynamic_output_shape_ops = True, or keep shapes static",
                    fix=dense_expert_loop(self.ctx, node) or size_check(self.ctx, node))

    def visit_Call(self, node: ast.Call):
        func = node.func
        name = self.ctx.resolve(func) or ""
        if name.startswith("torch.") and name.count(".") == 1:
            op = name[6:]
            if op in OPS:
                self._say(node, f"torch.{op}()")
            elif op == "repeat_interleave" and self._tensor_repeats(node, 1):
                self._say(node, "torch.repeat_interleave() with tensor repeats")
            elif op == "where" and len(node.args) == 1 and not node.keywords:
                self._say(node, "torch.where(cond)")
            return
        if not isinstance(func, ast.Attribute) or not (func.attr in OPS or func.attr == "repeat_interleave"):
            return  # the method's name before tensor inference: most method calls are none of these
        if not self.ctx.is_tensor(func.value):
            return
        if func.attr in OPS:
            self._say(node, f"Tensor.{func.attr}()")
        elif func.attr == "repeat_interleave" and self._tensor_repeats(node, 0):
            self._say(node, "Tensor.repeat_interleave() with tensor repeats")

    def _tensor_repeats(self, node: ast.Call, index: int) -> bool:
        repeats = node.args[index] if len(node.args) > index else None
        for k in node.keywords:
            if k.arg == "repeats":
                repeats = k.value
        if repeats is None:
            # torch.repeat_interleave(counts): the tensor is its own repeats.
            return index == 1 and len(node.args) == 1 and self.ctx.is_tensor(node.args[0])
        return self.ctx.is_tensor(repeats)

    # (before, after `--fix --unsafe-fixes`): what the fix does; tests/test_fix.py runs them.
    FIXES = [
        (
            """
import torch
from torch import nn

class Experts(nn.ModuleDict):
    def forward(self, hidden_states, selected_experts, routing_weights):
        final_hidden_states = torch.zeros_like(hidden_states)
        expert_mask = selected_experts.permute(2, 1, 0)
        expert_hit = torch.greater(expert_mask.sum(dim=(-1, -2)), 0).nonzero()
        for expert_idx in expert_hit:
            idx, top_x = torch.where(expert_mask[expert_idx].squeeze(0))
            out = self[f"expert_{expert_idx[0]}"](hidden_states[top_x]) * routing_weights[top_x, idx, None]
            final_hidden_states.index_add_(0, top_x, out)
        return final_hidden_states
""",
            """
import torch
from torch import nn

class Experts(nn.ModuleDict):
    def forward(self, hidden_states, selected_experts, routing_weights):
        final_hidden_states = torch.zeros_like(hidden_states)
        expert_mask = selected_experts.permute(2, 1, 0)
        for expert_idx in range(expert_mask.shape[0]):
            out = self[f"expert_{expert_idx}"](hidden_states) * torch.where(expert_mask[expert_idx].transpose(0, 1) != 0, routing_weights, 0).sum(dim=-1, keepdim=True)
            final_hidden_states.add_(out)
        return final_hidden_states
""",
        ),
    ]

    INVALID = [
        """
import torch
from torch import nn

class Dispatch(nn.Module):
    def forward(self, x, expert_ids, counts):
        rows = torch.nonzero(expert_ids == 0).squeeze(-1)  # <-
        hit = (expert_ids == 1).nonzero()  # <-
        uniq = torch.unique(expert_ids)  # <-
        load = torch.bincount(expert_ids.flatten())  # <-
        big = torch.masked_select(x, x > 0)  # <-
        idx = torch.where(x > 0)  # <-
        rep = torch.repeat_interleave(x, counts, dim=0)  # <-
        return rows, hit, uniq, load, big, idx, rep
""",
    ]
    VALID = [
        """
import torch
from torch import nn

class Dispatch(nn.Module):
    def forward(self, x, expert_ids):
        kept = torch.where(x > 0, x, torch.zeros_like(x))
        heads = x.repeat_interleave(2, dim=1)
        onehot = torch.nn.functional.one_hot(expert_ids, 8)
        load = onehot.sum(0)
        return kept, heads, load
""",
    ]
