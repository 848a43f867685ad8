"""What verify tells the user when things go wrong (issue 16, point 8): a failed `--run` command,
an `--example` target that raises in eager, the reason behind `[error]`, and a `--timeout` that
starts once torch is imported."""
import os
import subprocess
import sys
import textwrap

import pytest

from compilelint.verify import proc

MODEL = textwrap.dedent("""\
    import torch


    @torch.compile
    def f(x):
        if x.dim() != 3:
            raise ValueError("needs 3 dims")
        print(x)
        return x


    def make():
        return f, (torch.ones(2),), {}
""")


def verify(cwd, *args):
    env = {k: v for k, v in os.environ.items() if not k.startswith("COMPILELINT")}
    return subprocess.run([sys.executable, "-m", "compilelint", "verify", *args], cwd=str(cwd), env=env,
                          capture_output=True, text=True, timeout=300)


def test_a_failing_run_command_is_reported_and_fails_verify(write_tree):
    tree = write_tree({"model.py": MODEL})
    r = verify(tree, "model.py", "--run", f"{sys.executable} -c 'import sys; sys.exit(3)'")
    assert "the command exited with status 3" in r.stderr, r.stderr
    assert r.returncode == 2, r.stdout + r.stderr


@pytest.mark.slow
def test_a_target_raising_in_eager_is_reported_with_its_reason(write_tree):
    pytest.importorskip("torch")
    tree = write_tree({"model.py": MODEL})
    r = verify(tree, "model.py", "--example", "model.py:make", "--device", "cpu")
    assert "model.py:8:5: CL201" in r.stdout, r.stdout + r.stderr
    assert "[error: raised in eager: ValueError: needs 3 dims]" in r.stdout
    assert "#0 f: raised in eager: ValueError: needs 3 dims" in r.stderr, r.stderr
    assert r.returncode == 2


def test_the_timeout_clock_starts_when_the_child_says_it_is_ready(tmp_path):
    marker = tmp_path / "ready"
    slow_setup = f"import time; time.sleep(1.5); open({str(marker)!r}, 'w').close(); time.sleep(0.2)"
    out = proc.run([sys.executable, "-c", slow_setup], env=dict(os.environ), cwd=str(tmp_path), timeout=1.0,
                   memory_limit_mb=0, started=marker.exists)
    assert not out.timed_out and out.returncode == 0
    marker.unlink()
    hangs = f"open({str(marker)!r}, 'w').close(); import time; time.sleep(30)"
    out = proc.run([sys.executable, "-c", hangs], env=dict(os.environ), cwd=str(tmp_path), timeout=1.0,
                   memory_limit_mb=0, started=marker.exists)
    assert out.timed_out
