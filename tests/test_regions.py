"""Compiled regions: each root form, each stop, each reach form, across files (fixtures/regions)."""
import os
import re

import pytest

from compilelint.config import Settings
from compilelint.engine import check_paths

from conftest import FIXTURES

REGIONS = os.path.join(FIXTURES, "regions")
CASES = sorted(n for n in os.listdir(REGIONS) if n.endswith(".py") or os.path.isdir(os.path.join(REGIONS, n)))
EXPECT = re.compile(r"#\s*expect:\s*([A-Z0-9, ]+)")


def expected(path):
    out = set()
    files = [path] if os.path.isfile(path) else [
        os.path.join(d, f) for d, _, fs in os.walk(path) for f in fs if f.endswith(".py")]
    settings = {"scope": "modules"}
    for f in files:
        with open(f) as fh:
            for i, line in enumerate(fh, 1):
                if i == 1 and "compilelint-test:" in line:  # scope=compiled torch-version=2.11
                    settings.update(pair.replace("-", "_").split("=", 1)
                                    for pair in line.split("compilelint-test:", 1)[1].split())
                m = EXPECT.search(line)
                if m:
                    for code in m.group(1).split(","):
                        out.add((os.path.realpath(f), i, code.strip()))
    return out, settings


@pytest.mark.parametrize("case", CASES)
def test_region_case(case):
    path = os.path.join(REGIONS, case)
    want, settings = expected(path)
    report = check_paths([path], Settings(cache=False, named_alone=True, **settings))
    assert not report.errors
    got = {(os.path.realpath(f.path), f.span.row, f.code) for f in report.findings}
    assert got == want


def test_reach_path_names_the_chain():
    path = os.path.join(REGIONS, "crossfile")
    report = check_paths([path], Settings(cache=False, named_alone=True, scope="compiled"))
    reasons = {(os.path.basename(f.path), f.span.row): f.region.reason for f in report.findings}
    assert reasons[("layers.py", 9)] == "Llama.forward → self.layers[i] → DecoderLayer.forward → self.attn → Attention.forward → rotate_half"
    assert reasons[("base.py", 7)].endswith("Attention.forward → BaseLayer.norm")
    assert all(f.region.root.endswith("model.py:Llama.forward") for f in report.findings)


def test_entry_restricts_to_what_it_reaches():
    path = os.path.join(REGIONS, "crossfile")
    model = os.path.join(path, "pkg", "model.py")
    report = check_paths([path], Settings(cache=False, named_alone=True, entries=[f"{model}:MLP"]))
    assert {(os.path.basename(f.path), f.span.row) for f in report.findings} == {("model.py", 16)}
    report = check_paths([path], Settings(cache=False, named_alone=True, entries=["pkg.model:Attention"]))
    assert {os.path.basename(f.path) for f in report.findings} == {"layers.py", "base.py"}
    assert all(f.region.root.endswith("model.py:Attention.forward") for f in report.findings)


def test_scope_modules_makes_every_forward_a_candidate():
    path = os.path.join(REGIONS, "roots_callsites.py")
    report = check_paths([path], Settings(cache=False, named_alone=True, scope="modules"))
    assert any("never compiled under scope=compiled" in open(path).read().splitlines()[f.span.row - 1]
               for f in report.findings)
    compiled_only = check_paths([path], Settings(cache=False, named_alone=True, scope="compiled"))
    assert len(report.findings) == len(compiled_only.findings) + 1


def test_scope_all_reports_every_function():
    path = os.path.join(REGIONS, "roots_decorators.py")
    report = check_paths([path], Settings(cache=False, named_alone=True, scope="all"))
    assert any(f.function == "never_compiled" for f in report.findings)


def test_entry_runs_an_inherited_forward_for_its_own_class():
    """`--entry file.py:Child` compiles a Child: the base's `forward` calls Child's `update`; a
    sibling with a clean `update` and the base itself reach neither Child's nor each other's."""
    path = os.path.join(REGIONS, "self_dispatch.py")
    rows = {}
    for cls in ("Counts", "Sums", "Scaled", "Base"):
        report = check_paths([path], Settings(cache=False, named_alone=True, entries=[f"{path}:{cls}"]))
        rows[cls] = sorted(f.span.row for f in report.findings)
    assert rows == {"Counts": [24], "Sums": [], "Scaled": [38], "Base": [15]}
    report = check_paths([path], Settings(cache=False, named_alone=True, entries=[f"{path}:Counts"]))
    assert [f.region.reason for f in report.findings] == ["Base.forward → Counts.update"]


