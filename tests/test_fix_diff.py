"""`check --diff`: the findings that remain are shown where they are in the file as it is (the diff
changed nothing), and the closing line does not say "No fixes available" under a diff."""
import subprocess
import sys

SOURCE = '''import torch


@torch.compile
def f(x: torch.Tensor):
    y = x * 2
    y.requires_grad = False
    print(y)
    return y.sum().item()
'''


def test_remaining_findings_keep_the_files_line_numbers(tmp_path):
    (tmp_path / "m.py").write_text(SOURCE)
    r = subprocess.run([sys.executable, "-m", "compilelint", "check", "--diff", "--unsafe-fixes", "--isolated",
                        "--no-cache", "m.py"], cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert r.returncode == 1, r.stderr
    assert "+    if not torch.compiler.is_compiling():" in r.stdout  # the print guard adds a line
    assert "m.py:9:12: CL101" in r.stdout, r.stdout  # `.item()` is on line 9 of m.py, not 10
    assert (tmp_path / "m.py").read_text() == SOURCE


def test_the_closing_line_under_a_diff(tmp_path):
    (tmp_path / "m.py").write_text(SOURCE)
    r = subprocess.run([sys.executable, "-m", "compilelint", "check", "--diff", "--isolated", "--no-cache", "m.py"],
                       cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert "+    y.requires_grad_(False)" in r.stdout
    assert "No fixes available" not in r.stdout, r.stdout
    assert ("Found 3 errors (1 fixed by the diff above, 2 remaining).\n"
            "No other fixes available (1 hidden fix can be enabled with the `--unsafe-fixes` option).") in r.stdout
