"""`[tool.compilelint]` in pyproject.toml, key by key, through the CLI (subprocess runs).

Where the file is found (upward from the checked paths), `--config`, `--isolated`, unknown keys and
wrong types (exit 2, naming the key), and the command line overriding the file.
"""
import json
import subprocess
import sys

import pytest

from compilelint.config import Settings
from compilelint.rule import registry

pytestmark = pytest.mark.slow  # end to end (CLI subprocesses, Dynamo runs, fuzzing): seconds a test

MODEL = """\
import copy
import torch
from torch import nn

@torch.compile
def f(x):
    print(x)
    return x.sum().item()

class Net(nn.Module):
    def forward(self, x):
        if x.sum() > 0:
            x = x * 2
        return copy.deepcopy(x)

def eager(x):
    return x.sum().item()
"""
# (row, code) of every finding in MODEL with the default settings
DEFAULT = [(7, "CL201"), (8, "CL101"), (12, "CL104"), (14, "CL207")]


def run(cwd, *args):
    return subprocess.run([sys.executable, "-m", "compilelint", "check", "--no-cache", *args], cwd=str(cwd),
                          capture_output=True, text=True, timeout=120)


def findings(cwd, *args, paths=("m.py",)):
    r = run(cwd, "--output-format", "json", *args, *paths)
    assert r.returncode in (0, 1), r.stderr
    return [(d["location"]["row"], d["code"]) for d in json.loads(r.stdout)]


@pytest.fixture
def project(tmp_path):
    (tmp_path / "m.py").write_text(MODEL)

    def configure(body):
        (tmp_path / "pyproject.toml").write_text("[project]\nname = 'x'\n\n[tool.compilelint]\n" + body)
        return tmp_path

    configure("")
    return configure


def test_defaults(project):
    assert findings(project("")) == DEFAULT


def test_select_ignore_extend_select(project):
    assert findings(project('select = ["CL2"]\n')) == [(7, "CL201"), (14, "CL207")]
    assert findings(project('select = ["CL201", "CL101"]\n')) == [(7, "CL201"), (8, "CL101")]
    assert findings(project('ignore = ["CL1"]\n')) == [(7, "CL201"), (14, "CL207")]
    assert findings(project('ignore = ["ALL"]\n')) == []
    # the more specific selector wins (Ruff)
    assert findings(project('ignore = ["CL2"]\nextend-select = ["CL201"]\n')) == [(7, "CL201"), (8, "CL101"),
                                                                                 (12, "CL104")]
    assert findings(project('select = ["ALL"]\nignore = ["CL1", "CL2"]\n')) == []


def test_extend_select_enables_cl900(project, tmp_path):
    (tmp_path / "m.py").write_text(MODEL.replace("    print(x)\n", "    print(x)  # noqa: CL104\n"))
    assert (7, "CL900") not in findings(project(""))
    assert (7, "CL900") in findings(project('extend-select = ["CL900"]\n'))


def test_per_file_ignores(project, tmp_path):
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "t.py").write_text(MODEL)
    cfg = project('[tool.compilelint.per-file-ignores]\n"tests/*" = ["CL2"]\n"m.py" = ["CL101", "CL104"]\n')
    assert findings(cfg, paths=("m.py", "tests/t.py")) == [(7, "CL201"), (14, "CL207"), (8, "CL101"), (12, "CL104")]
    # relative to the project root, wherever the command runs from
    r = run(tmp_path / "tests", "--output-format", "json", "t.py")
    assert [(d["location"]["row"], d["code"]) for d in json.loads(r.stdout)] == [(8, "CL101"), (12, "CL104")]


def test_exclude_and_extend_exclude(project, tmp_path):
    for folder in ("gen", "vendor"):
        (tmp_path / folder).mkdir()
        (tmp_path / folder / "x.py").write_text(MODEL)

    def files(*args):
        r = run(tmp_path, "--output-format", "json", *args, ".")
        return sorted({d["filename"].lstrip("./") for d in json.loads(r.stdout)})

    project('exclude = ["gen"]\n')
    assert files() == ["m.py", "vendor/x.py"]
    project('exclude = ["gen"]\nextend-exclude = ["vendor/"]\n')
    assert files() == ["m.py"]
    # the command line: --exclude replaces the file's exclude, --extend-exclude adds to it
    assert files("--exclude", "m.py") == ["gen/x.py"]
    project('exclude = ["gen"]\n')
    assert files("--extend-exclude", "vendor") == ["m.py"]
    # named explicitly: checked, unless --force-exclude
    assert findings(tmp_path, paths=("gen/x.py",)) == DEFAULT
    assert findings(tmp_path, "--force-exclude", paths=("gen/x.py",)) == []


