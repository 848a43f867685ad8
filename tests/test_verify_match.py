"""verify's pure parts: Dynamo log parsing, event-to-finding matching, process isolation, summary."""
import os
import sys
import textwrap
import time

import pytest

from compilelint.finding import Finding, Report, Span
from compilelint.verify import VerifyUsageError, summarize, verify_report
from compilelint.verify import events as E
from compilelint.verify import match as M
from compilelint.verify import proc

BREAK_RECORD = """Graph break in user code at {file}:9
Graph Break Reason: Encountered graph break when attempting to trace CALL: a function call, e.g. f(x, y):

Unsupported Tensor.item() call with capture_scalar_outputs=False
  Explanation: Dynamo does not support tracing `Tensor.item()` with config.capture_scalar_outputs=False.
  Hint: Set `torch._dynamo.config.capture_scalar_outputs = True`.

  Developer debug context: call_method TensorVariable() item () {{}}

 For more details about this graph break, please visit: https://meta-pytorch.github.io/compile-graph-break-site/gb/gb0124.html

User code traceback:
  File "/venv/torch/nn/modules/module.py", line 1789, in _call_impl
    return forward_call(*args, **kwargs)
  File "{file}", line 9, in forward
    v = y.sum().item()
"""

INLINE_RECORD = """Graph break in user code at /m.py:4
Graph Break Reason: Data-dependent branching
  Explanation: Detected data-dependent branching (e.g. `if my_tensor.sum() > 0:`).
  Hint: Use `torch.cond` to express dynamic control flow.
"""

SKIP_RECORD = """Graph break in user code at /m.py:12
Graph Break Reason: Failed to handle graph break gracefully. Skipping the function and falling back to eager. Graph break encountered:

Unsupported context manager
  Explanation: Dynamo does not know how to enter a `TextIOWrapper` context manager.
"""

RECOMPILE_RECORD = """Recompiling function torch_dynamo_resume_in_forward_at_9 in /m.py:9
    triggered by the following guard failure(s):
    - 2/0: self.counter == 0                                        # self.counter += 1  # mp/m.py:10 in forward (HINT: torch.compile considers integer attributes of the nn.Module to be static.)
    - User stack trace:
    -   File "/m.py", line 10, in torch_dynamo_resume_in_forward_at_9
    -     self.counter += 1
"""


def test_parse_graph_break_record():
    ev = E.parse_graph_break(BREAK_RECORD.format(file="/m.py"))
    assert ev["event"] == "graph-break" and ev["file"] == "/m.py" and ev["line"] == 9
    assert ev["gb_type"] == "Unsupported Tensor.item() call with capture_scalar_outputs=False"
    assert ev["gb_id"] == "GB0124"
    assert ev["reason"].startswith("Dynamo does not support tracing `Tensor.item()`")
    assert ev["stack"][-1] == ["/m.py", 9, "forward"]


def test_parse_inline_gb_type_and_frame_skip():
    ev = E.parse_graph_break(INLINE_RECORD)
    assert (ev["gb_type"], ev["line"]) == ("Data-dependent branching", 4)
    skip = E.parse_graph_break(SKIP_RECORD)
    assert skip["event"] == "frame-skipped" and skip["gb_type"] == "Unsupported context manager"
    assert E.parse_graph_break("Graph break: from user code at: nothing") is None


def test_parse_recompile_uses_the_user_stack_not_the_truncated_guard_path():
    ev = E.parse_recompile(RECOMPILE_RECORD)
    assert (ev["event"], ev["file"], ev["line"], ev["anchored"]) == ("recompile", "/m.py", 10, True)
    assert ev["reason"] == "guard failed: self.counter == 0" and not ev["input_driven"]
    shape = E.parse_recompile("Recompiling function f in /m.py:3\n    triggered by the following guard failure(s):\n"
                              "    - 0/0: tensor 'x' size mismatch at index 0. expected 2, actual 3\n")
    assert (shape["line"], shape["anchored"], shape["input_driven"]) == (3, False, True)


def test_dedupe_counts_repeats():
    ev = E.parse_graph_break(INLINE_RECORD)
    out = E.dedupe([ev, dict(ev), E.parse_graph_break(SKIP_RECORD)])
    assert [e["count"] for e in out] == [2, 1]
    # the same skip from the metrics names the frame given up on: kept on the one event
    skip = E.parse_graph_break(SKIP_RECORD)
    framed = dict(skip, frame=["/m.py", 3, "torch_dynamo_resume_in_f_at_3"])
    assert E.dedupe([skip, framed])[0]["frame"] == ["/m.py", 3, "torch_dynamo_resume_in_f_at_3"]


def test_one_line_never_a_traceback():
    assert E.one_line(ValueError("bad\n  Traceback (most recent call last):")) == "ValueError: bad"
    assert E.one_line(KeyError()) == "KeyError"


