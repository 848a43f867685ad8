"""The cache's pack keeps each function and class record pickled apart, unpickled on first use
(`summary.Unpacked`): a record read from it is, to everything that reads a field, the record
that was written."""
import copy
import pickle

from compilelint.cache import Cache
from compilelint.engine import analyze_bytes
from compilelint.summary_change import summary_digest

SOURCE = b"""\
import torch
from torch import nn


def helper(x):
    return x.sum().item()


class Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.inner = nn.Linear(4, 4)

    def forward(self, x):
        y = self.inner(x)
        print(y)
        return helper(y)
"""


def _summary():
    status, summary = analyze_bytes("block.py", SOURCE)
    assert status == "ok"
    return summary


def _packed(tmp_path, summary):
    cache = Cache(str(tmp_path / "cache"))
    cache.put_pack("files", {"k": summary})
    found, missing = cache.get_many("files", ["k"])
    assert missing == 0
    return cache, found["k"]


def test_a_packed_record_reads_as_written(tmp_path):
    summary = _summary()
    _, loaded = _packed(tmp_path, summary)
    forward = loaded.functions["Block.forward"]
    assert set(vars(forward)) == {"_packed"}  # nothing unpickled yet
    assert set(vars(loaded.classes["Block"])) == {"_packed"}
    assert [c.code for c in forward.candidates] == [c.code for c in summary.functions["Block.forward"].candidates]
    assert list(vars(forward)) == list(vars(summary.functions["Block.forward"]))  # the fields, in their order
    assert loaded == summary  # `==` unpacks the records it compares
    assert summary_digest(loaded) == summary_digest(summary)


def test_pickling_copying_and_packing_again_see_the_fields(tmp_path):
    summary = _summary()
    cache, loaded = _packed(tmp_path, summary)
    helper = loaded.functions["helper"]
    assert summary_digest(loaded) == summary_digest(summary)  # pickling unpacks
    assert pickle.loads(pickle.dumps(helper)) == summary.functions["helper"]
    block = loaded.classes["Block"]
    assert copy.copy(block) == summary.classes["Block"]
    cache.put_pack("again", {"k": loaded})  # a record never unpacked is written as it was read
    again = cache.get_many("again", ["k"])[0]["k"]
    assert again == summary and summary_digest(again) == summary_digest(summary)


def test_a_missing_attribute_still_raises(tmp_path):
    _, loaded = _packed(tmp_path, _summary())
    info = loaded.functions["helper"]
    try:
        info.no_such_field
    except AttributeError as e:
        assert "no_such_field" in str(e)
    else:
        raise AssertionError("no AttributeError")
    assert info.qualname == "helper"  # unpacked on the way


def test_a_field_with_a_default_reads_as_written(tmp_path):
    """A field with a default is a class attribute too (`is_generator = False`): the first read of
    it on a packed record must give the value written, not the class's default."""
    source = SOURCE + b"\n\ndef numbers(n):\n    yield n\n"
    status, summary = analyze_bytes("block.py", source)
    assert status == "ok" and summary.functions["numbers"].is_generator
    _, loaded = _packed(tmp_path, summary)
    numbers = loaded.functions["numbers"]
    assert set(vars(numbers)) == {"_packed"}
    assert numbers.is_generator is True  # the first field read
    assert type(numbers) is type(summary.functions["numbers"])  # its own class again once unpacked
