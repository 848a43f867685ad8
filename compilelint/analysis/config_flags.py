"""Configuration flags a finding's path needs, decided by the compiled model's own config class.

Library code often breaks only for some configurations: a helper that deep-copies the config
only `if ... and config.is_encoder_decoder:`, which every model reaches through
`Cache(config=self.config)` but only encoder-decoder models run. At walk time the boolean
attributes of config objects that the `if`s around a finding test are kept (`flags`); the project
pass then reads the root model's config class (`config: Seq2SeqConfig` on the model class or a base,
or `config_class = Seq2SeqConfig`) and that class's default for the flag (`is_encoder_decoder: bool =
True`, inherited through its bases). A default that contradicts the path drops the finding; one
that agrees is named in its note; a flag no class sets plainly (or a method reassigns) decides
nothing.

Numbers too: `if self.training and self.layerdrop > 0.0:` (`self.layerdrop = config.encoder_layerdrop`
in `__init__`, `encoder_layerdrop: float = 0.0` on Seq2SeqConfig) is a comparison the default
decides: its layer-dropping body never runs with the default configuration.

The same holds for a submodule built only under a flag: a speech encoder's `self.adapter =
Adapter(config) if config.add_adapter else None` (`add_adapter: bool = False`) makes
`self.adapter(hidden_states)` a call into a module no default model has; reach does not follow it
(`submodule_flags`, decided per root like the findings' flags).
"""
from __future__ import annotations

import ast
from typing import Dict, List, Optional, Tuple

from compilelint.analysis.libraries import CONFIG_CLASS_SUFFIXES, CONFIG_HOLDERS, CONFIG_OWNER_WORDS
from compilelint.analysis.names import dotted

# (attribute of a config object, the truth value the path needs) for a bare test of the attribute;
# (attribute, the value the path needs, operator, number) for a comparison (`layerdrop > 0.0`).
Flag = tuple
CONFIG_ATTRS = CONFIG_HOLDERS  # a model's attributes naming its config class (`data/libraries.toml`)
COMPARISONS = {ast.Gt: ">", ast.GtE: ">=", ast.Lt: "<", ast.LtE: "<=", ast.Eq: "==", ast.NotEq: "!="}


def _config_attr(node: ast.AST, in_config: bool, config_attrs: Dict[str, str]) -> Optional[str]:
    """`cfg.flag` → "flag"; `self.layerdrop` → the config attribute `__init__` copied into it."""
    if not isinstance(node, ast.Attribute):
        return None
    owner = dotted(node.value) or ""
    if any(word in owner.lower() for word in CONFIG_OWNER_WORDS) or (in_config and owner == "self"):
        return node.attr
    return config_attrs.get(node.attr) if owner == "self" else None


def _flag_term(term: ast.AST, value: bool, in_config: bool, config_attrs: Dict[str, str]) -> Optional[Flag]:
    """`cfg.flag` → (flag, value); `not cfg.flag` → (flag, not value); `cfg.rate > 0.0` →
    (rate, value, ">", 0.0); anything else → None. Inside a config class's own methods `self.flag`
    is a config flag too."""
    if isinstance(term, ast.UnaryOp) and isinstance(term.op, ast.Not):
        return _flag_term(term.operand, not value, in_config, config_attrs)
    if isinstance(term, ast.Compare) and len(term.ops) == 1 and type(term.ops[0]) in COMPARISONS:
        bound = term.comparators[0]
        attr = _config_attr(term.left, in_config, config_attrs)
        if attr and isinstance(bound, ast.Constant) and type(bound.value) in (int, float):
            return attr, value, COMPARISONS[type(term.ops[0])], bound.value
        return None
    attr = _config_attr(term, in_config, config_attrs)
    return (attr, value) if attr else None


def holds(value, flag: Flag) -> bool:
    """Does a config default satisfy the test of `flag` (its truth, or its comparison)?"""
    if len(flag) == 2:
        return bool(value)
    op, bound = flag[2], flag[3]
    if not isinstance(value, (int, float)):
        return True  # a comparison with something else: decide nothing
    return {">": value > bound, ">=": value >= bound, "<": value < bound, "<=": value <= bound,
            "==": value == bound, "!=": value != bound}[op]


def condition_flags(conditions: List[Tuple[ast.AST, bool]], class_name: str = "",
                    config_attrs: Optional[Dict[str, str]] = None) -> Tuple[Flag, ...]:
    """The config flags the plain `if`s around a node need: every operand of an `and` on the true
    branch, every operand of an `or` on the false branch. `class_name`: the class of the method;
    `config_attrs`: its `self` attributes copied from the config in `__init__`."""
    out: List[Flag] = []
    in_config = class_name.endswith(CONFIG_CLASS_SUFFIXES)
    for test, branch in conditions:
        joined = isinstance(test, ast.BoolOp) and isinstance(test.op, ast.And if branch else ast.Or)
        for term in test.values if joined else [test]:
            flag = _flag_term(term, branch, in_config, config_attrs or {})
            if flag and flag not in out:
                out.append(flag)
    return tuple(out)


def own_flags(conditions: List[Tuple[ast.AST, bool]]) -> Tuple[Flag, ...]:
    """The attributes of the object itself (`self.<attr>`) that the plain `if`s around a node need
    true or false, or compared with a number (`own_decides` reads them by the receiver's class):
    `if self.full_update or self.sync: a() else: b()` makes `b()` need both false. `self.training`
    is the mode, decided elsewhere."""
    out: List[Flag] = []
    for test, branch in conditions:
        joined = isinstance(test, ast.BoolOp) and isinstance(test.op, ast.And if branch else ast.Or)
        for term in test.values if joined else [test]:
            flag = _flag_term(term, branch, True, {})
            if flag and flag[0] != "training" and _reads_self(term) and flag not in out:
                out.append(flag)
    return tuple(out)