def test_a_subclass_fixing_its_base_option_decides_the_state_test():
    """fixtures/regions/subclass_fixes_option.py: `Exact` passes `exact_mode=True` to the base's
    `__init__`, which copies it into `self.exact_mode`; the base's `self.exact_mode or
    torch.equal(...)` never calls `torch.equal` for an `Exact` (measured: one graph), and does for a
    `Grid` its user builds (measured: "Data dependent operator")."""
    path = os.path.join(REGIONS, "subclass_fixes_option.py")
    equal = next(i for i, line in enumerate(open(path, encoding="utf-8"), 1) if "# expect: CL105" in line)
    rows = {}
    for cls in ("Exact", "Grid"):
        report = check_paths([path], Settings(cache=False, named_alone=True, entries=[f"{path}:{cls}"]))
        rows[cls] = sorted((f.span.row, f.code) for f in report.findings if f.code != "CL201")
    assert rows == {"Exact": [], "Grid": [(equal, "CL105")]}


def test_entry_runs_the_call_its_class_writes():
    """`--entry file.py:Scale` compiles a call of a Scale: its base's own `__call__` runs before
    forward; Plain's `__call__` runs too for `--entry ...:Plain`, and not for an entry whose
    class has none (Model's)."""
    path = os.path.join(REGIONS, "own_call.py")
    rows = {}
    for cls in ("Scale", "Plain", "Model"):
        report = check_paths([path], Settings(cache=False, named_alone=True, entries=[f"{path}:{cls}"]))
        rows[cls] = sorted((f.span.row, f.code) for f in report.findings)
    assert rows == {"Scale": [(13, "CL203")], "Plain": [(24, "CL201")], "Model": [(13, "CL203")]}


def test_entry_runs_the_modules_its_class_installs():
    """`--entry file.py:NoisyWrapper`: the wrapper's base installs adapters into the model it is
    handed (`setattr(parent, name, new)`, the class from the subclass's class-level dict), and its
    forward calls that model: NoisyAdapter runs (measured: snippets_installed_modules.out), and
    only for the wrapper that installs it."""
    path = os.path.join(REGIONS, "installed_modules.py")
    rows = {}
    for cls in ("NoisyWrapper", "QuietWrapper", "Wrapper"):
        report = check_paths([path], Settings(cache=False, named_alone=True, entries=[f"{path}:{cls}"]))
        rows[cls] = sorted((f.span.row, f.code) for f in report.findings)
    assert rows == {"NoisyWrapper": [(18, "CL104")], "QuietWrapper": [], "Wrapper": []}
    report = check_paths([path], Settings(cache=False, named_alone=True, entries=[f"{path}:NoisyWrapper"]))
    assert [f.region.reason for f in report.findings] == ["Wrapper.forward → self.model → NoisyAdapter.forward"]


def test_entry_runs_the_members_a_method_stores():
    """`--entry file.py:Holder`: `add` stores what `build` returns into the ModuleDict and the
    forward calls each item: Router runs (measured: snippets_container_items_stored.out); Spare,
    built and never stored, does not."""
    path = os.path.join(REGIONS, "container_items_stored.py")
    report = check_paths([path], Settings(cache=False, named_alone=True, entries=[f"{path}:Holder"]))
    assert sorted((f.span.row, f.code) for f in report.findings) == [(11, "CL101")]


def test_entry_runs_the_class_a_helper_returns():
    """`--entry file.py:Wrapper`: `_make` instantiates the class `pick_class` returns (`layer_cls =
    Fast ... return layer_cls`): Fast runs (measured: snippets_returned_class.out), Unpicked not."""
    path = os.path.join(REGIONS, "returned_class.py")
    report = check_paths([path], Settings(cache=False, named_alone=True, entries=[f"{path}:Wrapper"]))
    assert sorted((f.span.row, f.code) for f in report.findings) == [(15, "CL301")]


def test_the_entry_class_is_built_by_the_user_whatever_the_project_builds():
    """`--entry ...:Block` compiles the user's Block, whose `looped` the user may pass, though the
    project's only construction (`Stack`'s `Block(dim)`) leaves it out; the same for a subclass
    running Block's `__init__` and for a class handing its own `looped` on (`Relay`). Entered
    through the classes that build them with the option left out, the branch never runs."""
    path = os.path.join(REGIONS, "entry_built_by_user.py")
    rows = {}
    for cls in ("Block", "LoopedBlock", "Relay", "Stack", "Outer"):
        report = check_paths([path], Settings(cache=False, named_alone=True, entries=[f"{path}:{cls}"]))
        rows[cls] = sorted((f.span.row, f.code) for f in report.findings)
    flagged = [(25, "CL104")]
    assert rows == {"Block": flagged, "LoopedBlock": flagged, "Relay": flagged, "Stack": [], "Outer": []}


def test_siblings_parts_follow_the_class_compiled():
    """Each sibling hands the shared base its own part: compiled as MaskedModel, the base's forward
    reaches Masked.run's mask; compiled as FastModel, it does not (fixtures/precision/sibling_parts.py)."""
    path = os.path.join(FIXTURES, "precision", "sibling_parts.py")
    found = {}
    for cls in ("MaskedModel", "FastModel"):
        report = check_paths([path], Settings(cache=False, named_alone=True, entries=[f"{path}:{cls}"]))
        found[cls] = sorted((f.span.row, f.code) for f in report.findings)
    assert found == {"MaskedModel": [(20, "CL302")], "FastModel": []}
