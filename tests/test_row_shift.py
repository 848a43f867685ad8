"""Rows moved by an edit (`row_shift`): a summary is recognised as its last one moved exactly when
nothing but rows changed, wherever in a function's body the lines went."""
import ast
import glob
import os

import pytest

from compilelint.engine import analyze_bytes
from compilelint.summary_change import only_moved, summary_digest
from compilelint.row_shift import Shift, moved_summary, shift_between

from conftest import FIXTURES

# Fixtures with loops, classes built under branches, roots, noqa and candidates.
SAMPLES = sorted(glob.glob(os.path.join(FIXTURES, "precision", "*.py")))[:12] + \
    sorted(glob.glob(os.path.join(FIXTURES, "regions", "*.py")))[:12]


def summary(text: str, path: str = "m.py"):
    status, value = analyze_bytes(path, text.encode())
    assert status == "ok", value
    return value


def inserted(text: str, stmt: ast.stmt, line: str) -> str:
    lines = text.split("\n")
    lines.insert(stmt.lineno - 1, " " * stmt.col_offset + line)
    return "\n".join(lines)


def _returns_after_an_if_that_returns(prev: ast.stmt, stmt: ast.stmt) -> bool:
    """`if c: return a` then `return b`: one rewrite (fix/where's `return torch.where(c, a, b)`), so a
    line between them changes the file's fixes, not only its rows."""
    return isinstance(stmt, ast.Return) and isinstance(prev, ast.If) and not prev.orelse \
        and isinstance(prev.body[-1], ast.Return)


def body_statements(text: str):
    """Each statement that starts its line in a function body (where a line can go before it)."""
    lines = text.split("\n")
    for node in ast.walk(ast.parse(text)):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            for prev, stmt in zip([None, *node.body], node.body):
                if prev is None and ast.get_docstring(node) is not None:
                    continue  # a line above the docstring would make it a statement
                if not lines[stmt.lineno - 1][:stmt.col_offset].strip() and not getattr(stmt, "decorator_list", None) \
                        and not (prev is not None and _returns_after_an_if_that_returns(prev, stmt)):
                    yield stmt


@pytest.mark.parametrize("path", SAMPLES, ids=os.path.basename)
def test_a_local_assignment_anywhere_in_a_body_only_moves_rows(path):
    text = open(path).read()
    before = summary(text, os.path.basename(path))
    tried = 0
    for stmt in body_statements(text):
        now = summary(inserted(text, stmt, "_unused_local = 1"), os.path.basename(path))
        shift = only_moved(before, now)  # its point: anywhere between the last row kept and the first moved
        assert shift is not None and shift.by == 1 and shift.after < stmt.lineno, (path, stmt.lineno)
        tried += 1
    assert tried or "def " not in text


def test_a_statement_the_summary_records_is_more_than_moved_rows():
    text = "import torch\n\n\n@torch.compile\ndef f(x):\n    y = x + 1\n    return y\n"
    stmt = ast.parse(text).body[1].body[1]
    before = summary(text)
    assert only_moved(before, summary(inserted(text, stmt, "print(y)"))) is None
    assert only_moved(before, summary(inserted(text, stmt, "y = y.item()"))) is None
    assert only_moved(before, summary(inserted(text, stmt, "unused = 1"))).by == 1


TWO = "def f(x):\n    a = 1\n    return x\n\n\ndef g(x):\n    b = 2\n    return x\n\n\ndef h(x):\n    return x\n"


def test_lines_moved_at_two_points_or_functions_reordered_are_not_one_shift():
    before = summary(TWO)
    two_points = TWO.replace("    a = 1\n", "    a = 1\n    c = 3\n").replace("    b = 2\n", "    b = 2\n    d = 4\n")
    assert shift_between(before, summary(two_points)) is None
    one_in_one_out = TWO.replace("    a = 1\n", "").replace("    b = 2\n", "    b = 2\n    d = 4\n")
    assert shift_between(before, summary(one_in_one_out)) is None
    reordered = TWO.replace("def f(x):\n    a = 1\n    return x\n\n\n", "") + "\n\ndef f(x):\n    a = 1\n    return x\n"
    assert shift_between(before, summary(reordered)) is None
    removed = TWO.replace("    b = 2\n", "")
    assert only_moved(before, summary(removed)).by == -1


def test_lines_removed_never_put_two_rows_on_one():
    """Rows 2 and 3 cannot both become row 2: a shift that would merge them is not one."""
    text = "def f(x):\n    a = x.item()\n    b = x.item()\n    return a\n\n\ndef g(x):\n    return x\n"
    before = summary(text)
    joined = summary(text.replace("    a = x.item()\n    b = x.item()\n", "    a = x.item(); b = x.item()\n"))
    assert only_moved(before, joined) is None


def test_a_value_of_an_unknown_kind_is_not_moved():
    """A rule's facts may hold any object: one this module does not know stops the move."""
    before = summary(TWO)
    before.functions["g"].rule_facts["CL999"] = object()
    assert moved_summary(before, Shift(1, 1)) is None
    assert only_moved(before, summary(TWO.replace("    a = 1\n", "    a = 1\n    c = 3\n"))) is None


def test_the_cached_summary_is_not_changed_by_moving_it():
    before = summary(TWO)
    digest = summary_digest(before)
    moved = moved_summary(before, Shift(2, 5))
    assert summary_digest(before) == digest and moved.functions["g"].row == before.functions["g"].row + 5
