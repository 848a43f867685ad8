"""How often `torch.compile(...)` called again and again compiles (CL406's premise), per torch.

    python bench/measure/compile_in_loop.py      (prints one line per case; keep the output as
                                                  compile_in_loop-<torch>.out)

Each case calls a freshly made `torch.compile(...)` wrapper 5 times in one process, as CL406's
INVALID examples do (a loop over batches; a `forward` compiling its submodule on every call), and
counts the frames Dynamo compiled (`counters["frames"]["ok"]`): 1 means the later calls reused the
first compilation, 5 that each call compiled again.
"""
import torch
from torch import nn
from torch._dynamo.utils import counters

CALLS = 5


class Wrapper(nn.Module):
    def __init__(self, inner):
        super().__init__()
        self.inner = inner

    def forward(self, x):
        fast = torch.compile(self.inner, backend=BACKEND)
        return fast(x)


def double(t):
    return t * 2


def module_in_loop(m, x):
    for _ in range(CALLS):
        torch.compile(m, backend=BACKEND)(x)


def function_in_loop(m, x):
    for _ in range(CALLS):
        torch.compile(double, backend=BACKEND)(x)


def new_lambda_same_closure(m, x):
    for _ in range(CALLS):
        torch.compile(lambda t: m(t) * 2, backend=BACKEND)(x)


def new_lambda_closing_over_the_step(m, x):
    for step in range(CALLS):
        torch.compile(lambda t: m(t) * step, backend=BACKEND)(x)


def forward_compiling_its_submodule(m, x):
    w = Wrapper(m)
    for _ in range(CALLS):
        w(x)


CASES = [module_in_loop, function_in_loop, new_lambda_same_closure, new_lambda_closing_over_the_step,
         forward_compiling_its_submodule]

if __name__ == "__main__":
    for BACKEND in ("eager", "inductor"):
        for case in CASES:
            torch._dynamo.reset()
            counters.clear()
            case(nn.Linear(4, 4), torch.randn(2, 4))
            print(f"torch {torch.__version__}, backend={BACKEND}, {case.__name__}: "
                  f"{counters['frames']['ok']} frames compiled in {CALLS} calls")