SOURCE = textwrap.dedent("""\
    import torch

    class M(torch.nn.Module):
        def forward(self, x):
            s = f"{x}"
            v = x.sum().item()
            n = len(s)
            return x * v

    def helper(x):
        y = x + 1
        torch._dynamo.graph_break()
        return y
    """)


@pytest.fixture
def src(tmp_path):
    p = tmp_path / "m.py"
    p.write_text(SOURCE)
    return str(p)


def _t(i, code, kind, path, row, gb=()):
    return M.Target(index=i, code=code, kind=kind, file=M.norm(path), row=row, end_row=row, gb_types=gb)


def _ev(kind, path, line, gb_type="", anchored=True):
    return {"event": kind, "file": path, "line": line, "gb_type": gb_type, "anchored": anchored, "stack": [],
            "reason": ""}


def test_match_same_statement_and_missed(src):
    idx = M.FunctionIndex()
    item = _t(0, "CL101", "break", src, 6, ("Unsupported Tensor.item() call with capture_scalar_outputs=False",))
    missed = M.match([item], [_ev("graph-break", src, 6, "Unsupported Tensor.item() call with capture_scalar_outputs=False"),
                              _ev("graph-break", src, 12, "Call to `torch._dynamo.graph_break()`")],
                     {M.norm(src)}, idx)
    assert len(item.events) == 1
    assert [(m["line"], m["gb_type"]) for m in missed] == [(12, "Call to `torch._dynamo.graph_break()`")]


def test_match_use_site_prefers_the_rule_that_lists_the_gb_type(src):
    idx = M.FunctionIndex()
    fstr = _t(0, "CL205", "break", src, 5, ("Observed exception",))
    item = _t(1, "CL101", "break", src, 6, ("Unsupported Tensor.item() call with capture_scalar_outputs=False",))
    M.match([fstr, item], [_ev("graph-break", src, 7, "Observed exception")], {M.norm(src)}, idx)
    assert fstr.events and not item.events


def test_an_event_its_rule_does_not_predict_confirms_nothing(src):
    """torch 2.11: a `copy.deepcopy()` break after a tensor `if` is no proof of the `if`."""
    idx = M.FunctionIndex()
    branch = _t(0, "CL104", "break", src, 5, ("Data-dependent branching", "GB0170"))
    deepcopy = dict(_ev("graph-break", src, 7, "Attempted to call function marked as skipped"), gb_id="GB0007")
    missed = M.match([branch], [deepcopy], {M.norm(src)}, idx)
    assert not branch.events and [m["line"] for m in missed] == [7]


def test_a_registry_id_confirms_when_the_title_differs_between_versions(src):
    idx = M.FunctionIndex()
    branch = _t(0, "CL104", "break", src, 5, ("Data-dependent branching", "GB0170"))
    renamed = dict(_ev("graph-break", src, 5, "Data dependent branching (renamed)"), gb_id="GB0170")
    assert not M.match([branch], [renamed], {M.norm(src)}, idx) and branch.events


def test_match_needs_same_kind_and_same_function(src):
    idx = M.FunctionIndex()
    rec = _t(0, "CL401", "recompile", src, 6)
    brk = _t(1, "CL101", "break", src, 11)
    missed = M.match([rec, brk], [_ev("graph-break", src, 6), _ev("recompile", src, 4, anchored=False)],
                     {M.norm(src)}, idx)
    assert rec.events and rec.events[0]["event"] == "recompile"  # unanchored: any recompile finding of forward
    assert not brk.events and [m["event"] for m in missed] == ["graph-break"]


def test_locate_uses_innermost_checked_frame(src):
    ev = _ev("graph-break", "/venv/lib/torch/foo.py", 100)
    ev["stack"] = [[src, 6, "forward"], ["/venv/lib/torch/foo.py", 100, "op"]]
    assert M.locate(ev, {M.norm(src)}) == (M.norm(src), 6)
    assert M.locate(_ev("graph-break", "/elsewhere.py", 3), {M.norm(src)}) is None


def test_function_index_nested_and_decorated(tmp_path):
    p = tmp_path / "n.py"
    p.write_text("import functools\n\n@functools.lru_cache\ndef outer(x):\n    def inner(y):\n        return y\n"
                 "    return inner(x)\n")
    idx = M.FunctionIndex()
    assert idx.innermost(str(p), 3).qualname == "outer"
    assert idx.innermost(str(p), 6).qualname == "outer.<locals>.inner"
    assert idx.innermost(str(p), 1) is None


