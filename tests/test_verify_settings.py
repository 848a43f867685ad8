"""`verify --try-settings`: the Dynamo settings the findings point to, measured one at a time and
together, with the smallest set that removes the most breaks while outputs stay equal."""
import subprocess
import sys

import pytest

from compilelint.verify.knobs import pointed_to, run_kwargs, spelled

SOURCE = '''import torch


def f(x: torch.Tensor):
    s = x.abs().max().item()
    idx = torch.nonzero(x > 0)
    return x / s, idx.sum()


def make():
    return [(f, (torch.tensor([1.0, -2.0, 3.0]),), {})]
'''


def test_findings_and_breaks_point_to_settings():
    assert pointed_to(["CL101"], []) == ["capture_scalar_outputs"]
    assert pointed_to([], ["Dynamic shape operator"]) == ["capture_dynamic_output_shape_ops"]
    # `.tolist()` / `.item()` read out under GB0033: jetmoe's expert sizes trace with capture_scalar_outputs
    assert pointed_to([], ["Data dependent operator"]) == ["capture_scalar_outputs"]
    assert pointed_to(["CL401", "CL201"], []) == ["reorderable_logging_functions", "dynamic"]
    assert pointed_to(["CL205"], ["Attempted to call function marked as skipped"]) == []
    assert run_kwargs(["dynamic", "capture_scalar_outputs"]) == {"dynamo_config": {"capture_scalar_outputs": True},
                                                                "dynamic": True}
    assert spelled("capture_scalar_outputs") == "torch._dynamo.config.capture_scalar_outputs = True"


@pytest.mark.slow
def test_settings_are_measured_and_the_smallest_best_set_suggested(tmp_path):
    pytest.importorskip("torch")
    (tmp_path / "knob.py").write_text(SOURCE)
    r = subprocess.run([sys.executable, "-m", "compilelint", "verify", "knob.py", "--example", "knob.py:make",
                        "--try-settings", "--entry", "knob.py:f", "--isolated", "--no-cache", "--device", "cpu"],
                       cwd=tmp_path, capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    assert lines[0] == "settings: without any, 2 breaks, 0 recompiles"
    assert "    torch._dynamo.config.capture_scalar_outputs = True: removes 1 of 2 breaks (knob.py:5), " \
           "0 recompiles; outputs equal" in lines
    assert any(ln.startswith("    torch._dynamo.config.capture_dynamic_output_shape_ops = True: removes 1 of 2 "
                             "breaks (knob.py:6)") for ln in lines), lines
    assert lines[-1] == ("suggested: torch._dynamo.config.capture_scalar_outputs = True; "
                         "torch._dynamo.config.capture_dynamic_output_shape_ops = True removes 2 of 2 breaks; "
                         "outputs equal")
