"""bench/fix/latency.py reports, per model and mode, what verify keeps (compilelint.verify.cost.kept):
the fixes with every setting, else the faster of the fixes alone and each setting alone, whichever
computes what the code as it is computes and is not slower beyond the spread; else nothing."""
import importlib.util
import os
import re

from compilelint.verify.cost import kept

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _latency():
    spec = importlib.util.spec_from_file_location("bench_fix_latency", os.path.join(ROOT, "bench", "fix", "latency.py"))
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def _v(median_ms, spread_ms=0.1, equal="allclose", breaks=0, error=""):
    m, s = median_ms / 1e3, spread_ms / 1e3
    return {"latency": {"n": 50, "median": m, "q1": m - s, "q3": m + s, "min": m - 2 * s, "max": m + 2 * s},
            "breaks": breaks, "outputs": {"equal": equal, "max_abs": 1e-6, "what": "out"}, "error": error}


def _row(label, knobs, versions):
    return {"label": label, "knobs": knobs, "call": {}, "error": "", "versions": versions, "compare": {}}


def test_kept_prefers_fixes_with_settings_then_the_fastest_of_fixes_or_one_setting():
    target = {"versions": {"compiled": _v(10, breaks=5), "fixed": _v(9), "fixes": _v(6, breaks=3),
                           "setting a": _v(8), "setting b": _v(7)}}
    alone = ["fixes", "setting a", "setting b"]
    assert kept(target, "compiled", ["fixed"], alone)["version"] == "fixed"  # first, though not the fastest
    target["versions"]["fixed"] = _v(15)
    k = kept(target, "compiled", ["fixed"], alone)
    assert k["version"] == "fixes" and k["rejected"]["fixed"] == "slower (0.67x)"
    target["versions"]["fixes"] = _v(12)
    k = kept(target, "compiled", ["fixed"], alone)
    assert k["version"] == "setting b" and round(k["compare"]["speedup"], 2) == 1.43
    assert k["rejected"] == {"fixed": "slower (0.67x)", "fixes": "slower (0.83x)", "setting a": "setting b was faster"}


def test_kept_refuses_changed_outputs_errors_and_keeps_nothing_when_none_qualifies():
    target = {"versions": {"compiled": _v(10), "fixed": _v(5, equal="differs"), "setting a": _v(4, error="boom")}}
    k = kept(target, "compiled", ["fixed"], ["setting a", "setting b"])
    assert k["version"] is None and k["compare"] is None
    assert k["rejected"] == {"fixed": "outputs differs", "setting a": "error: boom", "setting b": "not timed"}
    # the compiled original differs from eager as much: the change is not what differs
    target["versions"]["compiled"] = _v(10, equal="differs")
    assert kept(target, "compiled", ["fixed"])["version"] == "fixed"


def test_no_model_reported_slower_and_the_mean_counts_nothing_kept_as_one():
    lat = _latency()
    doc = {"method": "test", "rows": [
        # fixes + settings slower in default mode (0.66x), each setting alone timed: the faster one is kept
        _row("pooling", ["capture_scalar_outputs", "capture_dynamic_output_shape_ops"], {
            "eager": _v(20), "compiled": _v(224, 2, breaks=75), "fixed": _v(339, 2, breaks=8),
            "fixes": _v(224, 2, breaks=75), "setting capture_scalar_outputs": _v(200, 2, breaks=10),
            "setting capture_dynamic_output_shape_ops": _v(230, 2, breaks=60),
            "compiled RO": _v(200, 2, breaks=75), "fixed RO": {"error": "AssertionError"},
            "fixes RO": _v(201, 2, breaks=75)}),
        # the fix slower and nothing else to keep: the code as it is stays
        _row("moe", [], {"eager": _v(30), "compiled": _v(36, 1, breaks=4), "fixed": _v(75, 0.2)}),
        _row("faster", [], {"eager": _v(4), "compiled": _v(4, 0.1, breaks=2), "fixed": _v(2, 0.1),
                            "compiled RO": _v(3, 0.1, breaks=2), "fixed RO": _v(1, 0.1)}),
    ]}
    text = lat.markdown(doc)
    rows = {line.split(" | ")[0].strip("| "): line for line in text.splitlines() if line.startswith("| ")}
    assert "setting capture_scalar_outputs" in rows["pooling"] and "1.12x" in rows["pooling"]
    assert "75 → 10" in rows["pooling"]
    assert "1.00x (nothing kept)" in rows["moe"] and "4 → 4" in rows["moe"]
    assert "fixes alone" in rows["pooling"].split(" | ")[10]  # under CUDA graphs: the fixes alone (no change)
    assert "**slower**" not in text and "Slower beyond the spread (IQRs apart): none." in text
    assert "pooling fixed: slower (0.66x)" in text and "moe fixed: slower (0.48x)" in text
    means = dict((mode, float(x)) for x, mode in re.findall(r"\*\*([\d.]+)x\*\* (\S+) mode", text))
    assert means["default"] == round((1.12 * 1.0 * 2.0) ** (1 / 3), 2) or abs(means["default"] - 1.31) < 0.01
    assert abs(means["reduce-overhead"] - (0.995 * 3.0) ** 0.5) < 0.01