def _reads_self(term: ast.AST) -> bool:
    """`self.x`, `not self.x`, `self.x > 0`: the term's attribute is read on `self` itself."""
    while isinstance(term, ast.UnaryOp):
        term = term.operand
    if isinstance(term, ast.Compare):
        term = term.left
    return isinstance(term, ast.Attribute) and isinstance(term.value, ast.Name) and term.value.id == "self"


def own_decides(project, cls: str, flags: Tuple[Flag, ...]) -> bool:
    """Can an instance of `cls` take a path needing `flags` of its own attributes? No when the
    class default of one (a class-level constant, or the one constant every method assigns,
    through the bases: `flag_default`) fails its test, and no subclass of `cls` in the project
    sets another (one whose reach is not told apart from `cls`'s)."""
    subclasses = None
    for flag in flags:
        value = flag_default(project, cls, flag[0])
        if value is None or holds(value, flag) == flag[1]:
            continue
        if subclasses is None:
            from compilelint.analysis.init_defaults import constructor_defaults
            subclasses = constructor_defaults(project).subclasses(cls)
        if all(flag_default(project, sub, flag[0]) == value for sub in subclasses):
            return False
    return True


def config_class(project, cls: str) -> Optional[str]:
    """The config class a model class declares (itself or a base): `config: Seq2SeqConfig`."""
    for c in project.mro(cls):
        entry = project.classes.get(c)
        if entry is None:
            continue
        for attr in CONFIG_ATTRS:
            name = entry[1].attr_types.get(attr)
            if name and project.canonical(name) in project.classes:
                return project.canonical(name)
    return None


def flag_default(project, cls: str, attr: str):
    """The class default of a boolean or number attribute, through the bases; None when unknown or reassigned."""
    for c in project.mro(cls):
        entry = project.classes.get(c)
        if entry is not None and attr in entry[1].flags:
            return entry[1].flags[attr]
    return None


def decide(project, root_fid: str, flags: Tuple[Flag, ...]) -> Tuple[bool, str]:
    """(does the root's config allow the path, what the note adds: "Seq2SeqConfig: is_encoder_decoder=True")."""
    cls = root_fid.rsplit(".", 1)[0]
    if not flags or cls not in project.classes:
        return True, ""
    config = config_class(project, cls)
    if config is None:
        return True, ""
    known = []
    for flag in flags:
        attr, needed = flag[0], flag[1]
        value = flag_default(project, config, attr)
        if value is None:
            continue
        if holds(value, flag) != needed:
            return False, ""
        known.append(f"{attr}={value}")
    return True, f"{config.rsplit('.', 1)[-1]} sets {', '.join(known)}" if known else ""


def submodule_assignments(init: ast.AST) -> Dict[str, List[Tuple[ast.AST, Tuple[Flag, ...]]]]:
    """Each `self.<attr> = value` of `__init__` with the config flags it is made under: `self.x =
    X(config) if config.use_x else None`, or under `if config.use_x:` (`if
    config.do_stable_layer_norm: self.encoder = StableEncoder(config) else: self.encoder =
    Encoder(config)`: each class under its own flag). `None` assignments build nothing."""
    out: Dict[str, List[Tuple[ast.AST, Tuple[Flag, ...]]]] = {}
    _assignments(getattr(init, "body", []), [], out)
    return out


def _assignments(stmts, conditions, out) -> None:
    """`submodule_assignments` of a block under `conditions` (a module function, not a recursive
    closure: that is a reference cycle, which keeps the tree alive until a collection)."""
    for stmt in stmts:
        if isinstance(stmt, ast.If):
            _assignments(stmt.body, conditions + [(stmt.test, True)], out)
            _assignments(stmt.orelse, conditions + [(stmt.test, False)], out)
        elif isinstance(stmt, (ast.Assign, ast.AnnAssign)) and stmt.value is not None:
            value = stmt.value
            for target in (stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target]):
                if not (isinstance(target, ast.Attribute) and isinstance(target.value, ast.Name) and
                        target.value.id == "self") or _is_none(value):
                    continue
                made = [(value, conditions)]
                if isinstance(value, ast.IfExp):
                    made = [(side, conditions + [(value.test, branch)])
                            for side, branch in ((value.body, True), (value.orelse, False)) if not _is_none(side)]
                out.setdefault(target.attr, []).extend((v, condition_flags(c)) for v, c in made)
        elif isinstance(stmt, (ast.For, ast.AsyncFor, ast.While, ast.With, ast.AsyncWith, ast.Try)):
            for block in (getattr(stmt, "body", []), getattr(stmt, "orelse", []), getattr(stmt, "finalbody", [])):
                _assignments(block, conditions, out)
            for handler in getattr(stmt, "handlers", []):
                _assignments(handler.body, conditions, out)


def submodule_flags(init: ast.AST, classes_of) -> Dict[str, Dict[str, Tuple[Flag, ...]]]:
    """self.<attr> → {class built into it → the config flags every assignment building it needs};
    `classes_of(value)`: the classes an assigned expression constructs. A class built once without
    a flag is left out."""
    out: Dict[str, Dict[str, Tuple[Flag, ...]]] = {}
    for attr, made in submodule_assignments(init).items():
        needed: Dict[str, set] = {}
        for value, flags in made:
            for cls in classes_of(value):
                needed[cls] = set(flags) if cls not in needed else needed[cls] & set(flags)
        kept = {cls: tuple(sorted(flags, key=repr)) for cls, flags in needed.items() if flags}
        if kept:
            out[attr] = kept
    return out


def _is_none(node: ast.AST) -> bool:
    return isinstance(node, ast.Constant) and node.value is None
