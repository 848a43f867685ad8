"""The truth scorer (bench/truth/score.py) counts what its docstring says, on three small models."""
import importlib.util
import json
import os

import pytest

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


@pytest.mark.slow
def test_three_models_end_to_end_through_compilelint_check():
    score = _score_module()
    with open(os.path.join(TRUTH, "truth.json"), encoding="utf-8") as f:
        doc = json.load(f)
    models = [m for m in doc["models"] if m["status"] == "ok"]
    # --isolated: minipkg is a site-packages folder of its own, not a file of this repository's project
    scored = [score.score_model(m, score.check("minipkg", m, TRUTH, ["--no-cache", "--isolated"])) for m in models]
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


def test_a_line_after_a_break_dynamo_cannot_resume_after_is_untested_in_that_run():
    """An RNN submodule's load breaks with no point to resume at (CL216 `skips_frame`): the rest
    of the function ran eager, so Dynamo said nothing of line 33 (`long_helper`'s return, past the
    break's own ±2 lines) in that run."""
    score = _score_module()
    rnn = {**_break(29), "gb_type": "Attempted to wrap RNN, GRU, or LSTM"}
    other = {**_break(29), "gb_type": "Unsupported Tensor.item() call with capture_scalar_outputs=False"}
    verdict = lambda events, finding: [ok for _, ok in score.score_model(_model(events, events), [finding])["findings"]]  # noqa: E731
    assert verdict([rnn], _finding(33, code="CL201")) == [None]
    assert verdict([other], _finding(33, code="CL201")) == [False]
    # in one mode only: the other mode's run judges it
    assert [ok for _, ok in score.score_model(_model([rnn], []), [_finding(33, code="CL201")])["findings"]] == [False]
    # a finding within the break's ±2 lines, or outside its function, is judged as before
    assert verdict([rnn], _finding(31)) == [True]
    assert verdict([rnn], _finding(13)) == [False]


def test_a_line_only_a_frame_dynamo_skipped_ran_judges_nothing():
    """A graph break in a loop makes Dynamo give up on the frame (the compilation metrics name its
    code: child.py's `frame`); a resumed part of a function (`torch_dynamo_resume_in_<f>_at_<n>`)
    covers the function's lines after the resume line, a plain frame the whole function. Those
    lines ran eager: a finding there is unexercised in that run, unless Dynamo reported a site near
    it."""
    score = _score_module()
    verdict = lambda events, finding: [ok for _, ok in score.score_model(_model(events, events), [finding])["findings"]]  # noqa: E731
    elsewhere = {**_break(13), "event": "frame-skipped"}  # the break in the loop, in another function
    resumed = {**elsewhere, "frame": ["minipkg/models.py", 30, "torch_dynamo_resume_in_long_helper_at_30"]}
    assert verdict([elsewhere], _finding(32)) == [False]  # no frame recorded: judged as before
    assert verdict([resumed], _finding(32)) == [None]
    assert verdict([resumed], _finding(29)) == [False]  # before the resume line: the frame that broke there
    plain = {**elsewhere, "frame": ["minipkg/models.py", 22, "helper"]}
    assert verdict([plain], _finding(24)) == [None]
    assert verdict([plain, _break(24)], _finding(24)) == [True]
    # in one mode only: the other mode's run judges it
    assert [ok for _, ok in score.score_model(_model([plain], []), [_finding(24)])["findings"]] == [False]


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


def _variant(name, eval_events=(), train_events=()):
    return dict(_model(eval_events, train_events), variant=name)


