"""`verify --fix` output: JSON and SARIF carry each fix's verdict (the proof itself is a test double
here: tests/test_verify_fix.py runs real proofs)."""
import json

import pytest
from click.testing import CliRunner

from compilelint import cli
from compilelint.finding import Finding, Fix, Span, Edit
from compilelint.verify import fixproof
from compilelint.verify.fix_judge import FixResult


def _finding(path):
    edit = Edit(span=Span(2, 5, 2, 20), content="torch._assert_async(x)")
    return Finding(code="CL101", name="item", message="`.item()` breaks", path=str(path), span=Span(2, 12, 2, 20),
                   function="f", fix=Fix(applicability="unsafe", message="assert async", edits=(edit,)))


@pytest.fixture
def proof(tmp_path, monkeypatch):
    path = tmp_path / "m.py"
    path.write_text("def f(x):\n    assert x.item() < 1\n    return x\n")
    finding = _finding(path)
    result = FixResult(finding, "proven", before=1, after=0,
                        outputs=[("#0 eval", {"eager": {"equal": "bitwise"}, "compiled": {"equal": "bitwise"}})])
    monkeypatch.setattr(fixproof, "prove_fixes", lambda report, paths, **kw: fixproof.Proof([result], 3, 2))
    monkeypatch.setattr("compilelint.engine.check_paths", lambda paths, settings: __import__(
        "compilelint.finding", fromlist=["Report"]).Report(findings=[finding]))
    monkeypatch.chdir(tmp_path)
    return path


@pytest.mark.parametrize("fmt", ["json", "sarif"])
def test_fix_proof_in_json_and_sarif(proof, fmt):
    r = CliRunner().invoke(cli.main, ["verify", "m.py", "--example", "m.py:make", "--fix", "--unsafe-fixes",
                                      "--isolated", "--output-format", fmt])
    data = json.loads(r.output)  # JSON, not the text verdicts
    if fmt == "json":
        [item] = data["fixes"]
        assert (item["code"], item["location"]["row"]) == ("CL101", 2)
        assert item["fix_proof"]["status"] == "proven" and item["fix_proof"]["breaks"] == [1, 0]
        assert (data["breaks_before"], data["breaks_after"]) == (3, 2)
    else:
        [result] = data["runs"][0]["results"]
        assert result["properties"]["fix_proof"]["status"] == "proven"
    assert r.exit_code == 0


def test_a_changed_output_says_which_run_and_by_how_much(tmp_path):
    """`changed-output` alone leaves the user guessing whether it is rounding or a wrong rewrite:
    the verdict carries the run, the side and the largest difference against the tolerance."""
    from compilelint.finding import Report
    from compilelint.verify.fix_judge import _judge
    from compilelint.verify.prove import TargetRun

    path = tmp_path / "m.py"
    path.write_text("def f(x):\n    assert x.item() < 1\n    return x\n")
    finding = _finding(path)
    reached = {str(path): {2}}
    before = {(0, "eval"): TargetRun(index=0, mode="eval", events=[], reached=reached)}
    differs = {"equal": "differs", "what": "out", "max_abs": 3.1e-05, "rtol": 1.3e-06, "atol": 1e-05}
    after = {(0, "eval"): TargetRun(index=0, mode="eval", events=[], reached=reached,
                                    compare={"eager": {"equal": "allclose", "max_abs": 2e-6, "rtol": 1.3e-06,
                                                       "atol": 1e-05}, "compiled": differs})}
    [r] = _judge(Report(findings=[finding]), [finding], [finding], {}, before, after, [str(path)])
    assert r.status == "changed-output"
    assert r.message == "#0 eval compiled: differs (out, max |Δ| 3.1e-05, rtol 1.3e-06, atol 1e-05)"
