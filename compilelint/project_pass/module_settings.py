"""Does a test of a module's own settings hold under the compiled model's default config?

Layerdrop breaks sit under `if self.training and self.layerdrop > 0.0:` with
`self.layerdrop = config.encoder_layerdrop` in `__init__`: one config class sets `encoder_layerdrop:
float = 0.0` (the break never runs), another `0.05` (it runs in train, and the layer loop's
frame is skipped: measured in the truth corpus). The test is decided from source: `self.x` is
followed to the config attribute `__init__` copies into it (or read as `self.config.x`), whose
value is the class-level default of the root model's config class (through its bases). Anything
else (a parameter, a method call, a value no class sets plainly) leaves the test undecided (None).
Both come from the file analyses' summaries: the copies (`ClassInfo.config_attrs`) and the
defaults (`ClassInfo.flags`, read by `config_flags.flag_default`).
"""
from __future__ import annotations

import ast
import operator
from typing import Callable, Optional

from compilelint.analysis import config_flags
from compilelint.analysis.names import dotted

UNKNOWN = object()
COMPARE = {ast.Gt: operator.gt, ast.GtE: operator.ge, ast.Lt: operator.lt, ast.LtE: operator.le,
           ast.Eq: operator.eq, ast.NotEq: operator.ne, ast.Is: operator.is_, ast.IsNot: operator.is_not}


def _setting(project, cls: str, config_cls: str, text: str):
    """The default value of `self.x` / `self.config.x` (given as its source text) in instances of
    `cls` built from `config_cls`'s defaults; UNKNOWN when it cannot be told."""
    parts = text.split(".")
    if len(parts) == 3 and parts[1] == "config":
        attr = parts[2]
    elif len(parts) == 2:
        attr = _copied_from_config(project, cls, parts[1])
    else:
        return UNKNOWN
    value = config_flags.flag_default(project, config_cls, attr) if attr else None
    return UNKNOWN if value is None else value


def _copied_from_config(project, cls: str, attr: str) -> Optional[str]:
    """`self.layerdrop = config.encoder_layerdrop` in `__init__` → "encoder_layerdrop", from the
    nearest class of the MRO whose file analysis saw such a copy."""
    for c in project.mro(cls):
        entry = project.classes.get(c)
        if entry is not None and attr in entry[1].config_attrs:
            return entry[1].config_attrs[attr]
    return None


def evaluator(project, fid: str, root_fid: str, mode: str) -> Optional[Callable[[ast.AST], Optional[bool]]]:
    """A function deciding tests in method `fid` of a model compiled from `root_fid` in `mode`
    (True / False / None when undecided); None when the root has no known config class."""
    root_cls = root_fid.rsplit(".", 1)[0]
    config_cls = config_flags.config_class(project, root_cls) if root_cls in project.classes else None
    cls = fid.rsplit(".", 1)[0]
    if config_cls is None or cls not in project.classes:
        return None
    return _Decider(project, cls, config_cls, mode)


class _Decider:
    """`evaluator`'s answer. An object, not a closure calling itself: such a closure is a cycle,
    which would keep the project index (every summary) for the cyclic collector to free."""

    def __init__(self, project, cls: str, config_cls: str, mode: str):
        self.project, self.cls, self.config_cls, self.mode = project, cls, config_cls, mode

    def value(self, node):
        if isinstance(node, ast.Constant):
            return node.value
        text = dotted(node)
        if text == "self.training":
            return self.mode == "train"
        if text and text.startswith("self."):
            return _setting(self.project, self.cls, self.config_cls, text)
        return UNKNOWN

    def __call__(self, test) -> Optional[bool]:
        if isinstance(test, ast.BoolOp):
            seen = [self(v) for v in test.values]
            stop = isinstance(test.op, ast.Or)  # the value that decides the whole chain
            if stop in seen:
                return stop
            return None if None in seen else not stop
        if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
            inner = self(test.operand)
            return None if inner is None else not inner
        if isinstance(test, ast.Compare) and len(test.ops) == 1 and type(test.ops[0]) in COMPARE:
            left, right = self.value(test.left), self.value(test.comparators[0])
            if left is UNKNOWN or right is UNKNOWN:
                return None
            try:
                return bool(COMPARE[type(test.ops[0])](left, right))
            except TypeError:
                return None
        v = self.value(test)
        return None if v is UNKNOWN else bool(v)
