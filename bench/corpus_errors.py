"""Never crash on real code: run compilelint over the whole benchmark corpus (~820k lines of timm,
vLLM, SGLang and diffusers model code) and assert that no file gets an `internal error`.

    .venv/bin/python bench/corpus_errors.py            # the three passes below, all four corpora
    .venv/bin/python bench/corpus_errors.py --quick    # only the default `check` pass
    .venv/bin/python bench/corpus_errors.py --corpus vllm --corpus timm

Passes (each a fresh `compilelint check --no-cache` subprocess over all corpora at once):

1. `check` with the default settings;
2. `check --select ALL --scope all --profile vllm` (every rule, every function is a root);
3. `check --select ALL --unsafe-fixes --diff` (every fix built and applied in memory, nothing
   written: exercises the fixers, the re-parse checks and the fix rounds);
4. (not with --quick) the default pass again with a fresh cache, cold then warm: both must print
   exactly what the uncached pass printed.

An internal error is compilelint's own bug (a per-file `compilelint: error: PATH: internal error:
...` line, or the whole run's `compilelint: error: internal error: ...`), as is a traceback or an
exit status other than 0/1 (2 is accepted only when every error line is an expected one such as a
syntax error in the corpus). Prints the offending lines and exits 1 if there are any; prints
`files=N internal_errors=0` per pass otherwise. Not a unit test: the corpus is not in CI (fetch it
with `bench/corpus.py`). Standard library only.
"""
from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from corpus import CORPORA, cache_dir  # noqa: E402

PASSES = {
    "default": [],
    "all-rules": ["--select", "ALL", "--scope", "all", "--profile", "vllm"],
    "fix-diff": ["--select", "ALL", "--unsafe-fixes", "--diff"],
}


def compilelint_cmd() -> list:
    exe = Path(sys.executable).with_name("compilelint")
    if exe.exists():
        return [str(exe)]
    return [sys.executable, "-m", "compilelint"]


def corpus_dirs(names) -> list:
    src = cache_dir() / "src"
    dirs = []
    for name in names:
        dist, version, sub = CORPORA[name]
        d = src / f"{dist}-{version}" / sub
        if not d.is_dir():
            sys.exit(f"corpus_errors: {d} is missing; run bench/corpus.py first")
        dirs.append(str(d))
    return dirs


def count_files(dirs) -> int:
    return sum(1 for d in dirs for _, _, files in os.walk(d) for f in files if f.endswith((".py", ".pyi")))


def run_pass(name: str, extra: list, dirs: list, cache_dir=None, expect=None) -> list:
    """The problems one pass found (empty: none)."""
    cache = ["--cache-dir", cache_dir] if cache_dir else ["--no-cache"]
    cmd = compilelint_cmd() + ["check", *cache, "--output-format", "concise", *extra, *dirs]
    start = time.perf_counter()
    out = subprocess.run(cmd, capture_output=True, text=True, errors="replace")
    took = time.perf_counter() - start
    problems = []
    error_lines = [line for line in out.stderr.splitlines() if line.startswith("compilelint: error:")]
    for line in out.stderr.splitlines() + out.stdout.splitlines():
        if "internal error" in line or line.startswith("Traceback"):
            problems.append(line)
    if out.returncode not in (0, 1, 2) or (out.returncode == 2 and not error_lines):
        problems.append(f"exit status {out.returncode}; stderr tail:\n{out.stderr[-3000:]}")
    if expect is not None and (out.stdout, out.stderr) != expect:
        problems.append("the cached run printed something else than the uncached one")
    run_pass.last = (out.stdout, out.stderr)
    n_internal = sum(1 for p in problems if "internal error" in p)
    other = [line for line in error_lines if "internal error" not in line]
    print(f"{name:10s} files={count_files(dirs)} internal_errors={n_internal} other_file_errors={len(other)} "
          f"exit={out.returncode} time={took:.1f}s", flush=True)
    for line in other:
        print(f"    (expected) {line}")
    return problems


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--corpus", action="append", choices=sorted(CORPORA), help="repeatable; default all")
    ap.add_argument("--quick", action="store_true", help="only the default pass")
    args = ap.parse_args(argv)
    dirs = corpus_dirs(args.corpus or list(CORPORA))
    passes = {"default": PASSES["default"]} if args.quick else PASSES
    problems = []
    for name, extra in passes.items():
        problems += [f"[{name}] {p}" for p in run_pass(name, extra, dirs)]
        if name == "default":
            uncached = run_pass.last
    if not args.quick:
        with tempfile.TemporaryDirectory() as tmp:
            for name in ("cold-cache", "warm-cache"):
                problems += [f"[{name}] {p}" for p in run_pass(name, [], dirs, cache_dir=tmp, expect=uncached)]
    internal = [p for p in problems if re.search(r"internal error", p)]
    if problems:
        print(f"\n{len(internal)} internal error(s), {len(problems)} problem(s):")
        for p in problems:
            print(p)
        return 1
    print("OK: zero internal errors")
    return 0


if __name__ == "__main__":
    sys.exit(main())
