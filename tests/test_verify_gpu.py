"""verify on CUDA (skipped without a GPU): tensors and modules of an --example move to the device."""
import os

import pytest

from compilelint.finding import Report
from compilelint.verify import verify_report
from compilelint.verify.selftest import FIXTURES, marked_findings

torch = pytest.importorskip("torch")
pytestmark = [pytest.mark.slow, pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device")]

MODELS = os.path.join(FIXTURES, "models.py")


@pytest.mark.parametrize("backend", ["eager", "inductor"])
def test_examples_on_cuda(backend):
    findings, expected = marked_findings(MODELS)
    findings = [f for f in findings if f.function not in ("segfault", "hang", "hard_exit", "raises_in_eager", "hog")]
    report = verify_report(Report(findings=findings), [MODELS], example=f"{MODELS}:examples", device="cuda",
                           backend=backend, timeout=300)
    got = {(f.code, f.span.row): f.verification["status"] for f in report.findings if not f.code.startswith("CL9")}
    assert got == {k: v for k, v in expected.items() if k in got}
    assert {f.verification["device"] for f in report.findings} == {"cuda"}
    assert {f.verification["backend"] for f in report.findings} == {backend}
