"""The arm of `isinstance(item, Tensor)` for items that are not tensors, over the lists an object
fills itself under names given at run time (compilelint/analysis/self_items.py;
fixtures/precision/tensor_items_of_self*.py hold the model cases, measured in
bench/measure/snippets_self_items.out)."""
import ast
import os
import tempfile

import pytest

from compilelint.analysis.self_items import ANY_PART, non_tensor_arm, put_items, tensor_returns, verdicts
from compilelint.config import Settings
from compilelint.engine import check_paths

from conftest import FIXTURES
from helpers import check_source

PRECISION = os.path.join(FIXTURES, "precision")


def _codes(report):
    return sorted((f.span.row, f.code) for f in report.findings)


@pytest.mark.parametrize("version", ["2.11", "2.13"])
def test_fixture_pair_on_each_torch(version):
    settings = Settings(cache=False, named_alone=True, torch_version=version)
    clean = check_paths([os.path.join(PRECISION, "tensor_items_of_self.py")], settings)
    assert _codes(clean) == []
    other = check_paths([os.path.join(PRECISION, "tensor_items_of_self_other.py")], settings)
    # the print breaks on every torch; the deepcopy of an item that is a string only on 2.11
    assert _codes(other) == [(35, "CL201")] + ([(36, "CL207")] if version == "2.11" else [])


REGISTRY = """
import copy
import torch
from torch import nn

class Registry(nn.Module):
    def __init__(self):
        super().__init__()
        self._names = []
        self.register("seen", [])

    def register(self, name, default):
        setattr(self, name, default)
        self._names.append(name)

    def snapshot(self):
        out = {}
        for name in self._names:
            value = getattr(self, name)
            out[name] = [v.clone() if isinstance(v, torch.Tensor) else copy.deepcopy(v) for v in value]
        return out

    def forward(self, x: torch.Tensor):
        self.seen.append(x * 2)
        return x + len(self.snapshot())
"""


def test_tensor_items_silence_the_arm():
    assert _codes(check_source(REGISTRY, torch_version="2.11")) == []


def test_a_root_of_another_class_decides_nothing():
    """The registry as a part of a model: the compiled object is another, whose parts the decision
    does not follow."""
    source = REGISTRY.replace("class Registry(nn.Module):", "class Registry(nn.Module):  # a part") + """
class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.part = Registry()

    def forward(self, x: torch.Tensor):
        return self.part(x)
"""
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "example.py")
        with open(path, "w", encoding="utf-8") as f:
            f.write(source)
        report = check_paths([path], Settings(cache=False, torch_version="2.11", entries=[f"{path}:Model"]))
    assert _codes(report) == [(20, "CL207")]


def test_items_put_by_another_method_count():
    source = REGISTRY.replace("        self.seen.append(x * 2)\n",
                              "        self.seen.append(x * 2)\n        self.note(x)\n") + """
    def note(self, x):
        self.seen.extend(["batch", x.shape[0]])
"""
    assert _codes(check_source(source, torch_version="2.11")) == [(20, "CL207")]


def _arm(source: str) -> bool:
    """Is the `else` of the first `isinstance` test in `source`'s function the non-tensor arm?"""
    fn = ast.parse(source).body[0]
    for node in ast.walk(fn):
        if isinstance(node, ast.IfExp):
            stack = [n for n in ast.walk(fn) if isinstance(n, (ast.ListComp, ast.For)) and node in ast.walk(n)]
            names = {"Tensor": "torch.Tensor", "torch.Tensor": "torch.Tensor", "Parameter": "torch.nn.Parameter"}
            return non_tensor_arm(node.test, False, stack, fn, lambda t: names.get(ast.unparse(t)))
    raise AssertionError("no conditional expression")


def test_which_arms_are_the_non_tensor_arm():
    assert _arm("def f(self, n):\n    return [v if isinstance(v, Tensor) else g(v) for v in getattr(self, n)]")
    assert _arm("def f(self, n):\n    xs = getattr(self, n)\n    return [v if isinstance(v, torch.Tensor) else g(v) for v in xs]")
    # a parameter, a constant name, a local bound twice, a narrower type: nothing known
    assert not _arm("def f(self, xs):\n    return [v if isinstance(v, Tensor) else g(v) for v in xs]")
    assert not _arm("def f(self):\n    return [v if isinstance(v, Tensor) else g(v) for v in getattr(self, 'xs')]")
    assert not _arm("def f(self, n, ys):\n    xs = getattr(self, n)\n    xs = ys\n"
                    "    return [v if isinstance(v, Tensor) else g(v) for v in xs]")
    assert not _arm("def f(self, n):\n    return [v if isinstance(v, Parameter) else g(v) for v in getattr(self, n)]")


def test_what_a_statement_puts():
    def put(src):
        node = ast.parse(src).body[0]
        found = put_items(node.value if isinstance(node, ast.Expr) else node)
        return (found[0], [ast.unparse(i) for i in found[1]]) if found else None

    assert put("self.xs.append(t)") == ("xs", ["t"])
    assert put("getattr(self, name).insert(0, t)") == ("", ["t"])
    assert put("self.xs.extend([a, b])") == ("xs", ["a", "b"])
    assert put("self.xs += [a]") == ("xs", ["a"])
    assert put("self.total += n") is None  # arithmetic
    assert put("self.xs = [a, b]") == ("xs", ["a", "b"])
    assert put("other.append(t)") is None


def test_return_annotations():
    def parts(src):
        names = {"Tensor": "torch.Tensor", "tuple": "builtins.tuple", "int": "builtins.int", "list": "builtins.list"}
        fn = ast.parse(src).body[0]
        return tensor_returns(fn, lambda t: names.get(ast.unparse(t), ast.unparse(t)),
                              lambda f, kinds: [n for n in ast.walk(f) if n.__class__ in kinds])

    assert parts("def f() -> Tensor: ...") == (-1,)
    assert parts("def f() -> tuple[Tensor, int, Tensor]: ...") == (0, 2)
    assert parts("def f() -> tuple[Tensor, ...]: ...") == ()
    assert parts("def f() -> list[Tensor]: ...") == (ANY_PART,)
    assert parts("def f(): ...") == ()


def test_items_from_a_helper_of_another_file():
    """What a local bound to a call of another file's function holds is that function's return
    annotation's business (the project pass reads it): the part is named."""
    fn = ast.parse("""
def update(self, preds, target):
    preds, target = check(preds, target)
    state = count(preds, target)
    again = state
    again = preds
    self.preds.append(preds.to(self.dtype))
    self.hist.append(state[1])
    self.other.append(again)
""").body[0]
    items = [n.value.args[0] for n in fn.body[-3:]]
    resolve = lambda node: {"check": "pkg.check", "count": "pkg.count"}.get(ast.unparse(node))  # noqa: E731
    said = [verdicts([i], lambda n: False, fn, resolve) for i in items]
    assert said == [("@pkg.check#0",), ("@pkg.count#1",), ("other",)]


def test_grown_every_call_leaves_out_growth_under_a_branch():
    from compilelint.analysis.self_items import grown_every_call

    fn = ast.parse('''
def update(self, x, y):
    self.seen.append(x)
    for v in y:
        self.items.extend([v])
    with ctx():
        self.log += [x]
    if self.per_sample:
        self.samples.append(x)
    else:
        self.total += x
    setattr(self, "stored", [x])
''').body[0]
    assert grown_every_call(fn) == ("seen", "items", "log")
