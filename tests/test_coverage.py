"""The registry coverage table: every gb_type is predicted by a rule or explained, and the
generated docs/coverage.md is current."""
import importlib.util
import json
import os
import subprocess
import sys

import pytest

from compilelint import coverage
from compilelint.gb_reasons import REASONS, reason_for, reason_for_unregistered


def test_every_gb_type_is_predicted_or_explained():
    rows = coverage.rows()
    assert len(rows) >= 517
    unexplained = [r.gb_id for r in rows if not r.rules and not r.reason]
    assert unexplained == []
    assert all(r.reason in REASONS for r in rows if not r.rules)


def test_rules_name_only_titles_the_registries_have():
    assert coverage.unclaimed_titles() == []


def test_rules_claim_the_measured_titles():
    by_id = {r.gb_id: r for r in coverage.rows()}
    assert by_id["GB0264"].rules == ["CL214", "CL218"]  # nn.Parameter() in forward; a submodule converted there
    assert by_id["GB0206"].rules == ["CL215"]  # t.requires_grad = ...
    assert "CL106" in by_id["GB0294"].rules  # np.random.permutation
    assert "CL210" in by_id["GB0099"].rules  # a disabled method
    assert by_id["GB0088"].rules == [] and by_id["GB0088"].reason == "runtime-value"


def test_reason_patterns_are_not_a_catch_all():
    assert reason_for("GB9999", ["a title no pattern knows"]) == ""


def test_doc_is_current():
    assert coverage.main(["--check"]) == 0, "run: python -m compilelint.coverage"


@pytest.mark.slow
def test_the_2_13_data_is_the_installed_registry():
    spec = importlib.util.find_spec("torch")
    if spec is None:
        pytest.skip("torch is not installed")
    path = os.path.join(os.path.dirname(spec.origin), "_dynamo", "graph_break_registry.json")
    version = subprocess.run([sys.executable, "-c", "import torch; print(torch.__version__)"],
                             capture_output=True, text=True, check=True).stdout
    if not version.startswith("2.13."):
        pytest.skip(f"installed torch is {version.strip()}")
    with open(path, encoding="utf-8") as f:
        shipped = {k: sorted({v["Gb_type"] for v in vs}) for k, vs in json.load(f).items()}
    assert coverage.load_registry("2.13") == shipped


def test_the_table_never_imports_torch():
    code = "import sys, compilelint.coverage as c; c.render(c.rows()); assert 'torch' not in sys.modules"
    subprocess.run([sys.executable, "-c", code], check=True)


def test_every_predicted_gb_type_was_measured():
    measured = coverage.load_measured()
    unmeasured = [r.gb_id for r in coverage.rows() if r.rules and r.gb_id not in measured]
    assert unmeasured == []


def test_every_gb_type_real_models_hit_is_predicted_or_explained():
    hits = coverage.truth_hits()
    assert hits, "bench/truth/*.json holds the truth corpus"
    by_title = {t: r for r in coverage.rows() for t in r.titles}
    for title in hits:
        row = by_title.get(title)
        if row is None:  # an internal error's message standing as the title: explained as such
            assert reason_for_unregistered(title), f"{title!r} is not a registry title"
            continue
        assert row.rules or row.reason, title


def test_the_variant_runs_are_read_and_an_unregistered_title_is_explained():
    hits = coverage.truth_hits()
    title = "GetAttrVariable(AutogradFunctionVariable(), setup_context) has no type"  # I-BERT's quant variant only
    assert title in hits and reason_for_unregistered(title) == "internal"
    assert f"| {coverage._code(title)} |" in coverage.render(coverage.rows())
    assert reason_for_unregistered("Unsupported Tensor.item() call") == ""
