"""Pre-commit in a big checkout: one file named, its whole project read for reach.

    python bench/big_checkout.py CHECKOUT FILE [--python A --python B] [--edits 5] [--edit comment --edit code]

CHECKOUT is a git checkout (vLLM's sources: the .py files of the vllm wheel of bench/corpus.py,
`git init` and one commit); FILE is the file a commit touches, relative to it. For each Python
(an interpreter with compilelint installed; default: this one) it times, as whole processes
(startup included), `compilelint check FILE` run from CHECKOUT:
- cold: no cache (the first run of a pre-commit hook);
- unchanged: nothing changed since the last run;
- edited: FILE changed since the last run, as an editor's save: `--edit comment` appends a comment
  line (an edit the file's summary does not show: the last project pass stands), `--edit code` a
  module-level function (the summary changes: the project pass runs again), `--edit body` a local
  assignment inside an existing function's body (`--body-function`, default the first `forward`:
  that function's summary and every row below it change, its interface does not), `--edit break`
  a `print` (a graph break) the same way in `--break-function` (default the first `load_weights`:
  for llama.py a function no compiled code reaches), `--edit reached-break` the same `print` into
  `--body-function` (the first `forward`: compiled code reaches it, so the findings change and the
  project pass must say so); each kind given takes
  its turn in every round, and each Python's edits are made to the text it last checked (not to
  another Python's edits).
Several Pythons take turns within each round, so a machine that gets busier weighs on all alike.
Prints each case's median wall and CPU seconds (the processes' user + system) per Python, and
whether every run of a Python reported what a fresh project pass reports (`--output-format json`):
its cold run for an unchanged text, and for an edited text a run (not timed) over a copy of its
cold cache without the kept passes, runs and reach (the summaries are keyed by content, so that
run analyses the edited file and runs the whole pass); and the Pythons' cold runs the same; the
file is restored at the end. Each Python keeps its own cache folder, so none reads another's entries.
"""
from __future__ import annotations

import argparse
import ast
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time


def timed(python: str, checkout: str, path: str, cache: str) -> tuple:
    """(wall seconds, CPU seconds, the findings as JSON) of one `compilelint check` process."""
    before, start = os.times(), time.perf_counter()
    out = subprocess.run([python, "-m", "compilelint", "check", "--cache-dir", cache, "--exit-zero",
                          "--output-format", "json", path],
                         cwd=checkout, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, check=True).stdout
    after = os.times()
    cpu = (after.children_user - before.children_user) + (after.children_system - before.children_system)
    return time.perf_counter() - start, cpu, out


EDITS = {"comment": "# edit {i} {t}\n", "code": "\n\ndef _bench_edit_{i}(x):\n    return x + {i}\n",
         "body": "_bench_local_{i} = {i}", "break": "print('bench edit {i}')",
         "reached-break": "print('bench edit {i}')"}
# The cache entries a fresh pass must not find: kept passes, whole runs, reach, frames' edges, parsed defs.
NOT_FRESH = ("pass-", "run-", "reach-", "edges-", "defs-")


def edited(text: bytes, kind: str, i: int, function: str) -> bytes:
    """`text` after the round's edit of this kind: appended, or for "body" and "break" a line inserted
    before the last statement of `function`'s body (its first def of that name; else the first def
    with two statements or more)."""
    edit = EDITS[kind].format(i=i, t=time.time())
    if kind not in ("body", "break", "reached-break"):
        return text + edit.encode()
    defs = [n for n in ast.walk(ast.parse(text)) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))
            and len(n.body) >= 2]
    target = next((n for n in defs if n.name == function), defs[0] if defs else None)
    if target is None:
        raise SystemExit(f"--edit {kind}: the file has no function of two statements or more")
    last = target.body[-1]
    lines = text.split(b"\n")
    lines.insert(last.lineno - 1, b" " * last.col_offset + edit.encode())
    return b"\n".join(lines)


def fresh(python: str, checkout: str, path: str, cache: str) -> bytes:
    """The findings of a fresh project pass over `cache`'s summaries (its kept results removed)."""
    for folder, _, names in os.walk(cache):
        for name in names:
            if name.startswith(NOT_FRESH):
                os.unlink(os.path.join(folder, name))
    return timed(python, checkout, path, cache)[2]


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("checkout")
    ap.add_argument("file")
    ap.add_argument("--python", action="append", default=[], help="an interpreter with compilelint (repeatable)")
    ap.add_argument("--edits", type=int, default=5, help="edited and unchanged runs per Python")
    ap.add_argument("--edit", choices=sorted(EDITS), action="append", default=[],
                    help="what an edit appends or inserts (repeatable; default comment)")
    ap.add_argument("--body-function", default="forward", help="the function `--edit body` edits")
    ap.add_argument("--break-function", default="load_weights", help="the function `--edit break` edits")
    args = ap.parse_args(argv)
    pythons = args.python or [sys.executable]
    target = os.path.join(args.checkout, args.file)
    with open(target, "rb") as f:
        original = f.read()
    caches = {p: tempfile.mkdtemp(prefix="compilelint-big-") for p in pythons}
    references = {p: tempfile.mkdtemp(prefix="compilelint-big-fresh-") for p in pythons}
    kinds = args.edit or ["comment"]
    times = {p: {"cold": [], "unchanged": [], **{f"edited ({k})": [] for k in kinds}} for p in pythons}
    try:
        for p in pythons:
            times[p]["cold"].append(timed(p, args.checkout, args.file, caches[p]))
            shutil.rmtree(references[p])
            shutil.copytree(caches[p], references[p])
        agree = {p: True for p in pythons}  # every edited run reported what a fresh pass does
        texts = {p: original for p in pythons}  # each Python sees its own edits only
        for i in range(args.edits):
            for kind in kinds:
                for p in pythons if i % 2 == 0 else reversed(pythons):
                    function = args.break_function if kind == "break" else args.body_function
                    texts[p] = edited(texts[p], kind, i, function)
                    with open(target, "wb") as f:
                        f.write(texts[p])
                    run = timed(p, args.checkout, args.file, caches[p])
                    times[p][f"edited ({kind})"].append(run)
                    times[p]["unchanged"].append(timed(p, args.checkout, args.file, caches[p]))
                    agree[p] &= run[2] == times[p]["unchanged"][-1][2] == fresh(p, args.checkout, args.file, references[p])
    finally:
        with open(target, "wb") as f:
            f.write(original)
        for cache in list(caches.values()) + list(references.values()):
            shutil.rmtree(cache, ignore_errors=True)
    print(f"{args.file} in {args.checkout}; load average {os.getloadavg()[0]:.1f}")
    colds = [times[p]["cold"][0][2] for p in pythons]
    print(f"the Pythons' cold runs reported the same: {'yes' if len(set(colds)) == 1 else 'NO'}")
    for p in pythons:
        print(f"every run of {p} reported what a fresh pass over its text does: {'yes' if agree[p] else 'NO'}")
    print("| python | case | runs | wall s (median) | CPU s (median) |")
    print("|---|---|--:|--:|--:|")
    for p in pythons:
        for case, runs in times[p].items():
            print(f"| {p} | {case} | {len(runs)} | {statistics.median(r[0] for r in runs):.2f} "
                  f"| {statistics.median(r[1] for r in runs):.2f} |")


if __name__ == "__main__":
    main()
