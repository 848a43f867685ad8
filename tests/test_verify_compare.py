"""Outputs of a fixed run against the original's: the compiler's own rounding is allowed, as torch's
accuracy check allows it (`torch._dynamo.utils.same`: the compiled result may stray 2× as far as
the reference does), and no more."""
import pytest

from compilelint.verify.prove import EQUAL, verdict_text

torch = pytest.importorskip("torch")

from compilelint.verify.prove_child import compare  # noqa: E402


def _values(delta):
    base = torch.linspace(-1.0, 1.0, 64)
    return {"out": base.clone()}, {"out": base + delta}


def test_within_twice_the_originals_compiled_deviation_is_as_compiled():
    ref, compiled = _values(torch.full((64,), 4e-5))  # the original, compiled: 4e-5 off (fp32 atol 1e-5)
    _, got = _values(torch.full((64,), 6e-5))
    v = compare(ref, got, compiled=compiled)
    assert v["equal"] == "as-compiled" and v["equal"] in EQUAL
    assert v["compiled_max_abs"] == pytest.approx(4e-5, rel=1e-2) and v["multiplier"] == 2.0
    assert "at most 2× the original's compiled 4.0" in verdict_text(v)


def test_beyond_twice_differs():
    ref, compiled = _values(torch.full((64,), 4e-5))
    _, got = _values(torch.full((64,), 9e-5))
    assert compare(ref, got, compiled=compiled)["equal"] == "differs"


def test_without_the_compiled_values_or_when_they_are_exact_it_differs():
    ref, _ = _values(0.0)
    _, got = _values(torch.full((64,), 6e-5))
    assert compare(ref, got)["equal"] == "differs"
    assert compare(ref, got, compiled={"out": ref["out"].clone()})["equal"] == "differs"


def test_one_differing_value_is_not_hidden_by_another_within_the_allowance():
    ref = {"a": torch.zeros(8), "b": torch.zeros(8)}
    compiled = {"a": torch.full((8,), 4e-5), "b": torch.zeros(8)}
    got = {"a": torch.full((8,), 6e-5), "b": torch.full((8,), 6e-5)}
    assert compare(ref, got, compiled=compiled)["equal"] == "differs"
    assert compare(ref, {"a": got["a"], "b": ref["b"]}, compiled=compiled)["equal"] == "as-compiled"


def test_as_accurate_as_the_original_against_a_float64_run():
    """A fix that sums in another order (a dense expert loop) rounds differently in float32: when
    its error from the float64 run is no more than 2× the original's (+ tol / 10), it computes the
    same thing, as torch's accuracy check decides; a real change is far outside that bound."""
    gen = torch.Generator().manual_seed(0)
    x = torch.randn(4096, dtype=torch.float64, generator=gen)
    fp64 = {"out": x * 1e3}
    ref = {"out": (x * 1e3).float()}
    rounded = {"out": ((x * 1e3).float().double() + torch.randn(4096, dtype=torch.float64, generator=gen)
                       * 3e-5).float()}
    v = compare(ref, rounded, fp64=fp64)
    assert v["equal"] == "as-accurate" and v["equal"] in EQUAL
    assert "as accurate (rmse from a float64 run" in verdict_text(v)
    changed = {"out": ref["out"] + 1e-2}
    assert compare(ref, changed, fp64=fp64)["equal"] == "differs"
    assert compare(ref, rounded)["equal"] == "differs"  # no float64 run: allclose alone decides


def test_a_run_whose_compile_fails_still_saves_its_eager_values(tmp_path):
    """The original may fail to compile where its fixed copy compiles: the fixed run's comparison
    needs the original's eager values, so a saving run keeps them whatever the compile did (here a
    backend torch does not know)."""
    from compilelint.verify.prove import run_target

    example = tmp_path / "doubled.py"
    example.write_text("import torch\n\n\ndef make():\n    return (lambda x: x * 2), (torch.ones(3),), {}\n")
    saved = tmp_path / "eager.pt"
    run = run_target(f"{example}:make", 0, "eval", save=str(saved), backend="not_a_backend", timeout=120)
    assert "torch.compile failed" in run.error
    values = torch.load(saved)
    [eager] = values["eager"].values()
    assert values["compiled"] is None and torch.equal(eager, torch.full((3,), 2.0))
