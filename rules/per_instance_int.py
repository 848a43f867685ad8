import ast
import re
from typing import Dict, Optional, Set

from compilelint.analysis.names import COMPILE_FUNCS
from compilelint.rule import Rule

# Constructor parameters that hold a per-instance position: layer_idx, block_id, stage_index...
INDEX_NAME = re.compile(r"(^|_)(idx|index|id|num|number|rank)$|^layer|^block", re.I)


def _self_attr(node) -> Optional[str]:
    if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == "self":
        return node.attr
    return None


def _int_params(init) -> Set[str]:
    args = init.args
    positional = args.posonlyargs + args.args
    defaults = dict(zip([a.arg for a in positional[len(positional) - len(args.defaults):]], args.defaults))
    defaults.update({a.arg: d for a, d in zip(args.kwonlyargs, args.kw_defaults) if d is not None})
    out = set()
    for a in positional[1:] + args.kwonlyargs:
        ann = a.annotation
        default = defaults.get(a.arg)
        if isinstance(ann, ast.Name) and ann.id == "int":
            out.add(a.arg)
        elif isinstance(default, ast.Constant) and type(default.value) is int:
            out.add(a.arg)
        elif ann is None and INDEX_NAME.search(a.arg):
            out.add(a.arg)
    return out


class PerInstanceInt(Rule):
    """
    ## What it does
    Finds integer attributes set per instance from a constructor argument (`self.layer_idx =
    layer_idx`) and read in a method that is compiled once per instance: a method decorated with
    `@torch.compile`, or one compiled in `__init__` (`self.forward = torch.compile(self.forward)`).

    ## Why is this bad?
    All instances share the method's code, so they share its compiled graphs, and Dynamo treats
    an int attribute of an `nn.Module` as a constant (guard `self.layer_idx == 0`). Each new
    instance fails the guard and recompiles: measured on torch 2.13 with 10 layers compiled
    separately, 8 recompiles, then `recompile_limit` (8) is hit and the remaining layers run
    eager. The whole model compiled at once is clean (the layers are inlined).

    ## Example
    ```python
    class DecoderLayer(nn.Module):
        def __init__(self, config, layer_idx):
            super().__init__()
            self.layer_idx = layer_idx

        @torch.compile
        def forward(self, x, cache):
            return x + cache[self.layer_idx]
    ```

    ## Use instead
    Compile the whole model (or the module that loops over the layers) instead of each layer,
    pass the index as an argument, or set
    `torch._dynamo.config.allow_unspec_int_on_nn_module = True` so module ints are not
    specialized.

    ## References
    https://docs.pytorch.org/docs/stable/compile/programming_model.recompilation.html
    """

    code = "CL408"
    name = "per-instance-int"
    kind = "recompile"
    severity = "warning"
    triggers = ("compile",)
    message = ("a per-instance int attribute read in a method compiled per instance recompiles for every "
               "instance (8 at most, then eager): compile the whole model, or set "
               "torch._dynamo.config.allow_unspec_int_on_nn_module = True")

    def __init__(self, ctx):
        super().__init__(ctx)
        self.int_attrs: Dict[str, Set[str]] = {}  # class → attrs set from int constructor params
        self.compiled: Dict[str, Set[str]] = {}  # class → methods compiled in __init__
        self.reported: Set[tuple] = set()

    def visit_ClassDef(self, node: ast.ClassDef):
        if self.ctx.function is not None:
            return
        init = next((m for m in node.body if isinstance(m, ast.FunctionDef) and m.name == "__init__"), None)
        if init is None:
            return
        params = _int_params(init)
        attrs, compiled = set(), set()
        for sub in self.ctx.nodes(init):  # the walk the analysis made of it
            if not isinstance(sub, ast.Assign):
                continue
            for target in sub.targets:
                attr = _self_attr(target)
                if attr is None:
                    continue
                if isinstance(sub.value, ast.Name) and sub.value.id in params:
                    attrs.add(attr)
                elif isinstance(sub.value, ast.Call) and self.ctx.resolve(sub.value.func) in COMPILE_FUNCS \
                        and sub.value.args and _self_attr(sub.value.args[0]) == attr:
                    compiled.add(attr)
        self.int_attrs[node.name] = attrs
        self.compiled[node.name] = compiled

    def _per_instance_root(self) -> bool:
        fn, cls = self.ctx.function, self.ctx.cls
        if fn is None or cls is None:
            return False
        if any(d.split("#")[0] in COMPILE_FUNCS for d in fn.decorators):
            return True
        return fn.qualname.rsplit(".", 1)[-1] in self.compiled.get(cls.info.qualname, ())

    def visit_Attribute(self, node: ast.Attribute):
        attr = _self_attr(node)
        if attr is None or not isinstance(node.ctx, ast.Load) or not self._per_instance_root():
            return
        cls = self.ctx.cls.info.qualname
        key = (self.ctx.function.qualname, attr)
        if attr in self.int_attrs.get(cls, ()) and key not in self.reported:
            self.reported.add(key)
            self.report(node, f"`self.{attr}` differs per instance and this method is compiled per instance: "
                              "each instance fails the guard and recompiles (8 at most, then eager); compile the "
                              "whole model, pass it as an argument, or set "
                              "torch._dynamo.config.allow_unspec_int_on_nn_module = True")

    INVALID = [
        """
import torch
from torch import nn

class DecoderLayer(nn.Module):
    def __init__(self, config, layer_idx):
        super().__init__()
        self.layer_idx = layer_idx
        self.proj = nn.Linear(8, 8)

    @torch.compile
    def forward(self, x, caches):
        if self.layer_idx == 0:  # <-
            x = x * 2
        return self.proj(x) + caches[self.layer_idx]

class Block(nn.Module):
    def __init__(self, block_id: int):
        super().__init__()
        self.block_id = block_id
        self.forward = torch.compile(self.forward)

    def forward(self, x):
        return x * self.block_id  # <-
""",
    ]
    VALID = [
        """
import torch
from torch import nn

class DecoderLayer(nn.Module):
    def __init__(self, config, layer_idx):
        super().__init__()
        self.layer_idx = layer_idx

    def forward(self, x, caches):  # inlined when the whole model is compiled
        return x + caches[self.layer_idx]

class Model(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.layers = nn.ModuleList(DecoderLayer(config, i) for i in range(4))

    @torch.compile
    def forward(self, x, caches):
        for layer in self.layers:
            x = layer(x, caches)
        return x
""",
    ]
