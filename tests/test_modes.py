"""Path conditions: a finding reached only in training (or only in eval) says so, and `--mode`
keeps the findings that can run in that mode (fixtures/modes)."""
import json
import os
import re
import subprocess
import sys

import pytest

from conftest import FIXTURES

MODES = os.path.join(FIXTURES, "modes")
MARK = re.compile(r"#\s*mode:\s*(train|eval|any)\s+(CL\d{3})")


def marked(path):
    with open(path, encoding="utf-8") as fh:
        return {(i, m.group(2)): m.group(1) for i, line in enumerate(fh, 1) for m in [MARK.search(line)] if m}


def check(path, *args):
    proc = subprocess.run([sys.executable, "-m", "compilelint", "check", path, "--no-cache", "--output-format",
                           "json", "--exit-zero", "--isolated", *args], capture_output=True, text=True, check=True)
    return json.loads(proc.stdout)


def flat(findings):
    """The findings with the hidden ones each carries (compilelint.hidden) beside them."""
    return [g for f in findings for g in [f] + f.get("hidden", [])]


def test_each_finding_carries_its_mode():
    path = os.path.join(MODES, "layerdrop.py")
    got = {(f["location"]["row"], f["code"]): (f["region"] or {}).get("mode") for f in flat(check(path))}
    assert got == marked(path)


@pytest.mark.parametrize("mode", ["eval", "train"])
def test_mode_keeps_what_can_run(mode):
    path = os.path.join(MODES, "layerdrop.py")
    want = {k for k, m in marked(path).items() if m in ("any", mode)}
    got = {(f["location"]["row"], f["code"]) for f in flat(check(path, "--mode", mode))}
    assert got == want


def test_the_text_output_names_the_condition():
    path = os.path.join(MODES, "layerdrop.py")
    out = subprocess.run([sys.executable, "-m", "compilelint", "check", path, "--no-cache", "--exit-zero",
                          "--output-format", "full", "--isolated"], capture_output=True, text=True).stdout
    assert "only when self.training" in out and "only when not self.training" in out
    # the plain part of the `if` is named too; the `self.training` part is the mode, said once
    assert "only when self.training and self.layerdrop > 0" in out
    # a flag that holds a tensor only after a training branch: the branch's condition is the note
    assert "only when self.training and self.layerdrop > 0.0" in out


def test_a_break_behind_a_frame_skipping_break_says_so():
    path = os.path.join(MODES, "layerdrop.py")
    hidden = {f["location"]["row"]: (f["region"] or {}).get("hidden_by", 0) for f in flat(check(path))}
    first = next(i for i, line in enumerate(open(path, encoding="utf-8"), 1) if "if not skip_the_layer:" in line
                 and i > 60)
    assert hidden[first] == 0 and hidden[first + 2] == first


def test_a_break_without_a_resume_point_hides_the_later_ones_of_its_function():
    """The second LSTM of a forward is never met: the first one's load breaks and the rest of the
    frame runs eager (CL216 `skips_frame`; measured, fixtures/precision/rnn_frame_skip.py)."""
    path = os.path.join(os.path.dirname(MODES), "precision", "rnn_frame_skip.py")
    first, second = [i for i, line in enumerate(open(path, encoding="utf-8"), 1) if "# expect: CL216" in line]
    hidden = {f["location"]["row"]: (f["region"] or {}).get("hidden_by", 0) for f in flat(check(path))}
    assert hidden == {first: 0, second: first}


def test_a_hidden_break_is_reported_with_the_break_that_hides_it():
    """Dynamo reports one break for the frame, and so does every output: the hidden finding rides
    on the one that hides it (JSON `hidden`, the one-line formats' "hides 1 more break")."""
    path = os.path.join(os.path.dirname(MODES), "precision", "rnn_frame_skip.py")
    first, second = [i for i, line in enumerate(open(path, encoding="utf-8"), 1) if "# expect: CL216" in line]
    found = check(path)
    assert [f["location"]["row"] for f in found] == [first]
    assert [h["location"]["row"] for h in found[0]["hidden"]] == [second]
    text = subprocess.run([sys.executable, "-m", "compilelint", "check", path, "--no-cache", "--exit-zero",
                           "--isolated"], capture_output=True, text=True, check=True).stdout
    assert f"(hides 1 more break of this function: line {second})" in text and "Found 1 error." in text


def test_opt_in_attention_is_followed_only_when_asked():
    """Flash attention's class (a registry's "flash_attention_2" entry) and the branches under
    `is_flash_attention_requested(config)` run only when the user opts in: `--follow-swapped`
    reports them, the class with the opt-in named in its note (fixtures/precision/opt_in_attention.py)."""
    path = os.path.join(os.path.dirname(MODES), "precision", "opt_in_attention.py")
    default = {f["location"]["row"] for f in check(path)}
    followed = {f["location"]["row"]: f["region"]["condition"]
                for f in check(path, "--follow-swapped", "--entry", f"{path}:Model") if f["region"]}
    assert len(default) == 1 and default < set(followed)
    flash_class = next(i for i, line in enumerate(open(path, encoding="utf-8"), 1) if "max_len = int(" in line)
    assert len(set(followed) - default) == 2
    assert followed[flash_class] == 'attn_implementation="flash_attention_2" picks it'


