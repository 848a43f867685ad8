"""Adding a rule touches one rule file and its fixture: a throwaway rule written into a folder of
the rules package is registered, documented, runs in `check` (per file and through the rule table)
and reports on its fixture, with nothing else edited."""
import os
import subprocess
import sys
import textwrap

import pytest

from conftest import ROOT

pytestmark = pytest.mark.slow  # end to end (CLI subprocesses, Dynamo runs, fuzzing): seconds a test

RULE = '''
import ast

from compilelint.rule import Rule


class ThrowawaySleep(Rule):
    """
    ## What it does
    Finds `time.sleep()` in compiled code.

    ## Why is this bad?
    Dynamo cannot trace it ("Attempted to call function marked as skipped", {gb}).

    ## Example
    ```python
    time.sleep(1)
    ```

    ## Use instead
    Sleep outside the compiled region.
    """

    code = "CL299"
    name = "throwaway-sleep"
    message = "`time.sleep()` graph-breaks ({gb}): sleep outside the compiled region"
    gb_types = ("Attempted to call function marked as skipped",)
    gb_ids = {"2.13": ("GB0007",), "2.11": ("GB0007",)}
    triggers = ("sleep",)

    def visit_Call(self, node: ast.Call):
        if self.ctx.resolve(node.func) == "time.sleep":
            self.report(node)

    INVALID = [FIXTURE]
    VALID = ["import time\\n\\ntime.sleep(1)\\n"]
'''

FIXTURE = '''import time

import torch


@torch.compile
def f(x):
    time.sleep(0.1)
    return x + 1
'''

# Runs in a fresh interpreter: the throwaway rule must not leak into the registry of other tests.
DRIVER = textwrap.dedent('''
    import sys
    import compilelint.rules
    compilelint.rules.__path__.append(sys.argv[1])  # a folder of the rules package, holding one new file
    from compilelint.cli import main
    sys.argv = ["compilelint"] + sys.argv[2:]
    main()
''')


def _compilelint(rules_dir, *args, cwd):
    return subprocess.run([sys.executable, "-c", DRIVER, str(rules_dir), *args], cwd=cwd, capture_output=True,
                          text=True, timeout=120, env={**os.environ, "PYTHONPATH": ROOT})


def test_a_new_rule_is_one_file_and_its_fixture(tmp_path):
    rules_dir = tmp_path / "extra_rules"
    rules_dir.mkdir()
    (rules_dir / "throwaway_sleep.py").write_text(RULE.replace("[FIXTURE]", "[" + repr(FIXTURE) + "]"))
    (tmp_path / "sleepy.py").write_text(FIXTURE)

    r = _compilelint(rules_dir, "check", "--no-cache", "--isolated", "--select", "CL299", "sleepy.py", cwd=tmp_path)
    assert r.returncode == 1, r.stderr
    assert "sleepy.py:8:5: CL299 `time.sleep()` graph-breaks (GB0007): sleep outside the compiled region" in r.stdout

    r = _compilelint(rules_dir, "rule", "CL299", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert "# throwaway-sleep (CL299)" in r.stdout and "## Use instead" in r.stdout
    assert "gb0007.html" in r.stdout

    r = _compilelint(rules_dir, "rules", "--output-format", "markdown", cwd=tmp_path)
    assert r.returncode == 0 and "| CL299 | `throwaway-sleep` |" in r.stdout, r.stderr

    # On by default like every rule that does not say otherwise; the others still run beside it.
    r = _compilelint(rules_dir, "check", "--no-cache", "--isolated", "sleepy.py", cwd=tmp_path)
    assert "CL299" in r.stdout, r.stdout + r.stderr