def test_force_exclude_key(project, tmp_path):
    (tmp_path / "gen").mkdir()
    (tmp_path / "gen" / "x.py").write_text(MODEL)
    assert findings(project('extend-exclude = ["gen"]\nforce-exclude = true\n'), paths=("gen/x.py",)) == []


def test_scope(project):
    assert findings(project('scope = "modules"\n')) == DEFAULT
    assert findings(project('scope = "compiled"\n')) == [(7, "CL201"), (8, "CL101")]
    assert findings(project('scope = "all"\n')) == DEFAULT + [(17, "CL101")]
    assert findings(project('scope = "all"\n'), "--scope", "compiled") == [(7, "CL201"), (8, "CL101")]


def test_profile_vllm(project, tmp_path):
    """vllm: every recompile rule is on and reported as an error."""
    recompile = {c: r for c, r in registry().items() if r.kind == "recompile" and not r.verify_event}
    assert Settings(profile="vllm").enabled_codes() >= set(recompile)
    assert Settings(profile="vllm").enabled_codes() >= Settings().enabled_codes()
    assert recompile, "no recompile rule registered"
    for code, rule in recompile.items():
        (tmp_path / "m.py").write_text(rule.INVALID[0])
        data = json.loads(run(project('profile = "vllm"\n'), "--output-format", "json", "m.py").stdout)
        mine = [d for d in data if d["code"] == code]
        assert mine and all(d["severity"] == "error" for d in mine), code


def test_extra_roots_and_stops(project, tmp_path):
    (tmp_path / "deco.py").write_text("def fast(f):\n    return f\n\ndef eager_only(f):\n    return f\n")
    (tmp_path / "m.py").write_text(
        "import torch\nfrom deco import fast, eager_only\n\n@fast\ndef f(x):\n    return x.sum().item()\n\n"
        "@torch.compile\ndef g(x):\n    return h(x)\n\n@eager_only\ndef h(x):\n    return x.sum().item()\n")
    both = ("m.py", "deco.py")
    assert findings(project(""), paths=both) == [(14, "CL101")]
    assert findings(project('extra-roots = ["deco.fast"]\n'), paths=both) == [(6, "CL101"), (14, "CL101")]
    assert findings(project('extra-roots = ["deco.fast"]\nextra-stops = ["deco.eager_only"]\n'), paths=both) \
        == [(6, "CL101")]


def test_torch_version(project, tmp_path):
    def url(*args):
        data = json.loads(run(tmp_path, "--output-format", "json", "--select", "CL207", *args, "m.py").stdout)
        return data[0]["url"].rsplit("/", 1)[-1]

    project("")
    assert url() == "gb4198.html"
    project('torch-version = "2.11"\n')
    assert url() == "gb0179.html"
    assert url("--torch-version", "2.13") == "gb4198.html"


