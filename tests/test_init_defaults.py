"""Options a module copies from its constructor hold their default where no construction in the
project passes them (fixtures/precision/constructor_default_option*.py hold the model cases)."""
import ast

from compilelint.analysis.init_defaults import init_defaults

from helpers import check_source


def _defaults(source: str):
    cls = ast.parse(source).body[0]
    return init_defaults(cls, lambda fn: list(ast.walk(fn)))


def test_plain_copies_of_false_defaults():
    assert _defaults("""
class Head:
    def __init__(self, dim, looped=False, ignore_index=None, mode="", scale=2.0, fast=True):
        self.looped = looped
        self.ignore_index = ignore_index
        self.mode = mode
        self.scale = scale
        self.fast = fast
        self.dim = dim
""") == {"looped": "looped", "ignore_index": "ignore_index", "mode": "mode"}


def test_rebound_parameters_and_reassigned_attributes_decide_nothing():
    assert _defaults("""
class Head:
    def __init__(self, looped=False, ignore_index=None, mode=""):
        ignore_index = ignore_index or -100
        self.looped = looped
        self.ignore_index = ignore_index
        self.mode = mode

    def set_mode(self, mode):
        self.mode = mode

    def loop(self):
        self.looped = True
""") == {}
    assert _defaults("""
class Head:
    def __init__(self, looped=False, **kwargs):
        self.looped = looped
        for k, v in kwargs.items():
            setattr(self, k, v)
""") == {}


MODEL = """
import torch
from torch import nn


class Head(nn.Module):
    def __init__(self, dim: int, debug: bool = False):
        super().__init__()
        self.proj = nn.Linear(dim, dim)
        self.debug = debug

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if self.debug:
            print("head", x.sum().item())
        return self.proj(x)


class Model(nn.Module):
    def __init__(self, dim: int = 4):
        super().__init__()
        self.head = Head(dim{passed})

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.head(x)
"""


def test_a_construction_passing_the_option_keeps_the_branch():
    assert not check_source(MODEL.format(passed="")).findings
    assert {f.code for f in check_source(MODEL.format(passed=", debug=True")).findings} == {"CL101", "CL201"}
    # handed on from the caller's own option: given when the caller's constructions give it,
    # unknown when nothing in the project builds the caller
    handed = MODEL.replace("def __init__(self, dim: int = 4):", "def __init__(self, dim: int = 4, debug=False):")
    handed = handed.format(passed=", debug=debug")
    assert "CL201" in {f.code for f in check_source(handed).findings}
    app = "\n\nclass App(nn.Module):\n    def __init__(self):\n        super().__init__()\n        self.model = Model({})\n"
    assert not check_source(handed + app.format("")).findings
    assert "CL201" in {f.code for f in check_source(handed + app.format("debug=True")).findings}


def test_a_class_built_outside_the_project_decides_nothing():
    # `Head` is built only by module-level code (or by the user): its options are unknown
    alone = MODEL.split("class Model")[0] + "\nhead = Head(4, debug=True)\n"
    assert {f.code for f in check_source(alone).findings} == {"CL101", "CL201"}


def test_the_answers_do_not_keep_the_project_alive():
    """The per-project answers are kept while the project index lives, and no longer: a strong
    reference back from them kept the index and every summary to the end of the process (and
    every later cyclic collection traversed them)."""
    import gc
    import weakref

    from compilelint.analysis.init_defaults import constructor_defaults
    from compilelint.engine import analyze_bytes
    from compilelint.project_pass.regions import Project

    status, summary = analyze_bytes("head.py", b"""
class Head:
    def __init__(self, looped=False):
        self.looped = looped

    def forward(self, x):
        if self.looped:
            print(x)
        return x
""")
    assert status == "ok"
    project = Project([summary])
    constructor_defaults(project).at_default("head.Head.forward", "looped")
    alive = weakref.ref(project)
    enabled = gc.isenabled()
    gc.disable()  # freed by its reference count, not by a collection
    try:
        del project
        assert alive() is None
    finally:
        if enabled:
            gc.enable()
