"""`verify --fix`: fixes applied to a copy, run before and after, judged per fix; `--proven-only`
writes only the proven ones."""
import os
import subprocess
import sys

import pytest

from compilelint.fix_files import line_map
from compilelint.verify.code_copy import import_root, make_copy

SOURCE = '''import torch
import torch.nn.functional as F

K = 4


def scaled(x: torch.Tensor, idx: torch.Tensor):
    assert x.abs().max().item() < 100
    hot = F.one_hot(idx % K)
    return x * 2, hot


def make():
    return [(scaled, (torch.ones(3), torch.tensor([0, 1, 1])), {})]
'''


def test_line_map_marks_written_lines():
    old = "a\nb\nc\nd\n"
    new = "a\nB1\nB2\nc\nd\n"
    m = line_map(old, new)
    assert m[1] == (1, False) and m[4] == (3, False) and m[5] == (4, False)
    assert m[2] == (2, True) and m[3] == (2, True)


def test_copy_holds_the_whole_package_and_maps_paths(tmp_path):
    pkg = tmp_path / "proj" / "pkg"
    (pkg / "sub").mkdir(parents=True)
    for p in (pkg / "__init__.py", pkg / "sub" / "__init__.py", pkg / "sub" / "m.py", tmp_path / "proj" / "ex.py"):
        p.write_text("x = 1\n")
    (tmp_path / "proj" / ".venv").mkdir()
    assert import_root(str(pkg / "sub" / "m.py")) == str(pkg)
    copy = make_copy([str(pkg / "sub"), str(tmp_path / "proj" / "ex.py")])
    try:
        assert list(copy.roots) == [str(tmp_path / "proj")]  # the package lives inside the example's folder
        moved = copy.to_copy(str(pkg / "sub" / "m.py"))
        assert os.path.isfile(moved) and moved != str(pkg / "sub" / "m.py")
        assert copy.to_original(moved) == str(pkg / "sub" / "m.py")
        assert not os.path.exists(os.path.join(copy.roots[str(tmp_path / "proj")], ".venv"))
        assert copy.pythonpath == [copy.roots[str(tmp_path / "proj")]]
    finally:
        copy.remove()
    assert not os.path.exists(copy.base)


@pytest.mark.slow
def test_each_fix_is_judged_and_only_proven_ones_are_written(tmp_path):
    pytest.importorskip("torch")
    path = tmp_path / "scaled.py"
    path.write_text(SOURCE)
    cmd = [sys.executable, "-m", "compilelint", "verify", "scaled.py", "--example", "scaled.py:make", "--fix",
           "--unsafe-fixes", "--entry", "scaled.py:scaled", "--isolated", "--no-cache", "--device", "cpu",
           "--proven-only"]
    r = subprocess.run(cmd, cwd=tmp_path, capture_output=True, text=True, timeout=600)
    assert r.returncode == 1, r.stderr  # one fix is not proven
    out = r.stdout
    assert "scaled.py:8:12: CL101 proven: 1 breaks → 0" in out, out
    assert "#0 eval: eager bitwise; compiled bitwise" in out
    assert "scaled.py:9:11: CL303 changed-output" in out
    assert "eager mismatch (out[1]: (3, 2) torch.int64 vs (3, 4) torch.int64)" in out
    assert "Eager change: a failed check raises RuntimeError" in out  # what the fix changes, said
    assert "1 proven, 1 changed-output" in out
    text = path.read_text()
    assert "torch._assert_async(x.abs().max() < 100)" in text  # the proven fix, written
    assert "F.one_hot(idx % K)\n" in text  # the one that changes outputs, not written
    assert "fixed scaled.py" in r.stderr
    assert not [p for p in os.listdir(tmp_path) if p != "scaled.py" and not p.startswith((".", "__"))]


