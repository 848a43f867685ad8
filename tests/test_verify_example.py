"""`verify --example`: every target of a factory in its own subprocess (fixtures/verify/models.py).

Findings are built from the fixture's `# finding: CODE verify: STATUS` markers, so these tests
measure verify alone; test_verify_engine.py runs the real `check` first.
"""
import os

import pytest

from compilelint.finding import Report
from compilelint.verify import summarize, verify_report
from compilelint.verify.selftest import FIXTURES, marked_findings

pytestmark = pytest.mark.slow  # end to end (CLI subprocesses, Dynamo runs, fuzzing): seconds a test

pytest.importorskip("torch")

MODELS = os.path.join(FIXTURES, "models.py")
CRASHERS = ("segfault", "hang", "hard_exit", "raises_in_eager", "hog")


def _verify(factory, crash, **kw):
    findings, expected = marked_findings(MODELS)
    findings = [f for f in findings if (f.function in CRASHERS) == crash]
    seen = []
    report = verify_report(Report(findings=findings), [MODELS], example=f"{MODELS}:{factory}",
                           progress=lambda done, total, label: seen.append((done, total, label)), **kw)
    return report, expected, seen


@pytest.fixture(scope="module")
def examples():
    return _verify("examples", False, timeout=120)


# The timeout counts from the child's first record (torch imported): the other crashers end
# within a second of it even under load, so the hanging one need not be waited on for long.
CRASHER_TIMEOUT = 8


@pytest.fixture(scope="module")
def crashers():
    # device="cpu": CUDA init alone may pass 1 GiB
    return _verify("crashers", True, timeout=CRASHER_TIMEOUT, memory_limit_mb=1024, device="cpu")


def _by_row(report):
    return {f.span.row: f for f in report.findings if not f.code.startswith("CL9")}


def _row(text):
    with open(MODELS) as f:
        return next(i for i, line in enumerate(f, 1) if text in line)


def test_every_marked_finding_gets_its_status(examples):
    report, expected, _ = examples
    got = {(f.code, f.span.row): f.verification["status"] for f in report.findings if not f.code.startswith("CL9")}
    assert got == {k: v for k, v in expected.items() if k in got}
    assert len(got) == 12


def test_item_is_confirmed_although_fullgraph_passes(examples):
    f = _by_row(examples[0])[_row("scale = y.abs().max().item()")]
    v = f.verification
    assert v["status"] == "confirmed" and v["event"] == "graph-break"
    assert v["gb_type"] == "Unsupported Tensor.item() call with capture_scalar_outputs=False"
    assert v["fullgraph"] == "ok"  # capture_scalar_outputs is on under fullgraph=True
    assert v["observed"].endswith(f"models.py:{f.span.row}")
    assert v["torch"] and v["device"] in ("cpu", "cuda") and v["backend"] == "eager" and v["message"] == ""


def test_tensor_branch_raises_under_fullgraph(examples):
    v = _by_row(examples[0])[_row("if x.sum() > 0:")].verification
    assert v["gb_type"] == "Data-dependent branching" and v["fullgraph"] == "raises: Data-dependent branching"


def test_recompiles_are_confirmed_as_recompiles(examples):
    rows = _by_row(examples[0])
    for text in ("self.counter += 1", "self.cache.append(y)"):
        v = rows[_row(text)].verification
        assert (v["status"], v["event"]) == ("confirmed", "recompile")


def test_unpredicted_break_is_reported_missed(examples):
    missed = [f for f in examples[0].findings if f.code.startswith("CL9")]
    assert [(f.code, f.name, f.span.row) for f in missed] == [
        ("CL901", "missed-graph-break", _row("torch._dynamo.graph_break()"))]
    f = missed[0]
    assert f.function == "explicit_break" and f.verification["status"] == "missed"
    assert f.message.startswith("Call to `torch._dynamo.graph_break()`")
    assert f.url.endswith("gb0025.html")


def test_summary_and_progress(examples):
    report, _, seen = examples
    s = summarize(report)
    assert (s["confirmed"], s["not-reproduced"], s["not-reached"], s["static-only"], s["missed"]) == (9, 1, 1, 1, 1)
    assert seen[-1][0] == seen[-1][1] == 10


def test_misbehaving_targets_are_errors_and_the_run_goes_on(crashers):
    report, _, _ = crashers
    msg = {f.function: f.verification["message"] for f in report.findings}
    assert all(f.verification["status"] == "error" for f in report.findings)
    assert msg["segfault"] == "crashed with signal SIGSEGV during the eager run"
    assert msg["hang"] == f"timed out after {CRASHER_TIMEOUT}s during the eager run"
    assert msg["hard_exit"] == "exited with status 3 during the eager run"
    assert msg["raises_in_eager"] == "raised in eager: ValueError: bad input 2"
    assert msg["hog"] == "killed after using more than 1024 MiB of memory during the eager run"
    assert all("\n" not in m for m in msg.values())


def test_a_broken_factory_is_an_error_for_every_finding(tmp_path):
    bad = tmp_path / "bad.py"
    bad.write_text("import torch\n\ndef f(x):\n    return x.item()  # finding: CL190\n\n"
                   "def factory():\n    raise RuntimeError('no weights here')\n")
    findings, _ = marked_findings(str(bad))
    report = verify_report(Report(findings=findings), [str(bad)], example=f"{bad}:factory", timeout=60)
    v = report.findings[0].verification
    assert (v["status"], v["message"]) == ("error", "RuntimeError: no weights here")


FP16_CLAMP = '''\
import torch
from torch import nn


class ClampModel(nn.Module):
    def forward(self, x):
        if x.dtype == torch.float16 and not torch.isfinite(x).all():
            x = torch.clamp(x, -60000.0, 60000.0)
        return x * 2


def examples():
    return [(ClampModel(), (torch.randn(4, 8),), {}), (ClampModel(), (torch.randn(4, 8).half(),), {})]


def float32_only():
    return [(ClampModel(), (torch.randn(4, 8),), {})]
'''


def test_a_short_circuited_operand_is_not_reached_where_its_line_ran(tmp_path):
    """The fp16 clamp of encoder-decoder models: in float32 the line runs, `torch.isfinite(x).all()`
    does not, so the break is not-reached there, not not-reproduced; in fp16 it breaks."""
    from compilelint.finding import Finding, Region, Span

    path = tmp_path / "clamp_model.py"
    path.write_text(FP16_CLAMP)
    row = 7
    line = FP16_CLAMP.splitlines()[row - 1]
    col = line.index("torch.isfinite") + 1
    finding = Finding(code="CL104", name="tensor-branch", message="tensor if", path=str(path),
                      span=Span(row, col, row, col + len("torch.isfinite(x).all()")), function="ClampModel.forward",
                      region=Region(root=f"{path}:ClampModel.forward", reason="ClampModel.forward"))
    statuses = {}
    for factory in ("float32_only", "examples"):
        report = verify_report(Report(findings=[finding]), [str(path)], example=f"{path}:{factory}", timeout=120,
                               device="cpu")
        statuses[factory] = next(f.verification["status"] for f in report.findings if f.code == "CL104")
    assert statuses == {"float32_only": "not-reached", "examples": "confirmed"}
