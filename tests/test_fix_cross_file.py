"""A finding reached from another file gets its fix as one in the caller's file does: the helper's
untyped parameter is a tensor when every traced call of it passes one (here `run(x)`, a compiled
function, passes its own tensor parameter). Check output, --diff, --fix and the editor's code
actions all read the finding's fix."""
import subprocess
import sys

from compilelint.config import Settings, settings_for
from compilelint.engine import check_paths

HELPERS = '''def freeze(x):
    x.requires_grad = False
    return x * 2


def freeze_all(x):
    x.requires_grad = False
    return x
'''

MODEL = '''import torch

from helpers import freeze, freeze_all


@torch.compile
def run(x):
    freeze_all([x])  # a list: the helper's `x` is not always a tensor, so no fix for it
    return freeze(x) + 1
'''


def _write(tmp_path):
    (tmp_path / "helpers.py").write_text(HELPERS)
    (tmp_path / "model.py").write_text(MODEL)


def _cli(tmp_path, *args):
    return subprocess.run([sys.executable, "-m", "compilelint", "check", "--isolated", "--no-cache", *args],
                          cwd=tmp_path, capture_output=True, text=True, timeout=120)


def test_the_fix_of_a_finding_reached_from_another_file(tmp_path):
    _write(tmp_path)
    report = check_paths([str(tmp_path)], Settings(cache=False))
    fixes = {f.span.row: f.fix for f in report.findings if f.code == "CL215"}
    assert set(fixes) == {2, 7}
    assert fixes[2] is not None and fixes[2].edits[0].content == "x.requires_grad_(False)"
    assert fixes[7] is None  # `freeze_all([x])`: a list reaches it
    out = _cli(tmp_path, ".").stdout
    assert "helpers.py:2:5: CL215 [*]" in out and "helpers.py:7:5: CL215 `t" in out, out


def test_diff_fix_and_the_editor(tmp_path):
    _write(tmp_path)
    r = _cli(tmp_path, "--diff", ".")
    assert "+    x.requires_grad_(False)" in r.stdout, r.stdout + r.stderr
    r = _cli(tmp_path, "--fix", ".")
    assert (tmp_path / "helpers.py").read_text().startswith("def freeze(x):\n    x.requires_grad_(False)\n")

    from compilelint.server.project import ProjectContext

    _write(tmp_path)
    settings = settings_for([str(tmp_path)])
    settings.project_root, settings.cache = str(tmp_path), False
    context = ProjectContext(str(tmp_path), settings)
    context.load()
    path = str(tmp_path / "helpers.py")
    found = context.findings_with_fixes(path, HELPERS)
    assert [(f.span.row, f.fix is not None) for f in found if f.code == "CL215"] == [(2, True), (7, False)]
