"""The unsafe rewrites must keep eager results and must compile where the original broke.

For each fixture with torch.where rewrites: import the original and the `--unsafe-fixes` golden
file, run both eagerly on random tensors (several seeds, both branch directions), and compile the
fixed one under `torch._dynamo.error_on_graph_break(True)` (which raises exactly when a plain
torch.compile would graph-break) — asserting the original does raise there.
"""
import importlib.util
import os

import pytest

torch = pytest.importorskip("torch")
pytestmark = pytest.mark.slow  # runs Dynamo on every rewrite

from fix_helpers import FIX_DIR  # noqa: E402

SEEDS = [0, 1, 2, 3, 4, 5]
OFFSETS = [-2.0, 0.0, 2.0]


def _load(case, suffix, tag):
    path = os.path.join(FIX_DIR, f"{case}{suffix}.py")
    spec = importlib.util.spec_from_file_location(f"_fixture_{case}_{tag}", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _inputs(case, seed, offset):
    g = torch.Generator().manual_seed(seed)
    x = torch.randn(4, 5, generator=g) + offset
    if case == "where_branch":
        return (x, torch.randn(4, 5, generator=g) - offset)
    if case == "overlapping":
        return (x, torch.randn((), generator=g))
    return (x,)


# (fixture, class whose forward the fix rewrote)
CASES = [("where_branch", "Gate"), ("overlapping", "Nested"), ("crlf", "Crlf"), ("bom", "Bom")]


def _compile_and_run(model, args):
    torch._dynamo.reset()
    with torch._dynamo.error_on_graph_break(True):
        return torch.compile(model, backend="eager")(*args)


@pytest.mark.parametrize("case,cls", CASES)
def test_where_fix_matches_eager(case, cls, capsys):
    original = getattr(_load(case, "", "orig"), cls)()
    fixed = getattr(_load(case, ".unsafe-fixed", "fixed"), cls)()
    for seed in SEEDS:
        for offset in OFFSETS:
            args = _inputs(case, seed, offset)
            want, got = original(*args), fixed(*args)
            torch.testing.assert_close(got, want, msg=f"{case} seed={seed} offset={offset}")


@pytest.mark.parametrize("case,cls", CASES)
def test_where_fix_compiles_without_graph_break(case, cls, capsys):
    original = getattr(_load(case, "", "orig"), cls)()
    fixed = getattr(_load(case, ".unsafe-fixed", "fixed"), cls)()
    args = _inputs(case, 0, 1.0)
    with pytest.raises(torch._dynamo.exc.TorchDynamoException):
        _compile_and_run(original, args)
    for seed in SEEDS[:3]:
        for offset in OFFSETS:
            args = _inputs(case, seed, offset)
            torch.testing.assert_close(_compile_and_run(fixed, args), fixed(*args))


def test_item_fix_matches_eager():
    original = _load("item_arith", "", "orig").Scale()
    fixed = _load("item_arith", ".unsafe-fixed", "fixed").Scale()
    for seed in SEEDS:
        g = torch.Generator().manual_seed(seed)
        x, t = torch.randn(3, 4, generator=g), torch.randn((), generator=g)
        torch.testing.assert_close(fixed(x, t), original(x, t))


def test_buffer_counter_fix_matches_eager():
    original = _load("buffer_counter", "", "orig").Counter()
    fixed = _load("buffer_counter", ".unsafe-fixed", "fixed").Counter()
    assert "calls" not in fixed.state_dict()  # persistent=False: checkpoints are unchanged
    x = torch.randn(3, 4, generator=torch.Generator().manual_seed(0))
    for _ in range(12):
        torch.testing.assert_close(fixed(x), original(x))
