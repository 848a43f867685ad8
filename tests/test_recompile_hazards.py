"""The five recompile hazards of issue 14: `check` flags each in fixtures/verify/recompiles.py and
`verify --example` confirms each with a real recompile on torch (CPU, backend eager)."""
import os

import pytest

from compilelint.config import Settings
from compilelint.verify.match import FunctionIndex, Target, match
from compilelint.verify.varying import Varying, args_at, call_count

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
FIXTURE = os.path.join(ROOT, "fixtures", "verify", "recompiles.py")
HAZARDS = {"CL404", "CL407", "CL408", "CL409", "CL410"}


def test_varying_arguments_take_turns():
    v = Varying((1, "a"), (2, "b"))
    assert [args_at(v, i) for i in range(3)] == [(1, "a"), (2, "b"), (1, "a")]
    assert args_at((5,), 7) == (5,)
    assert call_count(v, 3) == 3 and call_count(Varying(*[(i,) for i in range(5)]), 3) == 5
    assert v.map(lambda c: c[:1]).calls == [(1,), (2,)]
    with pytest.raises(ValueError):
        Varying()


def test_zero_one_recompile_confirms_the_mark_dynamic_call(tmp_path):
    src = tmp_path / "m.py"
    src.write_text("def f(x):\n    return x * 2\n\ndef make(t):\n    mark_dynamic(t, 0)\n")
    mark = Target(0, "CL409", "recompile", str(src), 5, 5)
    ev = {"event": "recompile", "file": str(src), "line": 2, "anchored": True, "gb_type": "", "input_driven": False,
          "reason": "guard failed: 0/0: 2 <= x.size()[0]  # return x * 2 (... due to 0/1 specialization in the "
                    "framework; to avoid specialization try torch._dynamo.decorators.mark_unbacked(tensor, dim))"}
    assert match([mark], [ev], {str(src)}, FunctionIndex()) == [] and mark.events == [ev]
    other = dict(ev, reason="guard failed: self.n == 1")
    mark.events.clear()
    assert match([mark], [other], {str(src)}, FunctionIndex()) == [other]


def test_check_flags_every_hazard():
    from compilelint.engine import check_paths

    report = check_paths([FIXTURE], Settings(select=sorted(HAZARDS), cache=False, named_alone=True))
    assert {f.code for f in report.findings} == HAZARDS
    with open(FIXTURE, encoding="utf-8") as f:
        marked = {i for i, line in enumerate(f, 1) if "# CL4" in line}
    assert {f.span.row for f in report.findings} == marked


@pytest.mark.slow
def test_verify_confirms_every_hazard():
    pytest.importorskip("torch")
    from compilelint.verify import run_verify

    report = run_verify([FIXTURE], settings=Settings(select=sorted(HAZARDS), cache=False, named_alone=True),
                        example=f"{FIXTURE}:make", device="cpu", timeout=240)
    status = {(f.code, f.span.row): f.verification["status"] for f in report.findings}
    assert status and set(status.values()) == {"confirmed"}, status
    assert {code for code, _ in status} == HAZARDS
