"""Running the real CLI on fixture copies for the --fix tests (and regenerating golden files)."""
import os
import shutil
import stat
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
FIX_DIR = os.path.join(ROOT, "fixtures", "fix")
MODES = {"fixed": ["--fix"], "unsafe-fixed": ["--fix", "--unsafe-fixes"]}

# noparse.py: the CL101 fix is swapped for one that deletes the call's closing parenthesis, so the
# result can't parse; the run must leave the file byte for byte as it was.
BROKEN_FIX = """
import sys
from compilelint.finding import Edit, Fix, Span
import compilelint.rules.tensor_item as rule

def broken(ctx, call):
    sp = ctx.span(call)
    return Fix("unsafe", "broken on purpose", (Edit("", Span(sp.end_row, sp.end_col - 1, sp.end_row, sp.end_col)),))

rule.drop_item = broken
from compilelint.cli import main
sys.argv = ["compilelint"] + sys.argv[1:]
main()
"""


def cases():
    return sorted(n[:-3] for n in os.listdir(FIX_DIR)
                  if n.endswith(".py") and not n.endswith((".fixed.py", ".unsafe-fixed.py")))


def run_cli(args, cwd, case=None, input=None) -> subprocess.CompletedProcess:
    """`compilelint ARGS` in `cwd`. In this process (click's runner: a subprocess per run cost a
    third of a second of imports, 88 runs in test_fix.py), where an exception fails the test
    instead of becoming a traceback on stderr; `noparse`'s swapped fix builder must not outlive its
    run, so that case runs in a subprocess."""
    if case == "noparse":
        env = dict(os.environ, NO_COLOR="1")
        env.pop("COMPILELINT_OUTPUT_FORMAT", None)
        return subprocess.run([sys.executable, "-c", BROKEN_FIX] + list(args), cwd=cwd, env=env, capture_output=True,
                              input=input, timeout=300)
    from click.testing import CliRunner

    from compilelint.cli import main

    here = os.getcwd()
    os.chdir(cwd)
    try:
        result = CliRunner().invoke(main, list(args), input=input,
                                    env={"NO_COLOR": "1", "COMPILELINT_OUTPUT_FORMAT": None})
    finally:
        os.chdir(here)
    if result.exception is not None and not isinstance(result.exception, SystemExit):
        raise result.exception
    return subprocess.CompletedProcess(["compilelint", *args], result.exit_code, result.stdout_bytes,
                                       result.stderr_bytes)


def prepare(case, tmp):
    """Copy the fixture into `tmp` (read-only for `readonly`); return the copy's path."""
    dst = os.path.join(tmp, case + ".py")
    shutil.copyfile(os.path.join(FIX_DIR, case + ".py"), dst)
    if case == "readonly":
        os.chmod(dst, stat.S_IRUSR | stat.S_IRGRP | stat.S_IROTH)
    return dst


def fix_args(mode, name):
    return ["check", *MODES[mode], "--no-cache", "--isolated", name]


if __name__ == "__main__":  # regenerate the golden files (review the diff before committing)
    import tempfile

    for case in cases():
        for mode in MODES:
            with tempfile.TemporaryDirectory() as tmp:
                path = prepare(case, tmp)
                run_cli(fix_args(mode, case + ".py"), tmp, case)
                with open(path, "rb") as f:
                    data = f.read()
            with open(os.path.join(FIX_DIR, f"{case}.{mode}.py"), "wb") as f:
                f.write(data)
            print(case, mode)
