import ast
import re

from compilelint.analysis.names import COMPILE_FUNCS
from compilelint.rule import Rule

# Parameters that change on every call of a training or sampling loop.
STEP_NAME = re.compile(r"^(t|ts|step|steps|global_step|cur_step|step_idx|iteration|iter|epoch|timestep|"
                       r"timesteps|time|sigma|sigmas|noise_level|guidance_scale|lr|learning_rate)$")
NUMBER_ANNOTATIONS = frozenset({"int", "float"})


class ScalarArgument(Rule):
    """
    ## What it does
    Finds Python `int`/`float` parameters of compiled functions (a `@torch.compile` function or a
    module's `forward`) whose name says they change every call: `step`, `timestep`, `t`, `sigma`,
    `iteration`, `epoch`, `lr` … — annotated `int`/`float` or defaulting to a number.

    ## Why is this bad?
    Dynamo specializes a Python number argument to its value (guard `t == 0.9`), so the next
    value recompiles. Measured on torch 2.13: an `int` step and a `float` timestep each recompile
    once, then automatic dynamic makes them symbolic; a branch on the float (`if t > 0.5`) adds
    another recompile. With `dynamic=False`, or under `fail_on_recompile` (vLLM), every new value
    recompiles or fails.

    ## Example
    ```python
    @torch.compile
    def denoise(x, timestep: float):
        return x * timestep
    ```

    ## Use instead
    Pass it as a 0-d tensor (`torch.tensor(timestep)`), which is an input of the graph, or
    compile with `dynamic=True`.

    ## References
    https://docs.pytorch.org/docs/stable/compile/programming_model.recompilation.html
    """

    code = "CL410"
    name = "scalar-argument"
    kind = "recompile"
    severity = "warning"
    message = ("a Python number argument that changes every call is specialized: the next value recompiles; "
               "pass it as a 0-d tensor, or compile with dynamic=True")

    def __init__(self, ctx):
        super().__init__(ctx)
        self.params = {}  # function qualname → {parameter: "int" | "float"}
        self.names = set()  # every such parameter's name: any other name read is not one (most reads)
        self.seen = set()

    # Module-level definitions are visited before their bodies are walked: note the parameters here.
    def visit_FunctionDef(self, node):
        if self.ctx.function is None:
            self.params[node.name] = _step_params(node)
            self.names.update(self.params[node.name])

    def visit_ClassDef(self, node: ast.ClassDef):
        if self.ctx.function is None:
            for item in node.body:
                if isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef)):
                    self.params[f"{node.name}.{item.name}"] = _step_params(item)
                    self.names.update(self.params[f"{node.name}.{item.name}"])

    visit_AsyncFunctionDef = visit_FunctionDef

    def _compiled_entry(self) -> bool:
        fn = self.ctx.function
        if any(d.split("#")[0] in COMPILE_FUNCS for d in fn.decorators):
            return True
        return self.ctx.cls is not None and fn.qualname.endswith(".forward")

    def visit_Name(self, node: ast.Name):
        if node.id not in self.names:
            return
        fn = self.ctx.function
        if fn is None or not isinstance(node.ctx, ast.Load):
            return
        kind = self.params.get(fn.qualname, {}).get(node.id)
        if kind is None or (fn.qualname, node.id) in self.seen or not self._compiled_entry():
            return
        self.seen.add((fn.qualname, node.id))  # once per parameter, at its first read
        self.report(node, f"`{node.id}` is a Python {kind} argument that changes every call: Dynamo specializes "
                          "it (guard on its value), so the next value recompiles; pass it as a 0-d tensor, or "
                          "compile with dynamic=True")

    INVALID = [
        """
import torch
from torch import nn

@torch.compile
def denoise(x, timestep: float):
    return x * timestep  # <-

class Scheduler(nn.Module):
    def forward(self, sample, step: int, sigma=1.0):
        if step > 10:  # <-
            sample = sample * 2
        return sample * sigma * step  # <-
""",
    ]
    VALID = [
        """
import torch
from torch import nn

@torch.compile
def scale(x, factor: float, dim: int = -1):  # configuration, not a per-step value
    return x.softmax(dim) * factor

class Scheduler(nn.Module):
    def forward(self, sample, timestep: torch.Tensor):
        return sample * timestep

def eager_loop(x, step: int):
    return x * step
""",
    ]


def _step_params(fn) -> dict:
    args = fn.args
    positional = args.posonlyargs + args.args
    defaults = dict(zip([a.arg for a in positional[len(positional) - len(args.defaults):]], args.defaults))
    defaults.update({a.arg: d for a, d in zip(args.kwonlyargs, args.kw_defaults) if d is not None})
    out = {}
    for a in positional + args.kwonlyargs:
        if not STEP_NAME.match(a.arg):
            continue
        ann, default = a.annotation, defaults.get(a.arg)
        if isinstance(ann, ast.Name) and ann.id in NUMBER_ANNOTATIONS:
            out[a.arg] = ann.id
        elif isinstance(default, ast.Constant) and type(default.value) in (int, float):
            out[a.arg] = type(default.value).__name__
    return out
