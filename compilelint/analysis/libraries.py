"""The names of libraries outside the checked tree that the engine acts on, read once from the
measured table `compilelint/data/libraries.toml` (each row: a name, its library, where it was
measured). The engine code holds no library's names: it asks these sets.
"""
from __future__ import annotations

import os
import re
from typing import Dict, FrozenSet, Optional, Tuple

try:
    import tomllib
except ModuleNotFoundError:  # Python < 3.11
    import tomli as tomllib

TABLE = os.path.join(os.path.dirname(os.path.dirname(__file__)), "data", "libraries.toml")

with open(TABLE, "rb") as _f:
    _ROWS: Dict[str, list] = tomllib.load(_f)


def _names(kind: str) -> Tuple[str, ...]:
    return tuple(row["name"] for row in _ROWS.get(kind, ()))


# Class decorators that make the class's `forward` a compile root / keep it from being one.
COMPILE_CLASS_DECORATORS = _names("compile_class_decorator")
IGNORE_CLASS_DECORATORS = _names("ignore_class_decorator")
# Class decorators that may replace `forward` at run time, and the hooks that, overridden to
# default to "eager", keep the eager forward.
SWAP_CLASS_DECORATORS = _names("swap_decorator")
EAGER_DEFAULT_HOOKS = tuple(row["eager_default_hook"] for row in _ROWS.get("swap_decorator", ())
                            if "eager_default_hook" in row)
# Predicates of implementations a user opts into → their value with the default configuration.
OPT_IN_PREDICATES: Dict[str, bool] = {row["name"]: row["default"] for row in _ROWS.get("opt_in_predicate", ())}


def opt_in_default(name: str) -> Optional[bool]:
    """The default value of the opt-in predicate a guard calls (its dotted name), or None: a row
    names a function (`is_enabled`, matched by its last name) or a method of a class (`Flag.on`,
    matched by the name's last two parts, so another class's `on` is not taken for it)."""
    leaf = name.rsplit(".", 1)[-1]
    if leaf in OPT_IN_PREDICATES:
        return OPT_IN_PREDICATES[leaf]
    return OPT_IN_PREDICATES.get(".".join(name.rsplit(".", 2)[-2:]))
# Registry keys of opt-in implementations, and the argument that picks each.
OPT_IN_KEYS: Tuple[Tuple[re.Pattern, str], ...] = tuple(
    (re.compile(row["pattern"]), row["chosen_by"]) for row in _ROWS.get("opt_in_registry_key", ()))
# Wrappers of Dynamo's compile predicate outside the checked tree → their value while Dynamo traces.
COMPILE_PREDICATES: Dict[str, bool] = {row["name"]: row["value"] for row in _ROWS.get("compile_predicate", ())}
# How models name their configuration.
CONFIG_HOLDERS: Tuple[str, ...] = tuple(h for row in _ROWS.get("config", ()) for h in row["holders"])
CONFIG_CLASS_SUFFIXES: Tuple[str, ...] = tuple(row["class_suffix"] for row in _ROWS.get("config", ()))
CONFIG_OWNER_WORDS: FrozenSet[str] = frozenset(row["owner_word"] for row in _ROWS.get("config", ()))
# Functions returning a logger, and the methods libraries add to their loggers.
LOGGER_FACTORIES = _names("logger_factory")
LOGGER_METHODS = _names("logger_method")
# Functions outside the checked tree that return a tensor → "tensor", "bool" or "same" (a boolean
# tensor when the first argument is one).
TENSOR_FUNCTIONS: Dict[str, str] = {row["name"]: row["returns"] for row in _ROWS.get("tensor_function", ())}
# Functions registering a custom op → (the keyword, the position) of the function they register.
CUSTOM_OP_REGISTRARS: Dict[str, Tuple[str, int]] = {
    row["name"]: (row["op_keyword"], row["op_position"]) for row in _ROWS.get("custom_op_registrar", ())}


def opt_in_chooser(key: str) -> str:
    """The argument that picks the implementation a registry keeps under `key` ("" when none)."""
    return next((chosen_by for pattern, chosen_by in OPT_IN_KEYS if pattern.search(key)), "")