@pytest.mark.parametrize("code, expect", [
    ("import time; time.sleep(30)", "timed out after 1.5s"),
    ("import os; os._exit(3)", "exited with status 3"),
    ("import ctypes; ctypes.string_at(0)", "crashed with signal SIGSEGV"),
    ("x = [b'x' * 2**26 for _ in range(100)]", "killed after using more than 300 MiB of memory"),
    ("print('fine')", ""),
])
def test_proc_isolation(code, expect):
    out = proc.run([sys.executable, "-c", code], env=dict(os.environ), cwd=os.getcwd(), timeout=1.5,
                   memory_limit_mb=300)
    assert out.failure(1.5, 300) == expect


def test_proc_timeout_kills_the_whole_group(tmp_path):
    marker = tmp_path / "alive"
    script = tmp_path / "spawn.py"
    script.write_text(textwrap.dedent(f"""\
        import subprocess, sys, time
        subprocess.Popen([sys.executable, "-c", "import time; time.sleep(2.5); open({str(marker)!r}, 'w')"])
        time.sleep(30)
        """))
    out = proc.run([sys.executable, str(script)], env=dict(os.environ), cwd=os.getcwd(), timeout=1.0,
                   memory_limit_mb=0)
    assert out.timed_out
    time.sleep(2.5)
    assert not marker.exists()  # the grandchild died with the group


def test_usage_errors_are_one_line():
    with pytest.raises(VerifyUsageError, match="exactly one of"):
        verify_report(Report(), ["x.py"])
    with pytest.raises(VerifyUsageError, match="MODULE_OR_FILE:FACTORY"):
        verify_report(Report(), ["x.py"], example="nofactory")
    with pytest.raises(VerifyUsageError, match="unknown device"):
        verify_report(Report(), ["x.py"], example="m.py:f", device="tpu")


def test_summarize_counts_statuses():
    def f(status):
        return Finding(code="CL101", name="n", message="m", path="p.py", span=Span(1, 1, 1, 2), function="f",
                       verification={"status": status})
    r = Report(findings=[f("confirmed"), f("confirmed"), f("missed"), f("not-reached"), f("error")])
    r.verify = {"command": "exited with status 1"}
    s = summarize(r)
    assert (s["confirmed"], s["missed"], s["not-reached"], s["error"], s["not-reproduced"]) == (2, 1, 1, 1, 0)
    assert s["command"] == "exited with status 1"


CLAMP = textwrap.dedent("""\
    def clamp(x, fp16):
        if fp16 and not (x > 0):
            return 0
        return x
    """)


@pytest.mark.skipif(sys.version_info < (3, 11), reason="instruction positions (co_positions) need Python 3.11")
def test_tracer_records_where_instructions_start_on_the_finding_rows(tmp_path):
    from compilelint.verify.trace import LineTracer

    path = tmp_path / "clamp_mod.py"
    path.write_text(CLAMP)
    sys.path.insert(0, str(tmp_path))
    try:
        import clamp_mod
    finally:
        sys.path.remove(str(tmp_path))
    starts = {}
    for fp16 in (False, True):
        tracer = LineTracer([str(path)], {str(path): [2]})
        with tracer:
            clamp_mod.clamp(1, fp16)
        assert tracer.as_json()[os.path.realpath(path)] == [1, 2, 4]
        starts[fp16] = {tuple(s) for s in tracer.columns_json()[os.path.realpath(path)]}
    operand = CLAMP.splitlines()[1].index("x > 0")
    assert all(line == 2 for line, _ in starts[True] | starts[False])  # only the asked-for row
    assert (2, operand) in starts[True] and (2, operand) not in starts[False]
    assert starts[False]  # the row's first operand ran (Python 3.12 once missed a line's instructions)


def test_reached_asks_whether_the_flagged_expression_ran(src):
    line = CLAMP.splitlines()[1]
    col = line.index("(x > 0)") + 1  # 1-based, as findings count
    t = M.Target(index=0, code="CL104", kind="break", file=M.norm(src), row=2, end_row=2, col=col,
                 end_col=col + len("(x > 0)"))
    lines = {M.norm(src): {1, 2, 4}}
    assert M.reached(t, lines)  # lines only: the row ran
    short_circuited = {M.norm(src): {(2, 4), (2, 7)}}
    assert not M.reached(t, lines, short_circuited)
    taken = {M.norm(src): {(2, 4), (2, 7), (2, col)}}
    assert M.reached(t, lines, taken)
    assert M.reached(t, lines, {})  # no column recorded in its file (Python < 3.11): the lines decide


def test_item_on_a_traced_numpy_array_confirms_cl101(src):
    """`np.random.rand(1).item()` (transformers' SpecAugment) breaks as GB0033, not GB0124 (torch 2.13)."""
    from compilelint.rule import registry

    idx = M.FunctionIndex()
    item = _t(0, "CL101", "break", src, 6, tuple(registry()["CL101"].gb_types))
    missed = M.match([item], [dict(_ev("graph-break", src, 6, "Data dependent operator"), gb_id="GB0033")],
                     {M.norm(src)}, idx)
    assert item.events and not missed
