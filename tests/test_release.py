"""A release, built and used the way a user gets it: the sdist and the wheel built from a tagged clone
of this checkout (`python -m build`, as .github/workflows/release.yml builds them), `twine check`ed,
and the wheel installed into a fresh virtualenv without torch, where README.md's quick-start check
prints what it prints in this checkout."""
import os
import re
import shutil
import subprocess
import sys
import tarfile
import venv
import zipfile

try:
    import tomllib
except ImportError:  # Python < 3.11
    import tomli as tomllib

import pytest
import yaml

from checkout import TAG, tagged_clone
from compilelint import __version__
from conftest import FIXTURES, ROOT

README = open(os.path.join(ROOT, "README.md"), encoding="utf-8").read()
CHANGELOG = open(os.path.join(ROOT, "CHANGELOG.md"), encoding="utf-8").read()


def quick_start_check() -> list:
    """The check command of the Quick start's first block: `... && compilelint check <paths>`."""
    quick = README.split("## Quick start", 1)[1].split("\n## ", 1)[0]
    first_block = quick.split("```sh\n", 1)[1].split("```", 1)[0]
    return first_block.split("&& ", 1)[1].split()


def test_the_version_is_written_once():
    """pyproject.toml reads compilelint.__version__; the changelog has its section."""
    with open(os.path.join(ROOT, "pyproject.toml"), "rb") as f:
        pyproject = tomllib.load(f)
    assert "version" not in pyproject["project"] and pyproject["project"]["dynamic"] == ["version"]
    assert pyproject["tool"]["setuptools"]["dynamic"]["version"] == {"attr": "compilelint.__version__"}
    assert re.search(rf"^## \[{re.escape(__version__)}\] - \d{{4}}-\d\d-\d\d$", CHANGELOG, re.M)


@pytest.fixture(scope="module")
def dist(tmp_path_factory):
    """sdist and wheel of a tagged clone: {"sdist": path, "wheel": path}."""
    tmp = tmp_path_factory.mktemp("release")
    clone = tmp / "compilelint"
    tagged_clone(clone)
    out = tmp / "dist"
    r = subprocess.run([sys.executable, "-m", "build", "--outdir", str(out), str(clone)],
                       capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-3000:]
    built = sorted(os.listdir(out))
    assert built == [f"compilelint-{__version__}-py3-none-any.whl", f"compilelint-{__version__}.tar.gz"], built
    return {"wheel": out / built[0], "sdist": out / built[1]}


@pytest.mark.slow
def test_twine_check_passes(dist):
    r = subprocess.run([sys.executable, "-m", "twine", "check", "--strict", str(dist["sdist"]), str(dist["wheel"])],
                       capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stdout + r.stderr
    assert r.stdout.count("PASSED") == 2


@pytest.mark.slow
def test_the_packages_hold_the_rules_and_data_not_the_tests(dist):
    names = zipfile.ZipFile(dist["wheel"]).namelist()
    assert "compilelint/rules/tensor_item.py" in names and "compilelint/data/sarif-schema-2.1.0.json" in names
    assert "compilelint/server/lsp.py" in names
    assert {"compilelint/data/libraries.toml", "compilelint/data/torch_behaviour.toml"} <= set(names)
    assert not [n for n in names if n.startswith(("rules/", "tests/", "fixtures/", "bench/"))]
    with tarfile.open(dist["sdist"]) as sdist:
        members = sdist.getnames()
    assert f"compilelint-{__version__}/rules/tensor_item.py" in members
    assert f"compilelint-{__version__}/README.md" in members


@pytest.mark.slow
def test_the_wheel_runs_the_readme_quick_start_in_a_venv_without_torch(dist, tmp_path):
    env_dir = tmp_path / "venv"
    venv.create(env_dir, with_pip=True)
    python = str(env_dir / "bin" / "python")
    # its dependencies (libcst, click) from the package index, as `pip install compilelint` gets them
    r = subprocess.run([python, "-m", "pip", "install", "-q", "--disable-pip-version-check", str(dist["wheel"])],
                       capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stdout + r.stderr
    probe = subprocess.run([python, "-c", "import importlib.util as u; print(u.find_spec('torch') is None)"],
                           capture_output=True, text=True, timeout=60)
    assert probe.stdout.strip() == "True", probe.stderr
    command = quick_start_check()
    assert command[:2] == ["compilelint", "check"]
    shutil.copytree(os.path.join(FIXTURES, "catalogue"), tmp_path / "fixtures" / "catalogue")
    installed = subprocess.run([str(env_dir / "bin" / command[0]), *command[1:], "--no-cache"], cwd=str(tmp_path),
                               capture_output=True, text=True, timeout=300)
    here = subprocess.run([sys.executable, "-m", "compilelint", *command[1:], "--no-cache"], cwd=ROOT,
                          capture_output=True, text=True, timeout=300)
    assert installed.returncode == 1, installed.stderr
    assert "fixtures/catalogue/moe_router.py:44:18: CL301" in installed.stdout
    assert installed.stdout == here.stdout
    version = subprocess.run([str(env_dir / "bin" / "compilelint"), "--version"], capture_output=True, text=True)
    assert version.stdout.startswith(f"compilelint {__version__} ")


def test_the_release_workflow_refuses_a_tag_that_is_not_the_version():
    """release.yml's guard step, run as the runner runs it, in this checkout."""
    workflow = yaml.safe_load(open(os.path.join(ROOT, ".github", "workflows", "release.yml"), encoding="utf-8"))
    [guard] = [s for s in workflow["jobs"]["build"]["steps"] if s.get("name") == "The tag names the package's version"]

    def run(tag):
        env = {**os.environ, "GITHUB_REF_NAME": tag, "PATH": os.path.dirname(sys.executable) + os.pathsep + os.environ["PATH"]}
        return subprocess.run(["bash", "--noprofile", "--norc", "-eo", "pipefail", "-c", guard["run"]], cwd=ROOT,
                              env=env, capture_output=True, text=True, timeout=60)

    assert run(TAG).returncode == 0
    refused = run("v99.0.0")
    assert refused.returncode == 1 and f"compilelint/__init__.py says {__version__}" in refused.stdout
    assert workflow[True] == {"push": {"tags": ["v*.*"]}}  # YAML 1.1 reads the key `on` as true
    assert workflow["jobs"]["publish"]["permissions"] == {"id-token": "write"}
