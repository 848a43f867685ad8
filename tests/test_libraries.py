"""The names of libraries the engine acts on live in one measured table (`compilelint/data/
libraries.toml`), never in the engine's code; a library is added by adding rows."""
import ast
import os

from compilelint.analysis import libraries
from compilelint.project_pass import regions

from conftest import ROOT
from helpers import check_source

ENGINE = [os.path.join(ROOT, "compilelint", folder, n) for folder in ("analysis", "project_pass")
          for n in os.listdir(os.path.join(ROOT, "compilelint", folder)) if n.endswith(".py")] + \
    [os.path.join(ROOT, "compilelint", "engine.py")]


def _rows():
    return [(kind, row) for kind, rows in libraries._ROWS.items() for row in rows]


def test_every_row_names_its_library_and_where_it_was_measured():
    assert _rows()
    for kind, row in _rows():
        assert row.get("library") and len(row.get("measured", "")) > 20, (kind, row)


def _table_names():
    """The library-specific names of the table (not the generic word a config owner's name holds)."""
    names = set(libraries.COMPILE_CLASS_DECORATORS + libraries.IGNORE_CLASS_DECORATORS +
                libraries.SWAP_CLASS_DECORATORS + libraries.EAGER_DEFAULT_HOOKS)
    names |= set(libraries.OPT_IN_PREDICATES) | set(libraries.COMPILE_PREDICATES)
    names |= {chosen_by for _, chosen_by in libraries.OPT_IN_KEYS}
    names |= set(libraries.CONFIG_HOLDERS) - libraries.CONFIG_OWNER_WORDS
    names |= set(libraries.LOGGER_FACTORIES + libraries.LOGGER_METHODS) | set(libraries.CUSTOM_OP_REGISTRARS)
    names |= {op_keyword for op_keyword, _ in libraries.CUSTOM_OP_REGISTRARS.values()}
    return names


def _code_strings(path):
    """The string constants of a module's code: not its docstrings, not its comments."""
    tree = ast.parse(open(path, encoding="utf-8").read())
    docs = {id(n.body[0].value) for n in ast.walk(tree)
            if isinstance(n, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef))
            and n.body and isinstance(n.body[0], ast.Expr) and isinstance(n.body[0].value, ast.Constant)}
    return [n.value for n in ast.walk(tree) if isinstance(n, ast.Constant) and isinstance(n.value, str)
            and id(n) not in docs]


def test_the_engine_code_holds_no_name_of_the_table():
    names = _table_names()
    assert "use_experts_implementation" in names and "is_flash_attention_requested" in names
    for path in ENGINE:
        found = {name for text in _code_strings(path) for name in names if name in text}
        assert not found, f"{os.path.relpath(path, ROOT)} names {sorted(found)}: they belong in data/libraries.toml"


# A library of nobody's: a class decorator that puts a fused kernel in place of `forward`.
SWAPPED = """\
import torch
from torch import nn
from fastlib import swap_in_fused_kernel


@swap_in_fused_kernel
class Norm(nn.Module):
    def forward(self, x):
        if x.abs().max().item() > 1e4:
            x = x / 1e4
        return x


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.norm = Norm()

    def forward(self, x):
        return self.norm(x)
"""


def test_a_new_row_is_all_a_library_needs(monkeypatch):
    rows = lambda **kw: sorted((f.span.row, f.code) for f in check_source(SWAPPED, jobs=1, **kw).findings)
    assert rows() == [(9, "CL101")]  # an unknown decorator swaps nothing: the eager forward is followed
    monkeypatch.setattr(regions, "SWAP_CLASS_DECORATORS", regions.SWAP_CLASS_DECORATORS + ("swap_in_fused_kernel",))
    assert rows() == []
    assert rows(follow_swapped=True) == [(9, "CL101")]


def test_an_opt_in_method_row_is_matched_with_its_class():
    """A row naming `Class.method` matches that method however the class was imported, and not the
    same method of another class; a row naming a function matches it by its last name."""
    dotted = [name for name in libraries.OPT_IN_PREDICATES if "." in name]
    assert dotted
    cls, method = dotted[0].split(".")
    assert libraries.opt_in_default(f"pkg.settings.{cls}.{method}") is libraries.OPT_IN_PREDICATES[dotted[0]]
    assert libraries.opt_in_default(f"{cls}.{method}") is not None
    assert libraries.opt_in_default(f"pkg.Other.{method}") is None
    plain = next(name for name in libraries.OPT_IN_PREDICATES if "." not in name)
    assert libraries.opt_in_default(f"pkg.utils.{plain}") is libraries.OPT_IN_PREDICATES[plain]
