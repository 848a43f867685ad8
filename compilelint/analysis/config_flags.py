"""Configuration flags a finding's path needs, decided by the compiled model's own config class.

Library code often breaks only for some configurations: transformers' `get_text_config` deep-copies
the config only `if ... and config_to_return.is_encoder_decoder:`, which every model reaches through
`DynamicCache(config=self.config)` but only encoder-decoder models run. At walk time the boolean
attributes of config objects that the `if`s around a finding test are kept (`flags`); the project
pass then reads the root model's config class (`config: BartConfig` on the model class or a base,
or `config_class = BartConfig`) and that class's default for the flag (`is_encoder_decoder: bool =
True`, inherited through its bases). A default that contradicts the path drops the finding; one
that agrees is named in its note; a flag no class sets plainly (or a method reassigns) decides
nothing.
"""
from __future__ import annotations

import ast
from typing import List, Optional, Tuple

from compilelint.analysis.names import dotted

Flag = Tuple[str, bool]  # (attribute of a config object, the value the path needs)
CONFIG_ATTRS = ("config", "config_class")


def _flag_term(term: ast.AST, value: bool, in_config: bool) -> Optional[Flag]:
    """`cfg.flag` → (flag, value); `not cfg.flag` → (flag, not value); anything else → None.
    Inside a config class's own methods `self.flag` is a config flag too."""
    if isinstance(term, ast.UnaryOp) and isinstance(term.op, ast.Not):
        return _flag_term(term.operand, not value, in_config)
    if isinstance(term, ast.Attribute):
        owner = dotted(term.value) or ""
        if "config" in owner.lower() or (in_config and owner == "self"):
            return term.attr, value
    return None


def condition_flags(conditions: List[Tuple[ast.AST, bool]], class_name: str = "") -> Tuple[Flag, ...]:
    """The config flags the plain `if`s around a node need: every operand of an `and` on the true
    branch, every operand of an `or` on the false branch. `class_name`: the class of the method."""
    out: List[Flag] = []
    in_config = class_name.endswith("Config")
    for test, branch in conditions:
        joined = isinstance(test, ast.BoolOp) and isinstance(test.op, ast.And if branch else ast.Or)
        for term in test.values if joined else [test]:
            flag = _flag_term(term, branch, in_config)
            if flag and flag not in out:
                out.append(flag)
    return tuple(out)


def config_class(project, cls: str) -> Optional[str]:
    """The config class a model class declares (itself or a base): `config: BartConfig`."""
    for c in project.mro(cls):
        entry = project.classes.get(c)
        if entry is None:
            continue
        for attr in CONFIG_ATTRS:
            name = entry[1].attr_types.get(attr)
            if name and project.canonical(name) in project.classes:
                return project.canonical(name)
    return None


def flag_default(project, cls: str, attr: str) -> Optional[bool]:
    """The class default of a boolean attribute, through the bases; None when unknown or reassigned."""
    for c in project.mro(cls):
        entry = project.classes.get(c)
        if entry is not None and attr in entry[1].flags:
            return entry[1].flags[attr]
    return None


def decide(project, root_fid: str, flags: Tuple[Flag, ...]) -> Tuple[bool, str]:
    """(does the root's config allow the path, what the note adds: "BartConfig: is_encoder_decoder=True")."""
    cls = root_fid.rsplit(".", 1)[0]
    if not flags or cls not in project.classes:
        return True, ""
    config = config_class(project, cls)
    if config is None:
        return True, ""
    known = []
    for attr, needed in flags:
        value = flag_default(project, config, attr)
        if value is None:
            continue
        if value != needed:
            return False, ""
        known.append(f"{attr}={value}")
    return True, f"{config.rsplit('.', 1)[-1]} sets {', '.join(known)}" if known else ""
