"""`verify --try-settings`: the Dynamo settings the findings point to, measured one at a time and
together, with the smallest set that removes the most breaks while outputs stay equal."""
import subprocess
import sys

import pytest

from compilelint.verify.knobs import nested_breaks, pointed_to, run_kwargs, spelled

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
    # `.tolist()` / `.item()` read out under GB0033 (capture_scalar_outputs), and on torch 2.11 a masked write
    assert pointed_to([], ["Data dependent operator"]) == ["capture_scalar_outputs", "capture_dynamic_output_shape_ops"]
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


NUMPY_SOURCE = '''import numpy as np
import torch


class Bounds:
    def __init__(self):
        self.low = np.zeros((3, 4, 4), dtype=np.uint8)
        self.high = np.full((3, 4, 4), 255, dtype=np.uint8)


def scaled(bounds):
    wide = np.any(bounds.low != 0) or np.any(bounds.high != 255)
    return not wide


class Policy(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.bounds = Bounds()
        self.head = torch.nn.Linear(48, 2)

    def forward(self, x):
        if scaled(self.bounds):
            x = x / 255.0
        return self.head(x.flatten(1))


def make():
    torch.manual_seed(0)
    return [(Policy().eval(), (torch.rand(2, 3, 4, 4) * 255,), {})]
'''


def test_a_break_on_a_numpy_line_points_to_trace_numpy():
    assert pointed_to([], ["Data-dependent branching"], ["    wide = np.any(bounds.low != 0)\n"]) == ["trace_numpy"]
    assert pointed_to([], ["Data-dependent branching"], ["    if x.sum() > 0:\n"]) == []
    assert run_kwargs(["trace_numpy"]) == {"dynamo_config": {"trace_numpy": False}, "dynamic": None}
    assert spelled("trace_numpy") == "torch._dynamo.config.trace_numpy = False"


@pytest.mark.slow
def test_trace_numpy_off_is_measured_on_a_branch_on_held_arrays(tmp_path):
    """`np.any(...) or np.any(...)` on arrays the module holds: traced, the arrays are graph tensors and
    the `or` and the `not` break (GB0170, GB0033: 3 on torch 2.13); not traced, NumPy runs in Python and
    only the array comparison breaks (NumpyVariable has no richcompare: 1), outputs equal."""
    pytest.importorskip("torch")
    (tmp_path / "policy.py").write_text(NUMPY_SOURCE)
    r = subprocess.run([sys.executable, "-m", "compilelint", "verify", "policy.py", "--example", "policy.py:make",
                        "--try-settings", "--isolated", "--no-cache", "--device", "cpu"],
                       cwd=tmp_path, capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    n = int(lines[0].split(", ")[1].split()[0])
    assert n >= 2, lines
    trial = next(ln for ln in lines if ln.startswith("    torch._dynamo.config.trace_numpy = False: removes "))
    removed = int(trial.split("removes ")[1].split()[0])
    assert 1 <= removed < n and trial.endswith("outputs equal"), lines
    assert lines[-1] == (f"suggested: torch._dynamo.config.trace_numpy = False removes {removed} of {n} breaks; "
                         "outputs equal"), lines


NESTED_SOURCE = '''import torch


@torch.compiler.disable
def host_sum(x):
    return x + sum(float(v) for v in x.tolist())


def scaled(x):
    y = x * 2
    return host_sum(y) + 1


def smoothed(x):
    return scaled(x.sin()).cos()


class Stack(torch.nn.Module):
    def forward(self, x):
        return smoothed(x) * 3


def make():
    return [(Stack(), (torch.tensor([0.5, -1.0, 2.0]),), {})]
'''


def test_a_break_in_a_called_function_points_to_nested_graph_breaks():
    frame = {"event": "graph-break", "stack": [["m.py", 20, "forward"], ["m.py", 15, "smoothed"]]}
    assert nested_breaks([frame]) and not nested_breaks([dict(frame, stack=frame["stack"][:1])])
    assert pointed_to([], ["Skip inlining `torch.compiler.disable()`d function"], [], True) == ["nested_graph_breaks"]
    assert pointed_to([], ["Skip inlining `torch.compiler.disable()`d function"]) == []
    assert spelled("nested_graph_breaks") == "torch._dynamo.config.nested_graph_breaks = True"


@pytest.mark.slow
def test_nested_graph_breaks_is_measured_on_a_break_three_calls_deep(tmp_path):
    """A disabled call three functions deep: without the setting Dynamo breaks at the call in every
    enclosing frame (3 on torch 2.13), with it once per call (1), outputs equal."""
    pytest.importorskip("torch")
    (tmp_path / "stack.py").write_text(NESTED_SOURCE)
    r = subprocess.run([sys.executable, "-m", "compilelint", "verify", "stack.py", "--example", "stack.py:make",
                        "--try-settings", "--isolated", "--no-cache", "--device", "cpu"],
                       cwd=tmp_path, capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    n = int(lines[0].split(", ")[1].split()[0])
    trial = next(ln for ln in lines if ln.startswith("    torch._dynamo.config.nested_graph_breaks = True: removes "))
    removed = int(trial.split("removes ")[1].split()[0])
    assert n >= 2 and 1 <= removed < n and trial.endswith("outputs equal"), lines