def test_variant_runs_judge_what_the_default_run_never_executed():
    score = _score_module()
    default_lines = _lines(eval_lines=[10], train_lines=[10])  # the default run never reaches 30 or 40
    breaks_at_30 = (_variant("fp16", [_break(30)], [_break(30)]), _lines(eval_lines=[30, 40], train_lines=[30, 40]))
    quiet = (_variant("padded"), _lines(eval_lines=[30], train_lines=[30]))
    findings = [_finding(30), _finding(40), _finding(50)]
    alone = score.score_model(_model(), findings, default_lines)
    assert [ok for _, ok in alone["findings"]] == [None, None, None] and "variant_runs" not in alone
    s = score.score_model(_model(), findings, default_lines, [breaks_at_30, quiet])
    # 30: executed by both variants, one breaks there -> true; 40: executed, no run breaks -> false;
    # 50: no run executed it -> unexercised
    assert [ok for _, ok in s["findings"]] == [True, False, None]
    assert s["judged_by"] == [["fp16", "padded"], ["fp16"], []]
    assert s["variant_runs"] == ["fp16", "padded"] and s["judged_by_variants"] == 2
    # the variants' sites are not the model's sites: recall and the clean-model figures stay the default run's
    assert s["break_sites"] == [] and s["clean_eval"] and s["alarm_eval_judged"] is False
    total = score.totals([s])
    assert (total["judged_findings"], total["unexercised_findings"], total["true_findings"]) == (2, 1, 1)
    assert (total["variant_runs"], total["judged_by_variants"]) == (2, 2)
    assert "variant_runs" not in score.totals([alone])


def test_a_variant_that_executed_a_finding_judges_it_in_its_modes_only():
    score = _score_module()
    default_lines = _lines(eval_lines=[30], train_lines=[10])  # eval ran 30 without a break
    train_variant = (_variant("layerdrop", train_events=[_break(30)]), _lines(eval_lines=[10], train_lines=[30]))
    s = score.score_model(_model(), [_finding(30)], default_lines, [train_variant])
    assert s["per_mode"] == {"eval": [False], "train": [True]} and [ok for _, ok in s["findings"]] == [True]
    # a variant whose train run raised is no judge there; one without a lines record is no judge at all
    raised = (_variant("fp16", train_events=[_break(30)]), _lines(train_lines=[30], train_error="RuntimeError: x"))
    unrecorded = (_variant("long", train_events=[_break(30)]), None)
    s = score.score_model(_model(), [_finding(30, mode="train")], default_lines, [raised, unrecorded])
    assert [ok for _, ok in s["findings"]] == [None] and s["variant_runs"] == ["fp16"]


def test_variants_files_are_read_beside_the_truth_file(tmp_path):
    import gzip

    score = _score_module()
    truth = tmp_path / "lib-1.0-torch2.11.json"
    truth.write_text("{}")
    assert score.load_variants(str(truth)) == {}
    record = dict(_variant("fp16"), status="ok")
    (tmp_path / "lib-1.0-torch2.11.variants.json").write_text(
        json.dumps({"models": [record, dict(_variant("long"), status="eager-error")]}))
    with gzip.open(tmp_path / "lib-1.0-torch2.11.variants.lines.json.gz", "wt") as f:
        json.dump({"models": [dict(_lines(eval_lines=[30]), name="m", variant="fp16", status="ok")]}, f)
    loaded = score.load_variants(str(truth))
    assert list(loaded) == ["m"] and len(loaded["m"]) == 1
    rec, lines = loaded["m"][0]
    assert rec["variant"] == "fp16" and lines["eval"]["lines"] == {"minipkg/models.py": [30]}


def test_a_class_is_clean_when_no_run_of_its_models_breaks_in_eval_default_or_variant():
    score = _score_module()

    def model(name, cls, eval_events=()):
        return dict(_model(eval_events), name=name, file="minipkg/models.py", **{"class": cls})

    option = [_finding(30)]  # a claim on an option every default model leaves off
    looped = (_variant("looped", [_break(30)]), None)  # the option on: it breaks (no lines record: still a run)
    scored = [score.score_model(model("a1", "A"), option, None, [looped]),
              score.score_model(model("a2", "A"), option),
              score.score_model(model("b1", "B"), option),
              score.score_model(model("c1", "C"), []),
              score.score_model(model("d1", "D", [_break(12)]), option),
              score.score_model(model("e1", "E"), option, None, [(_variant("train_only", train_events=[_break(30)]), None)])]
    total = score.totals(scored)
    # the model-level figures are unchanged: five clean models, four of them alarmed
    assert (total["clean_models"], total["clean_models_alarmed"]) == (5, 4)
    # A breaks in its variant, D in its default run: not clean; B, C and E are (E breaks in train only)
    assert (total["clean_classes"], total["clean_classes_alarmed"], total["clean_class_alarm_rate"]) == (3, 2, 66.7)
    # a train-only finding alarms no class
    train_claim = [_finding(30, mode="train")]
    only = score.totals([score.score_model(model("b1", "B"), train_claim)])
    assert (only["clean_classes"], only["clean_classes_alarmed"]) == (1, 0)


