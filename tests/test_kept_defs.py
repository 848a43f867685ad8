"""The project pass's parsed defs, kept for the next process (`text_read.ReadTrees`): a question
asked before of the same bytes is answered without parsing, by the same node; another question,
or other bytes, parse the file as before; what the pass notes it read is the same either way."""
import ast

import pytest

from compilelint.text_read import ReadTrees

TEXT = """\
import torch


def first(x):
    for i in range(3):
        x = x + i
    return x


@torch.no_grad()
def second(x):
    return x * 2
"""


def _tree(tmp_path, text=TEXT):
    path = tmp_path / "m.py"
    path.write_text(text)
    return str(path)


def test_a_kept_def_answers_without_parsing(tmp_path):
    path = _tree(tmp_path)
    fresh = ReadTrees()
    node = fresh.function(path, 4)
    assert node.name == "first" and fresh.kept_grew
    assert fresh.function(path, 2) is None  # no def there: kept as such
    kept = fresh.kept_defs()

    again = ReadTrees(kept)
    assert ast.dump(again.function(path, 4)) == ast.dump(node)
    assert again.function(path, 2) is None
    assert path not in again._disk and not again.kept_grew  # nothing parsed, nothing new
    assert again.read() == fresh.read()  # the pass's memo sees the same questions

    assert again.function(path, 10).name == "second"  # not kept: parsed
    assert path in again._disk and again.kept_grew
    assert set(again.kept_defs()[path][1]) == {2, 4, 10}


def test_other_bytes_are_parsed_again(tmp_path):
    path = _tree(tmp_path)
    fresh = ReadTrees()
    fresh.function(path, 4)
    kept = fresh.kept_defs()
    _tree(tmp_path, TEXT.replace("x + i", "x - i"))
    again = ReadTrees(kept)
    node = again.function(path, 4)
    assert path in again._disk  # the kept def was of other bytes
    assert "Sub()" in ast.dump(node)


class _Store(dict):
    """A cache's get/put over a dict."""

    def put(self, key, value):
        self[key] = value


def test_defs_kept_in_a_store_by_the_texts_bytes(tmp_path):
    """Kept in a cache, each text's defs are under its bytes' digest: a text asked nothing new is
    not written again; another text of the file is parsed, and kept apart."""
    path = _tree(tmp_path)
    store = _Store()
    fresh = ReadTrees(store=store)
    node = fresh.function(path, 4)
    fresh.keep(store)
    assert len(store) == 1

    again = ReadTrees(store=store)
    assert ast.dump(again.function(path, 4)) == ast.dump(node) and path not in again._disk
    written = []
    again.keep(type("Spy", (), {"put": lambda self, k, v: written.append(k)})())
    assert written == []  # nothing new asked: nothing written

    _tree(tmp_path, TEXT.replace("x + i", "x - i"))
    other = ReadTrees(store=store)
    assert "Sub()" in ast.dump(other.function(path, 4)) and path in other._disk
    other.keep(store)
    assert len(store) == 2


def test_what_was_derived_from_a_kept_def_is_kept_with_it(tmp_path):
    """A rule's answer worked out from a def (`Trees.derived`) is kept with the def: the next
    process answers it without working it out, with the nodes of the same unpickled def."""
    path = _tree(tmp_path)
    store = _Store()
    fresh = ReadTrees(store=store)
    node = fresh.function(path, 4)
    loops = fresh.derived(node, "loops", lambda n: [s for s in ast.walk(n) if isinstance(s, ast.For)])
    fresh.keep(store)

    again = ReadTrees(store=store)
    kept = again.function(path, 4)
    answer = again.derived(kept, "loops", lambda n: pytest.fail("worked out again"))
    assert [ast.dump(n) for n in answer] == [ast.dump(n) for n in loops]
    assert answer[0] in list(ast.walk(kept))  # a node of the def itself, not a copy
    written = []
    again.keep(type("Spy", (), {"put": lambda self, k, v: written.append(k)})())
    assert written == []
    again.derived(kept, "returns", lambda n: [s for s in ast.walk(n) if isinstance(s, ast.Return)])
    again.keep(store)  # a new answer: kept too
    assert ReadTrees(store=store).function(path, 4) is not None and len(store) == 1
