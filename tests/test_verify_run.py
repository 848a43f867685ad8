"""`verify --run CMD`: the user's own command runs with the flagged functions wrapped on import."""
import os
import sys

import pytest

from compilelint.finding import Report
from compilelint.verify import summarize, verify_report
from compilelint.verify.selftest import FIXTURES, decoder_root, marked_findings

pytestmark = pytest.mark.slow  # end to end (CLI subprocesses, Dynamo runs, fuzzing): seconds a test

pytest.importorskip("torch")

DECODER = os.path.join(FIXTURES, "decoder")
SCRIPT = os.path.join(FIXTURES, "script_app.py")


def _statuses(report):
    return {(f.code, f.span.row): f.verification["status"] for f in report.findings}


def test_decoder_under_its_own_pytest_suite():
    findings, expected = marked_findings(os.path.join(DECODER, "layers.py"), decoder_root)
    report = verify_report(Report(findings=findings), [DECODER],
                           run_cmd=[sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
                                    os.path.join(DECODER, "tests")], timeout=180)
    assert _statuses(report) == expected  # .item() on the max position and logger.debug confirmed;
    # the debug-only print is not reached; shape recompiles between the tests are not "missed"
    by_code = {f.code: f.verification for f in report.findings}
    assert by_code["CL190"]["gb_type"] == "Unsupported Tensor.item() call with capture_scalar_outputs=False"
    assert by_code["CL193"]["gb_type"] == "logging.Logger method not supported for non-export cases"
    assert all(v["fullgraph"] == "not-run" for v in by_code.values())
    assert summarize(report)["command"] == "exited with status 0"


def test_script_main_with_uncopyable_argument(tmp_path):
    """Roots defined in the `__main__` script are wrapped too; a lock argument cannot be deep-copied,
    so the compiled version runs instead of eager, and the program's result is unchanged."""
    findings, expected = marked_findings(SCRIPT)
    out = tmp_path / "total.txt"
    report = verify_report(Report(findings=findings), [SCRIPT], run_cmd=[sys.executable, SCRIPT, "5", str(out)],
                           timeout=120)
    assert _statuses(report) == expected
    assert float(out.read_text()) == 36.0  # 2 calls x sum(ones(3) * 3 * 2.0)
    assert summarize(report)["command"] == "exited with status 5"  # reported, not fatal


def test_command_that_never_calls_the_code(tmp_path):
    findings, _ = marked_findings(SCRIPT)
    report = verify_report(Report(findings=findings), [SCRIPT], run_cmd=[sys.executable, "-c", "print('hi')"])
    assert {f.verification["status"] for f in report.findings} == {"not-reached"}


def test_command_that_hangs_or_does_not_exist():
    findings, _ = marked_findings(SCRIPT)
    report = verify_report(Report(findings=findings), [SCRIPT],
                           run_cmd=[sys.executable, "-c", "import time; time.sleep(60)"], timeout=2)
    assert summarize(report)["command"] == "timed out after 2s"
    assert {f.verification["message"] for f in report.findings} == {"the command timed out after 2s"}
    report = verify_report(Report(findings=findings), [SCRIPT], run_cmd=["/nonexistent/tool", "x"])
    assert summarize(report)["command"].startswith("could not start:")
    assert {f.verification["status"] for f in report.findings} == {"error"}


def test_a_command_that_fails_before_reaching_the_findings_says_why(tmp_path):
    """The tests cannot import the package: the findings read `[error: the command exited with
    status 2]` (not `[not-reached]`) and the command's own output tail is printed."""
    import subprocess

    (tmp_path / "app.py").write_text("import torch\n\n\n@torch.compile\ndef f(x):\n    return x.sum().item()\n")
    fails = f"{sys.executable} -c \"import sys; sys.stderr.write('ImportError: no module named mypkg_zz\\\\n'); sys.exit(2)\""
    r = subprocess.run([sys.executable, "-m", "compilelint", "verify", "app.py", "--isolated", "--no-cache",
                        "--run", fails], cwd=tmp_path, capture_output=True, text=True, timeout=300)
    assert r.returncode == 2, r.stdout + r.stderr
    assert "[error: the command exited with status 2]" in r.stdout, r.stdout
    assert "not-reached" not in r.stdout
    assert "ImportError: no module named mypkg_zz" in r.stderr, r.stderr
