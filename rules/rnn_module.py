import ast
from typing import Dict, List, Set

from compilelint.analysis.astutil import walk
from compilelint.rule import Rule

RNN_CLASSES = frozenset(f"torch.nn.{n}" for n in ("RNN", "GRU", "LSTM")) | \
    frozenset(f"torch.nn.modules.rnn.{n}" for n in ("RNN", "GRU", "LSTM"))


class RnnModule(Rule):
    """
    ## What it does
    Finds calls of `nn.RNN`, `nn.GRU` and `nn.LSTM` submodules inside compiled code: `self.rnn(x)`
    where `self.rnn` is assigned one of them in this class or in a subclass in the same file (also
    through an import inside the method: `from torch.nn.modules.rnn import LSTM` in `__init__`)
    (timm's `RNN2dBase.forward` calls the `nn.LSTM` its subclass `LSTM2d` sets), and the other
    uses of such a submodule: `self.rnn.flatten_parameters()`, `self.rnn.hidden_size`.

    ## Why is this bad?
    Dynamo does not trace the cuDNN-style RNN modules: measured on torch 2.13, calling one gives
    "Attempted to wrap RNN, GRU, or LSTM" (GB0014) and the whole frame runs eager (the truth
    corpus: timm's sequencer2d, eval and train). Loading the submodule is what breaks, so a method
    call or an attribute read on it breaks the same way (measured on 2.13: the frame is skipped at
    `self.rnn.flatten_parameters()`, and at `n = self.rnn.hidden_size`).

    ## Example
    ```python
    def forward(self, x):
        y, _ = self.lstm(x)
        return self.head(y)
    ```

    ## Use instead
    Keep the RNN out of the compiled region (compile the layers around it, or mark a wrapper
    `@torch.compiler.disable`), or set `torch._dynamo.config.allow_rnn = True` to trace it.

    ## References
    https://meta-pytorch.github.io/compile-graph-break-site/gb/gb0014.html
    """

    code = "CL216"
    name = "rnn-module"
    triggers = ("RNN", "GRU", "LSTM")
    message = ("nn.RNN/GRU/LSTM modules are not traced: the frame runs eager ({gb}); keep the RNN outside "
               "the compiled region, or set torch._dynamo.config.allow_rnn = True")
    gb_types = ("Attempted to wrap RNN, GRU, or LSTM",)
    gb_ids = {"2.13": ("GB0014",), "2.11": ("GB0014",)}  # 2.11: the truth corpus (timm sequencer2d)
    # Loading the submodule breaks, not calling it: a second RNN later in the frame is never met
    # (sequencer2d's horizontal LSTM after its vertical one; measured on 2.11 and 2.13).
    skips_frame = True

    def __init__(self, ctx):
        super().__init__(ctx)
        self.rnn_attrs: Dict[str, Set[str]] = {}  # class → attributes assigned an RNN module
        self.bases: Dict[str, List[str]] = {}  # class → its base class names in this file

    def visit_ClassDef(self, node: ast.ClassDef):
        if self.ctx.function is not None:
            return
        self.bases[node.name] = [b.id for b in node.bases if isinstance(b, ast.Name)]
        attrs = self.rnn_attrs.setdefault(node.name, set())
        for sub in walk(node):
            if isinstance(sub, ast.Assign) and isinstance(sub.value, ast.Call) and \
                    self.ctx.resolve(sub.value.func) in RNN_CLASSES:
                for t in sub.targets:
                    if isinstance(t, ast.Attribute) and isinstance(t.value, ast.Name) and t.value.id == "self":
                        attrs.add(t.attr)

    def _ancestors(self, name: str) -> Set[str]:
        out, todo = set(), [name]
        while todo:
            for b in self.bases.get(todo.pop(), ()):
                if b not in out:
                    out.add(b)
                    todo.append(b)
        return out

    def _is_rnn(self, node: ast.AST) -> bool:
        """Is `node` `self.<attr>` where this class (or a subclass in the file) sets an RNN?"""
        cls = self.ctx.cls
        if cls is None or not (isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name)
                               and node.value.id == "self"):
            return False
        name = cls.info.qualname
        owners = [c for c, attrs in self.rnn_attrs.items() if node.attr in attrs]
        return any(c == name or name in self._ancestors(c) for c in owners)

    def visit_Call(self, node: ast.Call):
        if self._is_rnn(node.func):
            self.report(node)

    def visit_Attribute(self, node: ast.Attribute):
        if isinstance(node.ctx, ast.Load) and self._is_rnn(node.value):
            self.report(node)  # `self.rnn.flatten_parameters()`, `self.rnn.hidden_size`: the load wraps it

    INVALID = [
        """
import torch
from torch import nn

class RNN2dBase(nn.Module):
    def __init__(self):
        super().__init__()
        self.rnn_v = nn.Identity()

    def forward(self, x):
        v, _ = self.rnn_v(x)  # <-
        return v

class LSTM2d(RNN2dBase):
    def __init__(self):
        super().__init__()
        self.rnn_v = nn.LSTM(8, 8, batch_first=True)

class Tagger(nn.Module):
    def __init__(self):
        super().__init__()
        self.gru = torch.nn.GRU(8, 8)

    def forward(self, x):
        y, _ = self.gru(x)  # <-
        return y

class Encoder(nn.Module):
    def __init__(self):
        super().__init__()
        self.lstm = nn.LSTM(8, 8, batch_first=True)

    def forward(self, x):
        self.lstm.flatten_parameters()  # <-
        y, _ = self.lstm(x)  # <-
        return y
""",
        """
import torch
from torch import nn

class Block(nn.Module):
    def __init__(self, d):
        super().__init__()
        from torch.nn.modules.rnn import LSTM

        self.rnn = LSTM(d, d, 1)
        self.proj = nn.Linear(d, d)

    def forward(self, x):
        y = self.rnn(x)[0]  # <-
        return self.proj(y)
""",
    ]
    VALID = [
        """
import torch
from torch import nn

class Tagger(nn.Module):
    def __init__(self):
        super().__init__()
        self.gru = nn.GRU(8, 8)
        self.head = nn.Linear(8, 2)

    def forward(self, x):
        return self.head(x)

def encode(model, x):  # not compiled
    return model.gru(x)
""",
        """
import torch
from torch import nn

def LSTM(d, h, n):  # the module's own LSTM: a method's import elsewhere does not rebind it here
    return nn.Linear(d, h)

class Other(nn.Module):
    def recurrent_class(self):
        from torch.nn import LSTM
        return LSTM

class Block(nn.Module):
    def __init__(self, d):
        super().__init__()
        self.rnn = LSTM(d, d, 1)

    def forward(self, x):
        return self.rnn(x)
""",
    ]