def test_a_run_whose_compile_raised_shows_true_sites_but_no_line_clean():
    """Dynamo stopped early (a RecursionError while tracing): the lines the eager run executed past
    that point were never traced, so they are no evidence of a clean line; sites it reported stand."""
    score = _score_module()
    failed = {"name": "m", "eval": {"events": [_break(13)], "error": "RecursionError: maximum recursion depth"},
              "train": {"events": []}}
    ran = _lines(eval_lines=[13, 30], train_lines=[])
    s = score.score_model(failed, [_finding(13, mode="eval"), _finding(30, mode="eval")], ran)
    assert [ok for _, ok in s["findings"]] == [True, None]
    compiled = {"name": "m", "eval": {"events": [_break(13)]}, "train": {"events": []}}
    s = score.score_model(compiled, [_finding(13, mode="eval"), _finding(30, mode="eval")], ran)
    assert [ok for _, ok in s["findings"]] == [True, False]


def _of_class(name, cls, eval_events=(), train_events=()):
    return dict(_model(eval_events, train_events), name=name, file="minipkg/models.py", **{"class": cls})


def test_per_class_a_finding_counts_once_judged_by_every_run_of_its_class():
    """`check --entry file:Class` claims the same findings for every model of a class: per class, a
    finding counts once, true if some model's run that executed it broke there, false if runs of the
    class executed it and none broke, unexercised only if no model of the class executed it."""
    score = _score_module()
    findings = [_finding(30), dict(_finding(30), location={"row": 30, "column": 9}), _finding(40), _finding(50)]
    a = (_of_class("a", "M", [_break(30)]), findings, _lines(eval_lines=[30], train_lines=[30]), ())
    b = (_of_class("b", "M", [_break(45)]), findings, _lines(eval_lines=[40], train_lines=[40]), ())
    other = (_of_class("c", "N", [_break(50)]), [_finding(50)], _lines(eval_lines=[50], train_lines=[50]), ())
    # per model: each model judges only by its own run, the duplicate counted twice
    per_model = [score.score_model(*member) for member in (a, b)]
    assert [[ok for _, ok in s["findings"]] for s in per_model] == [[True, True, None, None], [None, None, False, None]]
    classes = score.score_classes([a, b, other])
    assert [(c["entry"], c["models"]) for c in classes] == [("minipkg/models.py:M", ["a", "b"]),
                                                           ("minipkg/models.py:N", ["c"])]
    m = classes[0]
    # c's break at 50 judges nothing of M: another class
    assert [(line, ok, by) for _, line, _, ok, _, by in m["findings"]] == [(30, True, ["a"]), (40, False, ["b"]),
                                                                          (50, None, [])]
    assert m["break_sites"] == [("minipkg/models.py", 30), ("minipkg/models.py", 45)]
    assert m["break_found"] == [("minipkg/models.py", 30)]
    total = score.class_totals(classes)
    assert (total["classes"], total["class_findings"], total["class_true_findings"]) == (2, 4, 2)
    assert (total["class_judged_findings"], total["class_unexercised_findings"]) == (3, 1)
    assert (total["class_finding_precision"], total["class_judged_precision"]) == (50.0, 66.7)
    assert (total["class_break_sites"], total["class_break_sites_found"], total["class_break_site_recall"]) == (3, 2, 66.7)
    # SCORE.md's per-class list: the false and unexercised claims, counted in classes
    assert score.worst_classes(classes) == ([(("minipkg/models.py", 40, "CL101"), 1)],
                                            [(("minipkg/models.py", 50, "CL101"), 1)])
    # the per-model figures are those of score_model, untouched: 8 findings, 2 true
    assert (score.totals(per_model)["findings"], score.totals(per_model)["true_findings"]) == (8, 2)


