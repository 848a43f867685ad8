"""Branches taken only when a caller misuses an argument (a deprecated one, or keywords the callee
ignores) are not followed by default; `--follow-misuse` reports what they hold, saying the
condition (fixtures/modes/misuse.py)."""
import ast
import os
import re

import pytest

from compilelint.analysis.misuse import NOTE, misuse_branch
from compilelint.config import Settings, settings_for
from compilelint.engine import check_paths

from conftest import FIXTURES

PATH = os.path.join(FIXTURES, "modes", "misuse.py")
MARK = re.compile(r"#\s*(misuse|expect):\s*(CL\d{3})")


def marked(kind):
    with open(PATH, encoding="utf-8") as fh:
        return {(i, m.group(2)) for i, line in enumerate(fh, 1) for m in [MARK.search(line)] if m and m.group(1) == kind}


def findings(**settings):
    report = check_paths([PATH], Settings(cache=False, named_alone=True, **settings))
    assert not report.errors
    return report.findings


def test_misuse_paths_are_not_followed_by_default():
    assert {(f.span.row, f.code) for f in findings()} == marked("expect")


def test_follow_misuse_reports_them_with_the_condition():
    got = findings(follow_misuse=True)
    assert {(f.span.row, f.code) for f in got} == marked("expect") | marked("misuse")
    for f in got:
        assert (NOTE in f.region.note()) == ((f.span.row, f.code) in marked("misuse")), f
    # the deprecation helper is reached through the misuse branch: the path says so
    helper = next(f for f in got if f.function == "deprecate")
    assert NOTE in helper.region.condition and "ResnetBlock.forward → deprecate" in helper.region.reason


def test_the_configuration_key_follows_them_too():
    settings = settings_for([PATH], isolated=True, inline=("follow-misuse = true",), cache=False)
    assert settings.follow_misuse
    assert {(f.span.row, f.code) for f in check_paths([PATH], settings).findings} >= marked("misuse")


def branch(code: str, branch: bool = True) -> bool:
    fn = ast.parse(code).body[0]
    test = next(n for n in ast.walk(fn) if isinstance(n, ast.If))
    return misuse_branch(test.test, branch, test.body if branch else test.orelse, fn)


@pytest.mark.parametrize("code", [
    "def f(x, **kw):\n    if 'scale' in kw:\n        deprecate('scale', '1.0', 'gone')\n",
    "def f(x, **kw):\n    if x.ndim == 3:\n        warnings.warn('no', category=FutureWarning)\n",
    "def f(x, **kw):\n    if x.ndim == 3:\n        msg = f'Passing {x.ndim}d is ' 'deprecated'\n        logger.warning(msg)\n",
    "def f(x, **kw):\n    bad = {k for k in kw if k not in ('a', 'b')}\n    if bad:\n        logger.warning(f'{bad} ignored')\n",
    # warns and gives up: an input it does not support (a non-scalar scale) is dropped
    "def f(layer):\n    s = layer.scale\n    if s.numel() != 1:\n        warnings.warn('expected a scalar: not applied')\n        return None\n    return s\n",
])
def test_misuse_branches(code):
    assert branch(code)


@pytest.mark.parametrize("code", [
    # rwkv: a warning about an argument the harness passes (it ran and broke in the truth corpus)
    "def f(x, attention_mask=None):\n    if attention_mask is not None:\n        logger.warning_once('`attention_mask` was passed, but it is unused in this model.')\n",
    # the keys are not filtered by what the callee accepts: any keyword takes the branch
    "def f(x, **kw):\n    given = [k for k in kw]\n    if len(given) > 0:\n        logger.warning(f'{given}')\n",
    # the branch does real work besides warning
    "def f(x, **kw):\n    bad = [k for k in kw if k not in ('a',)]\n    if bad:\n        logger.warning('ignored')\n        x = x + 1\n",
    # warns and goes on with an adapted value: inputs callers pass
    "def f(x):\n    if x.ndim != 2:\n        warnings.warn('flattened')\n        return x.flatten(1)\n    return x\n",
    # warns, returns None, but does more first
    "def f(x):\n    if x.ndim != 2:\n        warnings.warn('dropped')\n        x.zero_()\n        return None\n    return x\n",
    # inside a deprecation helper its own branches are about its arguments
    "def deprecate(name, **kw):\n    if name:\n        warnings.warn(name, FutureWarning)\n",
])
def test_not_misuse_branches(code):
    assert not branch(code)


def test_the_other_branch_of_a_deprecation_check_runs_on_every_call():
    code = "def f(x, **kw):\n    if 'scale' in kw:\n        deprecate('scale', '1.0', 'gone')\n    else:\n        print(x)\n"
    assert branch(code, True) and not branch(code, False)
