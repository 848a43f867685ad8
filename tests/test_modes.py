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
                           "json", "--exit-zero", *args], capture_output=True, text=True, check=True)
    return json.loads(proc.stdout)


def test_each_finding_carries_its_mode():
    path = os.path.join(MODES, "layerdrop.py")
    got = {(f["location"]["row"], f["code"]): (f["region"] or {}).get("mode") for f in check(path)}
    assert got == marked(path)


@pytest.mark.parametrize("mode", ["eval", "train"])
def test_mode_keeps_what_can_run(mode):
    path = os.path.join(MODES, "layerdrop.py")
    want = {k for k, m in marked(path).items() if m in ("any", mode)}
    got = {(f["location"]["row"], f["code"]) for f in check(path, "--mode", mode)}
    assert got == want


def test_the_text_output_names_the_condition():
    path = os.path.join(MODES, "layerdrop.py")
    out = subprocess.run([sys.executable, "-m", "compilelint", "check", path, "--no-cache", "--exit-zero",
                          "--output-format", "full"], capture_output=True, text=True).stdout
    assert "only when self.training" in out and "only when not self.training" in out
    # the plain part of the `if` is named too; the `self.training` part is the mode, said once
    assert "only when self.training and self.layerdrop > 0" in out
    # a flag that holds a tensor only after a training branch: the branch's condition is the note
    assert "only when self.training and self.layerdrop > 0.0" in out


def test_a_break_behind_a_frame_skipping_break_says_so():
    path = os.path.join(MODES, "layerdrop.py")
    hidden = {f["location"]["row"]: (f["region"] or {}).get("hidden_by", 0) for f in check(path)}
    first = next(i for i, line in enumerate(open(path, encoding="utf-8"), 1) if "if not skip_the_layer:" in line
                 and i > 60)
    assert hidden[first] == 0 and hidden[first + 2] == first


def test_a_break_without_a_resume_point_hides_the_later_ones_of_its_function():
    """The second LSTM of a forward is never met: the first one's load breaks and the rest of the
    frame runs eager (CL216 `skips_frame`; measured, fixtures/precision/rnn_frame_skip.py)."""
    path = os.path.join(os.path.dirname(MODES), "precision", "rnn_frame_skip.py")
    first, second = [i for i, line in enumerate(open(path, encoding="utf-8"), 1) if "# expect: CL216" in line]
    hidden = {f["location"]["row"]: (f["region"] or {}).get("hidden_by", 0) for f in check(path)}
    assert hidden == {first: 0, second: first}


def test_breaks_in_one_loop_are_hidden_behind_the_one_dynamo_meets_first():
    """BigBird's plans: the `if i == 1:` branch breaks on the first iteration, so its `elif`s are
    never traced; an unconditional break after a nested loop hides the one inside it, which the
    first iteration skips (fixtures/precision/loop_first_break.py; truth corpus, torch 2.11)."""
    path = os.path.join(os.path.dirname(MODES), "precision", "loop_first_break.py")
    rows = [(line.split("=")[0].strip(), i) for i, line in enumerate(open(path, encoding="utf-8"), 1)
            if "# expect" in line]
    hidden = {f["location"]["row"]: (f["region"] or {}).get("hidden_by", 0) for f in check(path)}
    (_, first), (_, second), (_, other), (_, counted), (_, current) = rows
    assert hidden[first] == 0 and hidden[second] == first and hidden[other] in (first, second)
    assert hidden[current] == 0 and hidden[counted] == current
