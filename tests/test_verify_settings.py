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


RNN_SOURCE = '''import torch


class Tagger(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.lstm = torch.nn.LSTM(8, 16, batch_first=True, bidirectional=True)
        self.head = torch.nn.Linear(32, 4)

    def forward(self, x):
        y, _ = self.lstm(x)
        return self.head(y).relu()


def make():
    torch.manual_seed(0)
    return [(Tagger().eval(), (torch.randn(2, 5, 8),), {})]
'''


def test_an_rnn_break_points_to_allow_rnn():
    assert pointed_to([], ["Attempted to wrap RNN, GRU, or LSTM"]) == ["allow_rnn"]
    assert pointed_to(["CL216"], []) == ["allow_rnn"]
    assert run_kwargs(["allow_rnn"]) == {"dynamo_config": {"allow_rnn": True}, "dynamic": None}


@pytest.mark.slow
def test_allow_rnn_is_measured_on_an_lstm_submodule(tmp_path):
    """The frame that loads an nn.LSTM is skipped (GB0014); with allow_rnn Dynamo traces it, outputs equal."""
    pytest.importorskip("torch")
    (tmp_path / "tagger.py").write_text(RNN_SOURCE)
    r = subprocess.run([sys.executable, "-m", "compilelint", "verify", "tagger.py", "--example", "tagger.py:make",
                        "--try-settings", "--isolated", "--no-cache", "--device", "cpu"],
                       cwd=tmp_path, capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    # the break at the LSTM's call, as often as Dynamo reports it (2 on torch 2.13)
    n = int(lines[0].split(", ")[1].split()[0])
    assert n >= 1 and lines[0] == f"settings: without any, {n} breaks, 0 recompiles", lines
    assert any(ln.startswith(f"    torch._dynamo.config.allow_rnn = True: removes {n} of {n} breaks (tagger.py:11)")
               and ln.endswith("outputs equal") for ln in lines), lines
    assert lines[-1] == f"suggested: torch._dynamo.config.allow_rnn = True removes {n} of {n} breaks; outputs equal", lines
