"""`verify --cost` end to end on CPU: a tiny mixture of experts whose dispatch depends on the data
(two breaks, one proven fix), timed eager, compiled, fixed and with the fix alone; SARIF carries the
measurement per result, and the same data renders as text and as an HTML page with its bars."""
import json
import subprocess
import sys

import pytest

SOURCE = '''import torch
from torch import nn


class Experts(nn.ModuleDict):
    def __init__(self, num_experts, d):
        super().__init__()
        for idx in range(num_experts):
            self[f"expert_{idx}"] = nn.Linear(d, d, bias=False)

    def forward(self, hidden_states, selected_experts, routing_weights):
        final_hidden_states = torch.zeros_like(hidden_states)
        expert_mask = selected_experts.permute(2, 1, 0)
        expert_hit = torch.greater(expert_mask.sum(dim=(-1, -2)), 0).nonzero()
        for expert_idx in expert_hit:
            idx, top_x = torch.where(expert_mask[expert_idx].squeeze(0))
            current_state = hidden_states[None, top_x].reshape(-1, hidden_states.shape[-1])
            current_hidden_states = self[f"expert_{expert_idx[0]}"](current_state) * routing_weights[top_x, idx, None]
            final_hidden_states.index_add_(0, top_x, current_hidden_states.to(hidden_states.dtype))
        return final_hidden_states


def make():
    torch.manual_seed(0)
    x = torch.randn(16, 8)
    choice = torch.arange(16) % 3
    selected = torch.nn.functional.one_hot(choice, 3).view(-1, 1, 3)
    return [(Experts(3, 8).eval(), (x, selected, torch.rand(16, 1)), {})]
'''


def _run(tmp_path, *extra, timeout=1500):
    cmd = [sys.executable, "-m", "compilelint", "verify", "moe.py", "--example", "moe.py:make", "--isolated",
           "--no-cache", "--device", "cpu", *extra]
    return subprocess.run(cmd, cwd=tmp_path, capture_output=True, text=True, timeout=timeout)


@pytest.mark.slow
def test_cost_times_every_version_and_ranks_the_fix(tmp_path):
    pytest.importorskip("torch")
    from compilelint.report.cost import render_text
    from compilelint.report.html import render_html

    (tmp_path / "moe.py").write_text(SOURCE)
    r = _run(tmp_path, "--cost", "--unsafe-fixes", "--output-format", "sarif", "-o", "cost.sarif")
    assert r.returncode == 0, r.stderr[-3000:]
    log = json.loads((tmp_path / "cost.sarif").read_text())
    run = log["runs"][0]
    data = run["properties"]["cost"]
    assert data["backend"] == "inductor" and data["device"] == "cpu" and data["compile_mode"] == "default"
    (target,) = data["targets"]
    assert not target["error"], target
    versions = target["versions"]
    assert list(versions) == ["eager", "compiled", "fixed", "fix 1"]
    for name, v in versions.items():
        lat = v["latency"]
        assert lat["n"] >= 10 and lat["min"] <= lat["q1"] <= lat["median"] <= lat["q3"] <= lat["max"], name
    assert versions["compiled"]["breaks"] > 0 and versions["compiled"]["compile_s"] > 0
    assert versions["fixed"]["breaks"] == 0 and versions["fix 1"]["breaks"] == 0
    assert versions["fixed"]["outputs"]["equal"] in ("bitwise", "allclose")
    assert target["rounds"] >= 10 and target["compare"]["compiled_vs_eager"]["verdict"] in (
        "faster", "slower", "no measurable difference")

    # Both CL301 findings carry the one dense-loop fix: one ranking row, on both SARIF results.
    assert all("cost" in res["properties"] for res in run["results"])  # a property on each result
    results = [res for res in run["results"] if res["properties"]["cost"]["verdict"] != "not timed"]
    assert sorted(res["ruleId"] for res in results) == ["CL301", "CL301"]
    row = results[0]["properties"]["cost"]
    assert row["rank"] == 1 and row["breaks_removed"] >= 1 and row["target"] == 0
    (ranked,) = data["ranking"]
    assert ranked["verdict"] == row["verdict"]
    if row["verdict"] == "faster":  # the target's top saving is timed again, alone, in a fresh process
        (again,) = data["confirmations"]
        assert again["fix"] == 1 and again["target"] == 0 and again["verdict"] in (
            "faster", "slower", "no measurable difference") and again["confirmed"] == (again["verdict"] == "faster")
    else:
        assert data["confirmations"] == []

    text = render_text(data)
    assert "compiled as is" in text and "ranking:" in text and "moe.py:14:" in text
    page = render_html(data)
    assert page.count('class="bar') == 1 + 4  # one ranking bar, four latencies


def test_cost_usage_errors_are_one_line(tmp_path):
    (tmp_path / "moe.py").write_text("x = 1\n")
    r = _run(tmp_path, "--cost", "--run", "true", timeout=120)
    assert r.returncode == 2 and "--cost needs --example" in r.stderr and "Traceback" not in r.stderr
    r = _run(tmp_path, "--output-format", "html", timeout=120)
    assert r.returncode == 2 and "html needs --cost" in r.stderr
    r = _run(tmp_path, "--cost", "--output-format", "junit", timeout=120)
    assert r.returncode == 2 and "--cost prints" in r.stderr


