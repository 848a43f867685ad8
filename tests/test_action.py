"""action.yml, the GitHub Action, run step by step as the runner would run it.

Its `run:` steps are executed with bash the way GitHub runs a `shell: bash` step, in a user's
repository with a breaking file, with `${{ ... }}` replaced by the inputs, the action's path (a
tagged clone of this checkout, what `uses: <owner>/compilelint@v0` fetches) and the outputs of
earlier steps. The upload step is GitHub's own action: the test checks what it is handed, a SARIF
file that validates against the SARIF 2.1.0 schema. The install step runs once for the module.
"""
import json
import os
import re
import shutil
import subprocess

import jsonschema
import pytest
import yaml

from checkout import git, tagged_clone
from conftest import FIXTURES, ROOT

pytestmark = [pytest.mark.slow, pytest.mark.skipif(shutil.which("git") is None, reason="needs git")]

ACTION = yaml.safe_load(open(os.path.join(ROOT, "action.yml"), encoding="utf-8"))
STEPS = ACTION["runs"]["steps"]
EXPRESSION = re.compile(r"\$\{\{\s*(.*?)\s*\}\}")
SCHEMA = json.load(open(os.path.join(ROOT, "compilelint", "data", "sarif-schema-2.1.0.json"), encoding="utf-8"))


class Runner:
    """One run of the action: its inputs (the defaults of action.yml, then the workflow's `with:`),
    the outputs of the steps run so far, and where the runner keeps its files."""

    def __init__(self, action_path, workspace, temp, with_=None):
        self.inputs = {name: str(spec.get("default", "")) for name, spec in ACTION["inputs"].items()}
        self.inputs.update(with_ or {})
        self.context = {"github.action_path": str(action_path)}
        self.context.update({f"inputs.{k}": v for k, v in self.inputs.items()})
        self.workspace, self.temp = str(workspace), str(temp)

    def expand(self, text: str) -> str:
        def value(match):
            assert match.group(1) in self.context, f"the test knows no value for ${{{{ {match.group(1)} }}}}"
            return self.context[match.group(1)]
        return EXPRESSION.sub(value, str(text))

    def run(self, step) -> subprocess.CompletedProcess:
        assert step["shell"] == "bash" and "if" not in step  # every run step runs; conditions live in the script
        outputs = os.path.join(self.temp, f"output-{step.get('id', 'step')}")
        open(outputs, "w").close()
        env = {k: v for k, v in os.environ.items() if not k.startswith(("GITHUB_", "RUNNER_", "INPUT_"))}
        env.update({k: self.expand(v) for k, v in step.get("env", {}).items()})
        env.update(RUNNER_TEMP=self.temp, GITHUB_WORKSPACE=self.workspace, GITHUB_OUTPUT=outputs,
                   PIP_DISABLE_PIP_VERSION_CHECK="1")
        assert "${{" not in step["run"], "run scripts read expressions through env: (no injection)"
        # GitHub runs a `shell: bash` step as `bash --noprofile --norc -eo pipefail {0}`.
        script = os.path.join(self.temp, "step.sh")
        with open(script, "w") as f:
            f.write(step["run"])
        r = subprocess.run(["bash", "--noprofile", "--norc", "-eo", "pipefail", script], cwd=self.workspace,
                           env=env, capture_output=True, text=True, timeout=600)
        for line in open(outputs).read().splitlines():
            name, _, value = line.partition("=")
            self.context[f"steps.{step['id']}.outputs.{name}"] = value
        return r

    def run_all(self, skip_install=False):
        """Every step in order as the runner would: a failing run step ends the job. Returns the
        last run step's result and the steps' results by name."""
        results = {}
        for step in STEPS:
            if "uses" in step:
                continue  # GitHub's upload action: test_upload_step_is_handed_the_report
            if skip_install and step["name"] == "Install compilelint":
                continue
            results[step["name"]] = r = self.run(step)
            if r.returncode != 0:
                break
        return r, results

    def output(self, name):
        return self.expand(ACTION["outputs"][name]["value"])


@pytest.fixture(scope="module")
def action_path(tmp_path_factory):
    clone = tmp_path_factory.mktemp("action") / "compilelint"
    tagged_clone(clone)
    return clone


