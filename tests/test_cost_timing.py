"""verify --cost's timing statistics: interleaved rounds, medians, spreads, and "no measurable
difference" when the spreads overlap (no torch: the timers are fakes)."""
import itertools

import pytest

from compilelint.verify.timing import FASTER, SAME, SLOWER, Summary, compare, interleaved, order, quantile, summarize


def test_quantiles_interpolate_between_ranks():
    assert quantile([3, 1, 2], 0.5) == 2
    assert quantile([1, 2, 3, 4], 0.5) == 2.5
    assert quantile([1, 2, 3, 4, 5], 0.25) == 2
    assert quantile([10, 20], 0.75) == 17.5
    with pytest.raises(ValueError):
        quantile([], 0.5)


def test_summary_holds_median_and_spread():
    s = summarize([5.0, 1.0, 4.0, 2.0, 3.0])
    assert (s.n, s.median, s.q1, s.q3, s.min, s.max) == (5, 3.0, 2.0, 4.0, 1.0, 5.0)


def test_rounds_interleave_every_version_in_rotated_order():
    seen = []
    timers = {name: (lambda name=name: seen.append(name) or 1.0) for name in "ABC"}
    m = interleaved(timers, min_rounds=4, max_rounds=4, check_every=100)
    assert m.rounds == 4
    assert seen == list("ABC" "BCA" "CAB" "ABC")  # never all A, then all B
    assert [len(m.samples[n]) for n in "ABC"] == [4, 4, 4]
    assert order(["A", "B"], 1) == ["B", "A"]


def test_repeats_stop_once_the_medians_are_stable():
    m = interleaved({"A": lambda: 1.0, "B": lambda: 2.0}, min_rounds=10, max_rounds=400, check_every=5)
    assert m.stable and m.rounds == 15  # checked at 10, unchanged at 15


def test_a_drifting_median_runs_until_the_limit_and_says_so():
    drift = itertools.count(1)
    m = interleaved({"A": lambda: float(next(drift))}, min_rounds=10, max_rounds=40, check_every=5)
    assert not m.stable and m.rounds == 40


def test_the_time_budget_ends_the_repeats():
    ticks = itertools.count()
    m = interleaved({"A": lambda: float(next(ticks) % 7)}, min_rounds=3, max_rounds=1000, budget_s=10,
                    clock=lambda: float(next(ticks)))
    assert m.rounds < 1000 and not m.stable


def test_between_runs_outside_the_timed_call():
    log = []
    interleaved({"A": lambda: log.append("call A") or 1.0, "B": lambda: log.append("call B") or 1.0},
                min_rounds=1, max_rounds=1, between=lambda n: log.append(f"set {n}"))
    assert log == ["set A", "call A", "set B", "call B"]


def test_overlapping_spreads_are_no_measurable_difference():
    before = summarize([10.0, 10.5, 11.0, 11.5, 12.0])
    close = summarize([9.8, 10.2, 10.6, 11.0, 11.4])  # median 0.4 lower, inside the IQR
    assert compare(before, close)["verdict"] == SAME
    fast = summarize([4.0, 4.1, 4.2, 4.3, 4.4])
    c = compare(before, fast)
    assert c["verdict"] == FASTER and c["saving"] == pytest.approx(6.8) and c["speedup"] == pytest.approx(11 / 4.2)
    assert compare(fast, before)["verdict"] == SLOWER


def test_a_wide_spread_hides_a_large_median_difference():
    noisy = Summary(n=20, median=10.0, q1=5.0, q3=20.0, min=1.0, max=40.0)
    other = Summary(n=20, median=7.0, q1=6.0, q3=8.0, min=5.0, max=9.0)
    assert compare(noisy, other)["verdict"] == SAME


def test_stability_waits_for_the_minimum_time():
    ticks = itertools.count()
    m = interleaved({"A": lambda: 1.0}, min_rounds=10, max_rounds=400, check_every=5, min_s=30, budget_s=100,
                    clock=lambda: float(next(ticks)))
    assert m.stable and m.seconds >= 30 and m.rounds > 15