def test_breaks_in_one_loop_are_hidden_behind_the_one_dynamo_meets_first():
    """BigBird's plans: the `if i == 1:` branch breaks on the first iteration, so its `elif`s are
    never traced; an unconditional break after a nested loop hides the one inside it, which the
    first iteration skips (fixtures/precision/loop_first_break.py; truth corpus, torch 2.11)."""
    path = os.path.join(os.path.dirname(MODES), "precision", "loop_first_break.py")
    rows = [(line.split("=")[0].strip(), i) for i, line in enumerate(open(path, encoding="utf-8"), 1)
            if "# expect" in line]
    hidden = {f["location"]["row"]: (f["region"] or {}).get("hidden_by", 0) for f in flat(check(path))}
    (_, first), (_, second), (_, other), (_, counted), (_, current) = rows
    assert hidden[first] == 0 and hidden[second] == first and hidden[other] in (first, second)
    assert hidden[current] == 0 and hidden[counted] == current


def test_a_break_needing_an_optional_argument_hides_nothing_that_does_not_need_it():
    """A loop's break under `if prompt is not None:` is met only on calls that pass `prompt`; the
    early exit after it, on calls with `early_exit` and no prompt: neither hides the other. One
    that needs nothing more than the later one hides it (fixtures/precision/optional_break_hides_nothing.py;
    measured on torch 2.13)."""
    path = os.path.join(os.path.dirname(MODES), "precision", "optional_break_hides_nothing.py")
    rows = [i for i, line in enumerate(open(path, encoding="utf-8"), 1) if "# expect" in line]
    hidden = {f["location"]["row"]: (f["region"] or {}).get("hidden_by", 0) for f in flat(check(path))}
    prompt, early, refine, refine_exit = rows
    assert hidden == {prompt: 0, early: 0, refine: 0, refine_exit: refine}


def test_a_call_in_a_loop_of_a_function_that_always_breaks_hides_the_later_breaks():
    """Dynamo cannot resume inside the loop, so the callee's break skips the caller's frame: the
    caller's break after the call is hidden behind the call's line; outside a loop, or when the
    callee's break needs an argument the call leaves out, nothing is hidden
    (fixtures/precision/callee_break_in_loop.py; measured on torch 2.13)."""
    path = os.path.join(os.path.dirname(MODES), "precision", "callee_break_in_loop.py")
    lines = open(path, encoding="utf-8").read().splitlines()
    call = next(i for i, line in enumerate(lines, 1) if "top = peak(row)" in line)
    masks = [i for i, line in enumerate(lines, 1) if "# expect: CL302" in line]
    hidden = {f["location"]["row"]: (f["region"] or {}).get("hidden_by", 0) for f in flat(check(path))}
    assert [hidden[m] for m in masks] == [call, 0, 0]


def test_a_call_in_a_try_body_of_a_function_that_always_breaks_hides_the_later_breaks():
    """Dynamo cannot resume inside the block a `try` protects, so the callee's break skips the
    caller's frame: the caller's break after the `try` is hidden behind the call's line; a call
    before the `try`, or one whose callee's break needs an argument the call leaves out, hides
    nothing (fixtures/precision/callee_break_in_try.py; measured on torch 2.13)."""
    path = os.path.join(os.path.dirname(MODES), "precision", "callee_break_in_try.py")
    lines = open(path, encoding="utf-8").read().splitlines()
    calls = [i for i, line in enumerate(lines, 1) if "top = peak(x)" in line]
    masks = [i for i, line in enumerate(lines, 1) if "# expect: CL302" in line]
    hidden = {f["location"]["row"]: (f["region"] or {}).get("hidden_by", 0) for f in flat(check(path))}
    assert [hidden[m] for m in masks] == [calls[0], calls[1], 0, 0]


def test_a_break_in_a_try_body_hides_the_later_breaks_of_its_function():
    """Dynamo cannot resume inside the block a `try` protects (an `except` or a `finally`), so it
    skips the frame: the later break is hidden behind the one in the `try`; a break in the `else`
    arm resumes and hides nothing, nor does a `try` in one arm of an `if` hide the other arm
    (fixtures/precision/break_in_try.py; measured on torch 2.13)."""
    path = os.path.join(os.path.dirname(MODES), "precision", "break_in_try.py")
    rows = [i for i, line in enumerate(open(path, encoding="utf-8"), 1) if "# expect" in line]
    hidden = {f["location"]["row"]: (f["region"] or {}).get("hidden_by", 0) for f in flat(check(path))}
    guarded, guarded_mask, cleaned, cleaned_mask, in_else, in_else_mask, arm, other_arm = rows
    assert hidden == {guarded: 0, guarded_mask: guarded, cleaned: 0, cleaned_mask: cleaned,
                      in_else: 0, in_else_mask: 0, arm: 0, other_arm: 0}


def test_a_break_in_a_method_of_an_object_the_frame_builds_hides_the_later_breaks():
    """Dynamo cannot rebuild the bound method of an object built inside the frame to resume after
    the method's break, so it skips the frame: the later break is hidden behind the call; the same
    method of an object handed in resumes (fixtures/precision/built_object_break.py; measured on
    torch 2.13). The method's own break is reached through the built object."""
    path = os.path.join(os.path.dirname(MODES), "precision", "built_object_break.py")
    lines = open(path, encoding="utf-8").read().splitlines()
    row = lambda text: next(i for i, line in enumerate(lines, 1) if text in line)  # noqa: E731
    masks = [i for i, line in enumerate(lines, 1) if "# expect: CL302" in line]
    found = {f["location"]["row"]: f for f in flat(check(path))}
    hidden = {r: (f["region"] or {}).get("hidden_by", 0) for r, f in found.items()}
    assert "box.peak" in found[row("# expect: CL102")]["region"]["reason"]
    assert [hidden[m] for m in masks] == [row("top = box.peak(x)"), row("Box(x).peak(x)"), 0]