@pytest.fixture(scope="module")
def runner_temp(tmp_path_factory, action_path):
    """RUNNER_TEMP after the install step ran (once for the module)."""
    temp = tmp_path_factory.mktemp("runner-temp")
    runner = Runner(action_path, temp, temp)
    [install] = [s for s in STEPS if s["name"] == "Install compilelint"]
    r = runner.run(install)
    assert r.returncode == 0, r.stdout + r.stderr
    return temp


@pytest.fixture
def workspace(tmp_path):
    """A user's repository, checked out: a module that breaks and one that does not."""
    ws = tmp_path / "workspace"
    (ws / "models").mkdir(parents=True)
    shutil.copy(os.path.join(FIXTURES, "precommit", "unfriendly.py"), ws / "models" / "model.py")
    shutil.copy(os.path.join(FIXTURES, "precommit", "friendly.py"), ws / "models" / "clean.py")
    git(ws, "init", "-q")
    git(ws, "add", "-A")
    return ws


def _sarif(path):
    with open(path, encoding="utf-8") as f:
        report = json.load(f)
    jsonschema.validate(report, SCHEMA)
    return report


def test_install_step_installs_compilelint_without_torch(runner_temp):
    python = os.path.join(str(runner_temp), "compilelint-venv", "bin", "python")
    probe = subprocess.run([python, "-c", "import compilelint, importlib.util as u; "
                                          "print(compilelint.__version__, u.find_spec('torch') is None)"],
                           capture_output=True, text=True, timeout=120)
    assert probe.stdout.split() == [__import__("compilelint").__version__, "True"], probe.stderr


def test_findings_fail_the_step_and_land_in_a_valid_sarif_file(action_path, runner_temp, workspace):
    runner = Runner(action_path, workspace, runner_temp)
    last, results = runner.run_all(skip_install=True)
    assert results["Check"].returncode == 0, results["Check"].stderr  # the check step records, never fails
    assert runner.output("exit-code") == "1"
    assert last is results["Fail on findings"] and last.returncode == 1
    assert "::error::compilelint found code that graph-breaks" in last.stdout
    report = _sarif(workspace / runner.output("sarif-file"))
    [result] = report["runs"][0]["results"]
    assert result["ruleId"] == "CL101"
    location = result["locations"][0]["physicalLocation"]
    assert location["artifactLocation"]["uri"].endswith("models/model.py")
    assert location["region"]["startLine"] == 7


def test_inputs_paths_args_file_and_no_failure(action_path, runner_temp, workspace):
    with_ = {"paths": "models/clean.py models/model.py", "args": "--ignore CL101 --no-cache",
             "sarif-file": "reports/out.sarif", "fail-on-findings": "false"}
    (workspace / "reports").mkdir()
    runner = Runner(action_path, workspace, runner_temp, with_)
    last, results = runner.run_all(skip_install=True)
    assert runner.output("exit-code") == "0" and last.returncode == 0
    assert _sarif(workspace / "reports" / "out.sarif")["runs"][0]["results"] == []
    # findings, but told not to fail
    runner = Runner(action_path, workspace, runner_temp, {**with_, "args": "--no-cache"})
    last, _ = runner.run_all(skip_install=True)
    assert runner.output("exit-code") == "1" and last.returncode == 0
    assert len(_sarif(workspace / "reports" / "out.sarif")["runs"][0]["results"]) == 1


def test_a_path_that_cannot_be_checked_fails_even_when_findings_may_pass(action_path, runner_temp, workspace):
    runner = Runner(action_path, workspace, runner_temp, {"paths": "missing.py", "fail-on-findings": "false"})
    last, results = runner.run_all(skip_install=True)
    assert runner.output("exit-code") == "2"
    assert last.returncode == 2 and "could not check everything" in last.stdout
    assert "missing.py" in results["Check"].stderr


def test_upload_step_is_handed_the_report():
    [upload] = [s for s in STEPS if "uses" in s]
    assert upload["uses"].startswith("github/codeql-action/upload-sarif@")
    assert upload["with"]["sarif_file"] == "${{ inputs.sarif-file }}"
    # uploaded also when the check step failed the job, unless the workflow turns it off
    assert upload["if"] == "${{ !cancelled() && inputs.upload-sarif == 'true' }}"
    assert STEPS.index(upload) < [s["name"] for s in STEPS].index("Fail on findings")
