"""The truth scorer (bench/truth/score.py) counts what its docstring says, on three small models."""
import importlib.util
import json
import os

from conftest import FIXTURES, ROOT

TRUTH = os.path.join(FIXTURES, "truth")


def _score_module():
    spec = importlib.util.spec_from_file_location("truth_score", os.path.join(ROOT, "bench", "truth", "score.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    module.ROOT["dir"] = TRUTH
    return module


def _finding(line, code="CL101", mode=None, root="minipkg/models.py:M.forward"):
    region = {"root": root, "reason": "M.forward"}
    if mode:
        region["mode"] = mode
    return {"filename": "minipkg/models.py", "location": {"row": line, "column": 1}, "code": code,
            "gb_type": "recompile" if code.startswith("CL4") else "x", "region": region}


def _model(eval_events=(), train_events=()):
    return {"name": "m", "eval": {"events": list(eval_events)}, "train": {"events": list(train_events)}}


def _break(line, event="graph-break"):
    return {"event": event, "file": "minipkg/models.py", "line": line}


def test_a_finding_within_two_lines_of_a_break_is_true_and_finds_the_site():
    score = _score_module()
    s = score.score_model(_model([_break(13)]), [_finding(15)])
    assert s["break_found"] == [("minipkg/models.py", 13)]
    assert [ok for _, ok in s["findings"]] == [True]
    s = score.score_model(_model([_break(13)]), [_finding(16)])
    assert s["break_found"] == [] and [ok for _, ok in s["findings"]] == [False]


def test_a_finding_is_judged_in_the_mode_it_claims():
    score = _score_module()
    only_train = _model(train_events=[_break(13)])
    assert [ok for _, ok in score.score_model(only_train, [_finding(13, mode="eval")])["findings"]] == [False]
    assert [ok for _, ok in score.score_model(only_train, [_finding(13, mode="train")])["findings"]] == [True]
    assert [ok for _, ok in score.score_model(only_train, [_finding(13)])["findings"]] == [True]
    # a train-only finding raises no alarm on a model that is clean in eval
    assert score.score_model(only_train, [_finding(13, mode="train")])["alarm_eval"] is False
    # a finding claiming both modes is judged on each run: true in train, false in eval
    total = score.totals([score.score_model(only_train, [_finding(13)])])
    assert (total["eval_precision"], total["train_precision"], total["finding_precision"]) == (0.0, 100.0, 100.0)


def test_recompile_findings_need_recompile_sites_and_usage_findings_are_not_claims():
    score = _score_module()
    m = _model([_break(13), {"event": "recompile", "file": "minipkg/models.py", "line": 20}])
    s = score.score_model(m, [_finding(13, code="CL401"), _finding(20, code="CL401"), _finding(30, root="")])
    assert [ok for _, ok in s["findings"]] == [False, True]
    assert s["recompile_found"] == [("minipkg/models.py", 20)]


def test_a_recompile_rule_counts_as_recompile_in_checks_own_json():
    score = _score_module()
    m = _model([{"event": "recompile", "file": "minipkg/models.py", "line": 20}])
    as_check_writes_it = dict(_finding(20, code="CL407"), gb_type="")  # no kind, no gb_type
    s = score.score_model(m, [as_check_writes_it])
    assert [ok for _, ok in s["findings"]] == [True] and s["recompile_found"] == [("minipkg/models.py", 20)]


def test_three_models_end_to_end_through_compilelint_check():
    score = _score_module()
    with open(os.path.join(TRUTH, "truth.json"), encoding="utf-8") as f:
        doc = json.load(f)
    models = [m for m in doc["models"] if m["status"] == "ok"]
    scored = [score.score_model(m, score.check("minipkg", m, TRUTH, ["--no-cache"])) for m in models]
    by_name = {s["name"]: s for s in scored}
    assert by_name["clean"]["findings"] == [] and by_name["clean"]["clean_eval"]
    assert by_name["scalar"]["break_found"] == [("minipkg/models.py", 13)]
    # the skipped frame is reported at `def helper`; the print inside it is the finding
    assert by_name["skipped"]["break_found"] == [("minipkg/models.py", 22)]
    total = score.totals(scored)
    assert total["break_sites"] == 2 and total["break_site_recall"] == 100.0
    assert total["recompile_sites"] == 1 and total["recompile_site_recall"] == 0.0
    assert total["finding_precision"] == 100.0
    assert total["clean_models"] == 1 and total["clean_model_alarm_rate"] == 0.0
    assert total["model_accuracy"] == 100.0


def _lines(eval_lines=(), train_lines=(), train_error=""):
    record = lambda ls, err="": {"error": err, "lines": {"minipkg/models.py": list(ls)}}  # noqa: E731
    return {"eval": record(eval_lines), "train": record(train_lines, train_error)}


def test_a_finding_on_a_line_the_run_never_executed_is_unexercised_not_false():
    score = _score_module()
    clean = _model()
    ran = score.score_model(clean, [_finding(30)], _lines(eval_lines=[30], train_lines=[30]))
    never = score.score_model(clean, [_finding(30)], _lines(eval_lines=[29, 31], train_lines=[29]))
    assert [ok for _, ok in ran["findings"]] == [False]
    assert [ok for _, ok in never["findings"]] == [None]
    total = score.totals([ran, never])
    assert (total["findings"], total["judged_findings"], total["unexercised_findings"]) == (2, 1, 1)
    assert total["finding_precision"] == 0.0 and total["judged_precision"] == 0.0
    # the literal alarm rate counts both clean models, the judged one only the exercised finding
    assert total["clean_model_alarm_rate"] == 100.0 and total["clean_model_judged_alarm_rate"] == 50.0


def test_a_mode_whose_eager_run_raised_neither_gives_sites_nor_judges():
    score = _score_module()
    m = _model(train_events=[_break(13)])
    s = score.score_model(m, [_finding(13)], _lines(eval_lines=[13], train_lines=[13], train_error="ValueError: x"))
    assert s["break_sites"] == [] and [ok for _, ok in s["findings"]] == [False]


def test_columns_say_whether_the_flagged_operand_itself_ran():
    score = _score_module()
    # `if x.dtype == torch.float16 and not torch.isfinite(x).all():` with the finding on the operand
    finding = dict(_finding(30), location={"row": 30, "column": 45}, end_location={"row": 30, "column": 70})
    line_ran = {"error": "", "lines": {"minipkg/models.py": [30]}, "columns": {"minipkg/models.py": {"30": [11, 20]}}}
    operand_ran = dict(line_ran, columns={"minipkg/models.py": {"30": [11, 20, 44]}})
    skipped = score.score_model(_model(), [finding], {"eval": line_ran, "train": line_ran})
    evaluated = score.score_model(_model(), [finding], {"eval": operand_ran, "train": operand_ran})
    assert [ok for _, ok in skipped["findings"]] == [None]
    assert [ok for _, ok in evaluated["findings"]] == [False]