@pytest.mark.slow
def test_run_command_sees_the_fixed_copy(tmp_path):
    """--run: the user's command runs in the copy of its folder, so `python use.py` imports the
    fixed module (not the original next to it); its exit status stands in for the outputs."""
    pytest.importorskip("torch")
    (tmp_path / "checked.py").write_text(
        "import torch\n\n\ndef checked(x: torch.Tensor):\n    assert x.abs().max().item() < 100\n    return x * 2\n")
    (tmp_path / "use.py").write_text(
        "import torch\nimport checked\nassert checked.checked(torch.ones(3)).tolist() == [2.0, 2.0, 2.0]\n")
    cmd = [sys.executable, "-m", "compilelint", "verify", "checked.py", "--fix", "--unsafe-fixes", "--entry",
           "checked.py:checked", "--isolated", "--no-cache", "--", sys.executable, "use.py"]
    r = subprocess.run(cmd, cwd=tmp_path, capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "checked.py:5:12: CL101 proven: 1 breaks → 0" in r.stdout, r.stdout
    assert "1 proven, 0 changed-output" in r.stdout
    assert "assert x.abs().max().item() < 100" in (tmp_path / "checked.py").read_text()  # nothing written


PKG_MODEL = '''import torch


def scaled(x: torch.Tensor):
    assert x.abs().max().item() < 100
    return x * 2
'''

PKG_EXAMPLES = '''import torch

from mypkg.model import scaled


def make():
    return [(scaled, (torch.ones(3),), {})]
'''


@pytest.mark.slow
@pytest.mark.parametrize("example", ["mypkg.examples:make", "mypkg/examples.py:make"])
def test_module_and_file_form_judge_the_fixed_copy(tmp_path, example):
    """`--example mypkg.examples:make` (the module form) imports `mypkg` from the fixed copy in the
    "after" run, not from the working folder: both forms prove the fix, and --proven-only writes it."""
    pytest.importorskip("torch")
    pkg = tmp_path / "mypkg"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "model.py").write_text(PKG_MODEL)
    (pkg / "examples.py").write_text(PKG_EXAMPLES)
    cmd = [sys.executable, "-m", "compilelint", "verify", "mypkg", "--example", example, "--fix", "--unsafe-fixes",
           "--isolated", "--no-cache", "--device", "cpu", "--proven-only", "--select", "CL101",
           "--entry", "mypkg/model.py:scaled"]
    r = subprocess.run(cmd, cwd=tmp_path, capture_output=True, text=True, timeout=600)
    assert "mypkg/model.py:5:12: CL101 proven: 1 breaks → 0" in r.stdout, r.stdout + r.stderr
    assert r.returncode == 0, r.stdout + r.stderr
    assert "torch._assert_async(x.abs().max() < 100)" in (pkg / "model.py").read_text()


SLOW_MODEL = '''import time

import torch

# A test double for a fix that costs time: the fixed copy (a temporary folder verify makes) waits.
IN_THE_COPY = "compilelint-fix-" in __file__


@torch.compiler.disable
def wait():
    if IN_THE_COPY:
        time.sleep(0.005)


def scaled(x: torch.Tensor):
    assert x.abs().max().item() < 100
    wait()
    return x * 2
'''


@pytest.mark.slow
def test_a_fix_that_makes_the_compiled_code_slower_is_not_proven(tmp_path):
    pytest.importorskip("torch")
    pkg = tmp_path / "mypkg"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "model.py").write_text(SLOW_MODEL)
    (pkg / "examples.py").write_text(PKG_EXAMPLES)
    cmd = [sys.executable, "-m", "compilelint", "verify", "mypkg", "--example", "mypkg.examples:make", "--fix",
           "--unsafe-fixes", "--isolated", "--no-cache", "--device", "cpu", "--proven-only", "--select", "CL101",
           "--entry", "mypkg/model.py:scaled"]
    r = subprocess.run(cmd, cwd=tmp_path, capture_output=True, text=True, timeout=600)
    assert r.returncode == 1, r.stdout + r.stderr
    assert "mypkg/model.py:16:12: CL101 slower: 1 breaks → 0; #0 eval: compiled " in r.stdout, r.stdout
    assert "(median of 5 interleaved rounds × 10 calls)" in r.stdout
    assert "0 proven" in r.stdout and "1 slower" in r.stdout
    assert "assert x.abs().max().item() < 100" in (pkg / "model.py").read_text()  # not written
    assert "fixed" not in r.stderr