def test_per_class_judging_keeps_the_frame_skip_rule_and_takes_every_variant():
    """A line after a break Dynamo cannot resume after is untested in that run, also per class; a
    variant of any model of the class judges the class's findings (with its own lines record), and
    its sites are the class's sites."""
    score = _score_module()
    rnn = {**_break(29), "gb_type": "Attempted to wrap RNN, GRU, or LSTM"}
    ran_33 = _lines(eval_lines=[33], train_lines=[33])
    findings = [_finding(33, code="CL201"), _finding(50)]
    skipped = (_of_class("a", "M", [rnn], [rnn]), findings, ran_33, ())
    assert [c[3] for c in score.score_classes([skipped])[0]["findings"]] == [None, None]
    looped = (_variant("looped", [_break(50)]), _lines(eval_lines=[50]))
    unrecorded = (_variant("long", [_break(60)]), None)  # no lines record: judges nothing, its site counts
    plain = (_of_class("b", "M"), findings, _lines(eval_lines=[33], train_lines=[33]), [looped, unrecorded])
    m = score.score_classes([skipped, plain])[0]
    assert [(ok, by) for *_, ok, _, by in m["findings"]] == [(False, ["b"]), (True, ["b:looped"])]
    assert m["runs"] == ["a", "b", "b:looped"]
    assert m["break_sites"] == [("minipkg/models.py", 29), ("minipkg/models.py", 50), ("minipkg/models.py", 60)]
    assert m["break_found"] == [("minipkg/models.py", 50)]
    # on the default runs only (the per-model definition of a site): 29, not found
    assert (m["default_break_sites"], m["default_break_found"]) == ([("minipkg/models.py", 29)], [])
    total = score.class_totals([m])
    assert (total["class_break_site_recall"], total["class_default_break_site_recall"]) == (33.3, 0.0)


def test_a_recompile_named_only_at_a_wrappers_frame_is_found_by_the_store_its_guard_reads():
    # the compilation metrics name the recompiled frame (the decorator's wrapper, its `def` line) and
    # the failing guard `args[0]._modules['window'].kernel`: the statement storing `self.kernel` caused it
    score = _score_module()
    guard = "guard failed: 0/0: tensor 'args[0]._modules['window'].kernel' rank mismatch. expected 2, actual 3"
    wrapper = {"event": "recompile", "file": "minipkg/models.py", "line": 37, "reason": guard}
    s = score.score_model(_model([wrapper]), [_finding(52, code="CL407"), _finding(55, code="CL407")])
    assert [ok for _, ok in s["findings"]] == [True, False]  # `self.calls` is no guard that failed
    assert s["recompile_found"] == [("minipkg/models.py", 37)]
    on_a_line = dict(wrapper, line=38)  # a guard placed at a user line is judged by ±2 lines only
    s = score.score_model(_model([on_a_line]), [_finding(52, code="CL407")])
    assert [ok for _, ok in s["findings"]] == [False] and s["recompile_found"] == []
    on_an_input = dict(wrapper, reason="guard failed: 0/0: tensor 'x' rank mismatch. expected 2, actual 3")
    s = score.score_model(_model([on_an_input]), [_finding(52, code="CL407")])
    assert [ok for _, ok in s["findings"]] == [False]
    assert score.guarded_attribute("guard failed: self._modules['conv'].dilation == (2,)") == "dilation"
    assert score.guarded_attribute("___check_obj_id(L['self'].first_call, 94)") == "first_call"
    on_2_13 = "guard failed: 0/0: tensor 'args[0].__dict__['_modules']['window'].kernel' rank mismatch. expected 2"
    assert score.guarded_attribute(on_2_13) == "kernel"


def test_a_skip_reported_in_a_loop_without_its_frame_leaves_the_rest_of_the_function_untraced():
    """A record that names no frame (the log's report of a skip): a skip inside a loop of its function
    means Dynamo cannot resume there, so the lines after it in that function ran eager."""
    score = _score_module()
    skip = {**_break(63, event="frame-skipped"), "gb_type": "Attempted to call function marked as skipped"}
    verdict = lambda events, finding: [ok for _, ok in score.score_model(_model(events, events), [finding])["findings"]]  # noqa: E731
    assert verdict([skip], _finding(67, code="CL201")) == [None]  # after the skip, in the loop
    assert verdict([skip], _finding(65)) == [True]  # the skip's own ±2 lines
    assert verdict([{**_break(63), "gb_type": skip["gb_type"]}], _finding(67, code="CL201")) == [False]  # a break resumes
    outside = {**_break(29, event="frame-skipped"), "gb_type": skip["gb_type"]}  # long_helper has no loop
    assert verdict([outside], _finding(33, code="CL201")) == [False]