def test_timing_lock_keeps_other_processes_out_until_released(tmp_path):
    """Children that compile side by side take turns to time (bench/fix/latency.py): while one holds
    the lock, another process cannot take it; closing the file releases it."""
    from compilelint.verify.cost_child import _lock

    path = str(tmp_path / "gpu.lock")
    probe = [sys.executable, "-c",
             "import fcntl, sys; fcntl.flock(open(sys.argv[1], 'a'), fcntl.LOCK_EX | fcntl.LOCK_NB)", path]
    held = _lock(path)
    assert subprocess.run(probe, capture_output=True).returncode != 0
    held.close()
    assert subprocess.run(probe, capture_output=True).returncode == 0
    assert _lock("") is None


def _timed(median_ms, equal="allclose"):
    m = median_ms / 1e3
    return {"latency": {"n": 40, "median": m, "q1": m * 0.99, "q3": m * 1.01, "min": m * 0.98, "max": m * 1.02},
            "compile_s": 1.0, "first_call_s": 0.1, "frames": 1, "breaks": 0, "recompiles": 0,
            "outputs": {"equal": equal, "max_abs": 0.0, "what": ""}, "error": ""}


def test_cost_keeps_what_is_not_slower_and_says_so():
    """The fixes with the settings slower than the code as it is (a setting that traces a
    data-dependent pooling into one slow graph): verify --cost keeps the fixes alone, and when
    those are slower too, nothing."""
    from compilelint.report.cost import render_text
    from compilelint.verify.cost import Cost, cost_dict

    target = {"index": 0, "label": "#0", "error": "", "rounds": 40, "stable": True, "seconds": 1.0,
              "versions": {"eager": _timed(20), "compiled": _timed(10), "fixed": _timed(15), "fixes": _timed(8),
                           "settings": _timed(16)}}
    cost = Cost(targets=[target], knobs=("capture_scalar_outputs",))
    data = cost_dict(cost, backend="inductor", compile_mode=None)
    k = data["targets"][0]["kept"]
    assert k["version"] == "fixes" and k["compare"]["verdict"] == "faster"
    assert k["rejected"] == {"fixed": "slower (0.67x)", "settings": "slower (0.62x)"}
    text = render_text(data)
    assert "kept: compiled, fixes alone, 1.25x faster" in text
    assert "not kept: compiled, fixed + settings: slower (0.67x)" in text
    target["versions"]["fixes"] = _timed(12)
    text = render_text(cost_dict(cost, backend="inductor", compile_mode=None))
    assert "kept: nothing, the code as it is (compiled, fixed + settings: slower (0.67x); " in text


def test_the_settings_are_ranked_and_confirmed_like_a_fix():
    """No fix proven, but a setting removes every break (a data-dependent scalar traced with
    capture_scalar_outputs): the ranking's row is the settings alone, and its confirmation names it."""
    from compilelint.report.cost import render_text
    from compilelint.report.html import render_html
    from compilelint.verify.cost import SETTINGS, Cost, _confirmation, _top_on, cost_dict

    target = {"index": 0, "label": "#0", "error": "", "rounds": 40, "stable": True, "seconds": 1.0,
              "versions": {"eager": _timed(18), "compiled": dict(_timed(18), breaks=11), "fixed": _timed(10)}}
    cost = Cost(targets=[target], knobs=("capture_scalar_outputs",))
    top = _top_on(cost, target)
    assert top["fix"] == SETTINGS and top["verdict"] == "faster"
    again = {"index": 0, "versions": {"compiled": _timed(17), "fixed": _timed(11)}}
    cost.confirmations.append(_confirmation(top, again, "fixed"))
    data = cost_dict(cost, backend="inductor", compile_mode=None)
    [row] = data["ranking"]
    assert row["breaks_removed"] == 11 and row["findings"][0]["code"] == "setting"
    text = render_text(data)
    assert "1. torch._dynamo.config.capture_scalar_outputs = True: setting: 1.80x faster" in text
    assert "#0: its top change (rank 1: the settings) (saved 8 ms) confirmed by a second run of that change alone" in text
    assert "its top change (rank 1: the settings) confirmed" in render_html(data)


def test_a_change_that_computes_something_else_wins_nothing():
    """A setting that is faster but changes the outputs under the compiler (an RNN traced with
    allow_rnn, say) while the code as it is computes what eager does: its ranking row says how the
    outputs differ, saves nothing, and is not the top change."""
    from compilelint.report.cost import render_text
    from compilelint.verify.cost import Cost, _top_on, cost_dict

    target = {"index": 0, "label": "#0", "error": "", "rounds": 40, "stable": True, "seconds": 1.0,
              "versions": {"eager": _timed(18), "compiled": dict(_timed(18), breaks=2),
                           "fixed": _timed(10, equal="differs")}}
    cost = Cost(targets=[target], knobs=("allow_rnn",))
    assert _top_on(cost, target) is None
    [row] = cost_dict(cost, backend="inductor", compile_mode=None)["ranking"]
    assert row["verdict"] == "outputs differs" and row["saving"] == 0.0
    assert "1. torch._dynamo.config.allow_rnn = True: setting: outputs differs on #0" in render_text(
        cost_dict(cost, backend="inductor", compile_mode=None))
