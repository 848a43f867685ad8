import ast

from compilelint.analysis import tensors as T
from compilelint.rule import Rule

STRING_BUILTINS = {"builtins.str": "str", "builtins.repr": "repr", "builtins.format": "format"}
# Calls that already graph-break on their own (print, logging, warnings): the string inside is the
# same break, reported by that call's rule.
SINKS = frozenset({"builtins.print", "warnings.warn"})
LOGGER_METHODS = frozenset({"debug", "info", "warning", "warn", "error", "exception", "critical", "fatal", "log"})


class TensorToString(Rule):
    """
    ## What it does
    Finds a tensor turned into text inside compiled code: `str(t)`, `repr(t)`, `format(t)`,
    `f"{t}"`, `"%s" % t` and `"{}".format(t)`.

    ## Why is this bad?
    Formatting a tensor reads its data. `str(t)` and `"%s" % t` graph-break ("Failed to trace
    builtin operator", GB0059), `repr(t)` and `f"{t!r}"` break with "repr() on tensor" (GB0569),
    and `f"{t}"`/`"{}".format(t)` make the frame fall back to eager where the string is used
    ("Observed exception", GB0088 on 2.13; GB0156 on 2.11). No knob helps.
    Formatting metadata is fine: `f"{t.shape}"`, `f"{t.dtype}"`, `str(t.size())`.

    ## Example
    ```python
    name = f"scores={scores}"
    ```

    ## Use instead
    Format shapes and dtypes only, or move the formatting out of the compiled region (or under
    `if not torch.compiler.is_compiling():`). When the string goes straight into `print`,
    a logger or `warnings.warn`, that call's own rule reports it.

    ## References
    https://meta-pytorch.github.io/compile-graph-break-site/gb/gb0059.html
    """

    code = "CL205"
    name = "tensor-to-string"
    message = ("formatting a tensor as text reads its data and graph-breaks: format t.shape / t.dtype instead, "
               "or move it out of the compiled region")
    gb_types = ("Failed to trace builtin operator", "repr() on tensor", "Observed exception", "Unsupported method call")
    gb_ids = {"2.13": ("GB0059", "GB0569", "GB0088"), "2.11": ("GB0059", "GB0569", "GB0156")}

    def _in_sink(self) -> bool:
        for anc in reversed(self.ctx.stack[:-1]):
            if isinstance(anc, ast.Call):
                name = self.ctx.resolve(anc.func)
                if name in SINKS or (name or "").startswith("logging."):
                    return True
                func = anc.func
                if isinstance(func, ast.Attribute) and func.attr in LOGGER_METHODS and \
                        self.ctx.kind(func.value) == T.LOGGER:
                    return True
            if isinstance(anc, ast.stmt):
                return False
        return False

    def _say(self, node, what: str):
        if not self._in_sink():
            self.report(node, f"{what} of a tensor reads its data and graph-breaks: format t.shape / t.dtype "
                              "instead, or move it out of the compiled region")

    def visit_Call(self, node: ast.Call):
        func = node.func
        name = self.ctx.resolve(func)
        if name in STRING_BUILTINS and node.args and self.ctx.is_tensor(node.args[0]):
            self._say(node, f"`{STRING_BUILTINS[name]}()`")
        elif isinstance(func, ast.Attribute) and func.attr == "format" and isinstance(func.value, ast.Constant) \
                and isinstance(func.value.value, str):
            if any(self.ctx.is_tensor(a) for a in node.args) or any(self.ctx.is_tensor(k.value) for k in node.keywords):
                self._say(node, "`str.format()`")

    def visit_JoinedStr(self, node: ast.JoinedStr):
        if any(isinstance(v, ast.FormattedValue) and self.ctx.is_tensor(v.value) for v in node.values):
            self._say(node, "an f-string")

    def visit_BinOp(self, node: ast.BinOp):
        if not isinstance(node.op, ast.Mod) or not (isinstance(node.left, ast.Constant) and isinstance(node.left.value, str)):
            return
        right = node.right
        values = right.elts if isinstance(right, ast.Tuple) else [right]
        if any(self.ctx.is_tensor(v) for v in values):
            self._say(node, "`%` formatting")

    INVALID = [
        """
import torch
from torch import nn

class Head(nn.Module):
    def forward(self, x):
        scores = x.softmax(-1)
        key = str(scores.argmax(-1))  # <-
        tag = f"scores={scores}"  # <-
        note = "max %s" % scores.max()  # <-
        text = "{} tokens".format(scores.sum())  # <-
        debug = repr(x)  # <-
        return scores * len(key + tag + note + text + debug)
""",
    ]
    VALID = [
        """
import torch
from torch import nn

class Head(nn.Module):
    def forward(self, x):
        tag = f"shape={x.shape} dtype={x.dtype}"
        size = str(x.size())
        n = "%d rows" % x.shape[0]
        name = "{}-{}".format(self.__class__.__name__, x.ndim)
        return x * len(tag + size + n + name)
""",
    ]
