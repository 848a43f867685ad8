import ast
from typing import Optional, Set

from compilelint.rule import Rule

# Registrations of a fake/meta kernel that take the op name ("ns::op") first.
FAKE_REGISTRARS = frozenset({
    "torch.library.register_fake", "torch.library.impl_abstract", "torch.library.register_meta",
})
CUSTOM_OP = frozenset({"torch.library.custom_op", "torch._library.custom_ops.custom_op"})


class DynamicCustomOp(Rule):
    """
    ## What it does
    Finds calls `torch.ops.<ns>.<op>(...)` inside compiled code to a custom op whose fake (meta)
    kernel, registered in the same file, allocates a data-dependent size with
    `ctx.new_dynamic_size()` (`torch.library.register_fake`, `impl_abstract`, or
    `@op.register_fake` of a `torch.library.custom_op`).

    ## Why is this bad?
    The op's output shape depends on the data, exactly like `torch.nonzero`: measured on torch
    2.13, calling it through `torch.ops.<ns>.<op>` graph-breaks with "Dynamic shape operator"
    (GB0036 on torch 2.13), unless `capture_dynamic_output_shape_ops` is on. (Calling the `custom_op` function
    object itself traced cleanly in the same measurement, so it is not reported.)

    ## Example
    ```python
    @torch.library.register_fake("mylib::select")
    def _(x):
        n = torch.library.get_ctx().new_dynamic_size()
        return x.new_empty(n)

    def forward(self, x):
        return torch.ops.mylib.select(x) * 2
    ```

    ## Use instead
    Set `torch._dynamo.config.capture_dynamic_output_shape_ops = True`, give the op a static
    output shape (pad to the maximum and return a count), or call the op outside the region.

    ## References
    https://meta-pytorch.github.io/compile-graph-break-site/gb/gb0036.html
    """

    code = "CL304"
    name = "dynamic-custom-op"
    triggers = ("new_dynamic_size",)
    message = ("this custom op's fake kernel allocates a dynamic size: calling it graph-breaks ({gb} on torch 2.13): set "
               "torch._dynamo.config.capture_dynamic_output_shape_ops = True, or give it a static output shape")
    gb_types = ("Dynamic shape operator",)
    gb_ids = {"2.13": ("GB0036",)}  # measured on 2.13 CPU only

    def __init__(self, ctx):
        super().__init__(ctx)
        self.dynamic: Set[str] = set()  # "ns.op" of ops whose fake kernel is data-dependent
        self.custom_ops = {}  # function name → "ns.op" for @torch.library.custom_op("ns::op")
        self.kernels = {}  # module function name → allocates a dynamic size

    def _op_name(self, call) -> Optional[str]:
        if isinstance(call, ast.Call) and call.args and isinstance(call.args[0], ast.Constant) \
                and isinstance(call.args[0].value, str) and "::" in call.args[0].value:
            return call.args[0].value.replace("::", ".")
        return None

    def visit_FunctionDef(self, node):
        if self.ctx.function is not None:
            return
        dynamic = any(isinstance(s, ast.Attribute) and s.attr == "new_dynamic_size" for s in ast.walk(node))
        self.kernels[node.name] = dynamic
        for d in node.decorator_list:
            if not isinstance(d, ast.Call):
                if isinstance(d, ast.Attribute) and d.attr in ("register_fake", "register_meta") and dynamic \
                        and isinstance(d.value, ast.Name) and d.value.id in self.custom_ops:
                    self.dynamic.add(self.custom_ops[d.value.id])  # @op.register_fake
                continue
            name = self.ctx.resolve(d.func)
            op = self._op_name(d)
            if op and name in CUSTOM_OP:
                self.custom_ops[node.name] = op
            elif op and name in FAKE_REGISTRARS and dynamic:
                self.dynamic.add(op)

    def visit_Call(self, node: ast.Call):
        name = self.ctx.resolve(node.func)
        if self.ctx.function is None:
            # torch.library.register_fake("ns::op", kernel) written as a call
            op = self._op_name(node)
            if op and name in FAKE_REGISTRARS and len(node.args) > 1 and isinstance(node.args[1], ast.Name) \
                    and self.kernels.get(node.args[1].id):
                self.dynamic.add(op)
            return
        if name and name.startswith("torch.ops."):
            parts = name.split(".")
            if len(parts) >= 4 and f"{parts[2]}.{parts[3]}" in self.dynamic:
                self.report(node, f"`torch.ops.{parts[2]}.{parts[3]}` has a data-dependent output size (its fake "
                                  "kernel calls new_dynamic_size()) and graph-breaks ({gb} on torch 2.13): set "
                                  "torch._dynamo.config.capture_dynamic_output_shape_ops = True, or give it a "
                                  "static output shape")

    INVALID = [
        """
import torch

torch.library.define("mylib::select", "(Tensor x) -> Tensor")

@torch.library.register_fake("mylib::select")
def _select_fake(x):
    n = torch.library.get_ctx().new_dynamic_size()
    return x.new_empty(n)

@torch.library.custom_op("mylib::keep", mutates_args=())
def keep(x: torch.Tensor) -> torch.Tensor:
    return x[x > 0].clone()

@keep.register_fake
def _(x):
    return x.new_empty(torch.library.get_ctx().new_dynamic_size())

@torch.compile
def run(x):
    y = torch.ops.mylib.select(x)  # <-
    z = torch.ops.mylib.keep.default(x)  # <-
    return y.sum() + z.sum()
""",
    ]
    VALID = [
        """
import torch

@torch.library.custom_op("mylib::keep", mutates_args=())
def keep(x: torch.Tensor) -> torch.Tensor:
    return x[x > 0].clone()

@keep.register_fake
def _(x):
    return x.new_empty(torch.library.get_ctx().new_dynamic_size())

@torch.library.custom_op("mylib::scale", mutates_args=())
def scale(x: torch.Tensor) -> torch.Tensor:
    return x * 2

@scale.register_fake
def _(x):
    return torch.empty_like(x)

@torch.compile
def run(x):
    return keep(x).sum() + torch.ops.mylib.scale(x).sum()  # keep() itself traced cleanly
""",
    ]