def test_each_version_imports_its_own_code(tmp_path, monkeypatch):
    """Between versions the child drops the modules of the checked code and its copies (not an
    environment inside the project, nor compilelint), and notices a factory that found the original."""
    import sys
    import types

    from compilelint.verify.cost_child import _forget, _loaded_from

    project, copy = tmp_path / "proj", tmp_path / "copy"
    mods = {"pkg.mod": project / "pkg" / "mod.py", "pkg_copy": copy / "pkg" / "__init__.py",
            "torchish": project / ".venv" / "lib" / "site-packages" / "torchish" / "__init__.py",
            "examples": tmp_path / "elsewhere" / "examples.py", "unrelated": tmp_path / "other" / "u.py"}
    for name, path in mods.items():
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("")
        m = types.ModuleType(name)
        m.__file__ = str(path)
        monkeypatch.setitem(sys.modules, name, m)
    assert _loaded_from([str(copy)])
    _forget([str(project), str(copy)], "examples")
    left = set(sys.modules)
    assert {"torchish", "unrelated"} <= left and not {"pkg.mod", "pkg_copy", "examples"} & left
    assert "compilelint.verify.cost_child" in left
    assert not _loaded_from([str(copy)])


def test_a_lazy_module_whose_import_fails_is_passed_over(tmp_path, monkeypatch):
    """A lazy module loads itself on attribute access; one whose optional dependency is missing
    raises ImportError even from `getattr(m, "__file__", None)`. Such a module has no file yet: the
    child drops it with its package (or leaves it, if its package stays) and times the versions
    (it used to fail every version)."""
    import sys
    import types

    from compilelint.verify.cost_child import _forget, _loaded_from

    class Lazy(types.ModuleType):
        def __getattr__(self, name):
            raise ImportError(f"lazy import of {self.__name__} failed")

    mod = tmp_path / "proj" / "pkg.py"
    mod.parent.mkdir()
    mod.write_text("")
    real = types.ModuleType("pkg")
    real.__file__ = str(mod)
    monkeypatch.setitem(sys.modules, "pkg", real)
    monkeypatch.setitem(sys.modules, "pkg.optional", Lazy("pkg.optional"))
    monkeypatch.setitem(sys.modules, "other.optional", Lazy("other.optional"))
    # an extension's submodule has no file and cannot be imported again: it stays
    monkeypatch.setitem(sys.modules, "pkg._ext", types.ModuleType("pkg._ext"))
    assert not _loaded_from([str(tmp_path / "copy")])
    _forget([str(tmp_path / "proj")], "examples")
    # the dropped package's lazy submodule goes with it; another package's stays
    assert "pkg" not in sys.modules and "pkg.optional" not in sys.modules and "other.optional" in sys.modules
    assert "pkg._ext" in sys.modules


def test_forgetting_a_version_imports_nothing(tmp_path, monkeypatch):
    """A package that registers a lazy redirect (a module whose attribute access imports its target,
    for an old import path) must not import during the drop: that import re-ran the package's
    `__init__` against half-dropped submodules ("partially initialized module ..."). The redirect
    goes with its package, untouched."""
    import sys
    import types

    from compilelint.verify.cost_child import _forget, _loaded_from

    touched = []

    class Redirect(types.ModuleType):
        def __getattr__(self, name):
            touched.append(name)
            raise AttributeError(name)

    mod = tmp_path / "proj" / "pkg" / "__init__.py"
    mod.parent.mkdir(parents=True)
    mod.write_text("")
    real = types.ModuleType("pkg")
    real.__file__ = str(mod)
    monkeypatch.setitem(sys.modules, "pkg", real)
    monkeypatch.setitem(sys.modules, "pkg.old_name", Redirect("pkg.old_name"))
    assert not _loaded_from([str(tmp_path / "copy")])
    _forget([str(tmp_path / "proj")], "examples")
    assert touched == []
    assert "pkg" not in sys.modules and "pkg.old_name" not in sys.modules
