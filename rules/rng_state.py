import ast

from compilelint.rule import Rule

SEEDING = frozenset({
    "torch.manual_seed", "torch.random.manual_seed", "torch.cuda.manual_seed", "torch.cuda.manual_seed_all",
    "torch.cuda.random.manual_seed", "torch.cuda.random.manual_seed_all", "torch.get_rng_state",
    "torch.set_rng_state", "torch.random.get_rng_state", "torch.random.set_rng_state",
    "torch.cuda.get_rng_state", "torch.cuda.set_rng_state", "torch.random.fork_rng",
})
GENERATORS = frozenset({"torch.Generator", "torch._C.Generator"})


class RngState(Rule):
    """
    ## What it does
    Finds RNG state handling inside compiled code: `torch.manual_seed()`,
    `torch.cuda.manual_seed()`, `torch.get_rng_state()`/`set_rng_state()`,
    `torch.random.fork_rng()`, and `torch.Generator(...)` created there.

    ## Why is this bad?
    Seeding and reading the RNG state are not traced: `torch.manual_seed(0)` and
    `torch.cuda.manual_seed(0)` graph-break ("Attempted to call function marked as skipped",
    GB0007), `fork_rng` breaks too, and a `torch.Generator` made inside the region is an opaque
    object ("An opaque object was created in the middle of the program.", GB0363 on 2.13;
    GB0007 on 2.11), followed by more breaks on each of its methods (GB7650). No knob helps.

    ## Example
    ```python
    def forward(self, x):
        g = torch.Generator(device=x.device).manual_seed(1234)
        return x + torch.randn(x.shape, generator=g, device=x.device)
    ```

    ## Use instead
    Seed once, outside the compiled region (before calling the model). Random ops that use the
    global generator (`torch.randn`, `torch.rand`, dropout) are traced and replay correctly.

    ## References
    https://meta-pytorch.github.io/compile-graph-break-site/gb/gb0007.html
    """

    code = "CL208"
    name = "rng-state"
    triggers = ('manual_seed', 'Generator', 'rng_state', 'fork_rng')
    message = ("seeding or creating an RNG inside compiled code graph-breaks ({gb}/{gb1}): seed once outside "
               "the compiled region and use the global generator inside")
    gb_types = ("Attempted to call function marked as skipped",
                "An opaque object was created in the middle of the program.", "torch.Generator method")
    gb_ids = {"2.13": ("GB0007", "GB0363", "GB7650"), "2.11": ("GB0007", "GB0156", "GB0055")}

    def visit_Call(self, node: ast.Call):
        name = self.ctx.resolve(node.func)
        if name in SEEDING:
            self.report(node, f"`{name}()` graph-breaks ({{gb}}): seed once outside the compiled region")
        elif name in GENERATORS:
            self.report(node, "a `torch.Generator` created in compiled code is an opaque object and graph-breaks "
                              "({gb1}), and so does each of its methods: seed outside the compiled region and use "
                              "the global generator inside")

    INVALID = [
        """
import torch
from torch import nn

class NoisyGate(nn.Module):
    def forward(self, x):
        torch.manual_seed(0)  # <-
        g = torch.Generator(device=x.device)  # <-
        torch.cuda.manual_seed(1)  # <-
        return x + torch.randn(x.shape, device=x.device)
""",
    ]
    VALID = [
        """
import torch
from torch import nn

class NoisyGate(nn.Module):
    def __init__(self):
        super().__init__()
        torch.manual_seed(0)  # construction is eager
        self.drop = nn.Dropout(0.1)

    def forward(self, x):
        return self.drop(x + torch.randn_like(x) * torch.rand((), device=x.device))

def main(model, x):
    torch.manual_seed(1234)
    return model(x)
""",
    ]