def test_respect_gitignore_and_cache_dir(project, tmp_path):
    (tmp_path / ".gitignore").write_text("ignored/\n")
    (tmp_path / "ignored").mkdir()
    (tmp_path / "ignored" / "x.py").write_text(MODEL)
    r = run(project(""), "--output-format", "json", ".")
    assert {d["filename"].lstrip("./") for d in json.loads(r.stdout)} == {"m.py"}
    r = run(project("respect-gitignore = false\n"), "--output-format", "json", ".")
    assert {d["filename"].lstrip("./") for d in json.loads(r.stdout)} == {"m.py", "ignored/x.py"}
    project('cache-dir = ".my-cache"\n')
    r = subprocess.run([sys.executable, "-m", "compilelint", "check", "m.py"], cwd=str(tmp_path / "ignored"),
                       capture_output=True, text=True, timeout=120)
    r = subprocess.run([sys.executable, "-m", "compilelint", "check", "../m.py"], cwd=str(tmp_path / "ignored"),
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 1
    assert (tmp_path / ".my-cache").is_dir()  # relative to the pyproject, not to the working directory


# ----- where the file comes from ----------------------------------------------------------------------
def test_found_upward_from_the_checked_paths(tmp_path):
    pkg = tmp_path / "repo" / "src" / "pkg"
    pkg.mkdir(parents=True)
    (pkg / "m.py").write_text(MODEL)
    (tmp_path / "repo" / "pyproject.toml").write_text('[tool.compilelint]\nselect = ["CL207"]\n')
    (tmp_path / "repo" / "src" / "pyproject.toml").write_text("[project]\nname = 'no-compilelint-table'\n")
    assert findings(tmp_path, paths=("repo/src/pkg/m.py",)) == [(14, "CL207")]  # from outside the project
    assert findings(pkg, paths=("m.py",)) == [(14, "CL207")]  # from inside it
    # --isolated: none of it
    assert findings(pkg, "--isolated", paths=("m.py",)) == DEFAULT
    # --config names the file
    (tmp_path / "other.toml").write_text('[tool.compilelint]\nselect = ["CL201"]\n')
    assert findings(pkg, "--config", str(tmp_path / "other.toml"), paths=("m.py",)) == [(7, "CL201")]


def test_missing_config_file_is_exit_2(tmp_path):
    (tmp_path / "m.py").write_text(MODEL)
    r = run(tmp_path, "--config", "nope.toml", "m.py")
    assert r.returncode == 2 and "nope.toml" in r.stderr


@pytest.mark.parametrize("body, words", [
    ('selct = ["CL1"]\n', ["unknown key 'selct'", "did you mean 'select'"]),
    ('frobnicate = 1\n', ["unknown key 'frobnicate'", "pyproject.toml"]),
    ('select = "CL1"\n', ["'select'", "must be a list"]),
    ('select = [1]\n', ["'select'", "must be a list"]),
    ('scope = "everything"\n', ["'scope'", "modules, compiled, all"]),
    ('profile = "sglang"\n', ["'profile'", "vllm"]),
    ('torch-version = "2.12"\n', ["'torch-version'", "2.13"]),
    ('ignore = ["CL999"]\n', ["CL999"]),
    ('[tool.compilelint.per-file-ignores]\n"x.py" = "CL101"\n', ["per-file-ignores", "x.py"]),
    ('[tool.compilelint.per-file-ignores]\n"x.py" = ["XX1"]\n', ["XX1", "per-file-ignores"]),
    ('select = [\n', ["not valid TOML"]),
])
def test_bad_configuration_is_exit_2_naming_the_key(project, body, words):
    r = run(project(body), "m.py")
    assert r.returncode == 2, r.stdout
    line = r.stderr.strip()
    assert line.startswith("compilelint: error:") and "\n" not in line and "Traceback" not in line
    for w in words:
        assert w in line, line
    assert r.stdout == ""


def test_command_line_overrides_the_file(project):
    cfg = project('select = ["CL2"]\nignore = ["CL207"]\n')
    assert findings(cfg) == [(7, "CL201")]
    assert findings(cfg, "--select", "CL1") == [(8, "CL101"), (12, "CL104")]  # a new selection
    assert findings(cfg, "--extend-select", "CL207") == [(7, "CL201"), (14, "CL207")]  # re-enables
    assert findings(cfg, "--ignore", "CL201") == []  # adds to the file's ignore
    assert findings(cfg, "--isolated") == DEFAULT
    # --select starts afresh: the file's ignore of CL207 no longer applies
    assert findings(cfg, "--select", "CL2", "--ignore", "CL201") == [(14, "CL207")]
    assert findings(project('scope = "compiled"\n'), "--scope", "modules") == DEFAULT


def test_torch_versions_compare_as_numbers():
    from compilelint.rule import torch_at_least

    assert torch_at_least("2.13", "2.13") and torch_at_least("2.14", "2.13") and torch_at_least("3.0", "2.13")
    assert not torch_at_least("2.9", "2.13") and not torch_at_least("2.11", "2.13")  # "2.9" >= "2.13" as strings
