"""Pre-commit in a big checkout: one file named, its whole project read for reach.

    python bench/big_checkout.py CHECKOUT FILE [--python A --python B] [--edits 5]

CHECKOUT is a git checkout (vLLM's sources: the .py files of the vllm wheel of bench/corpus.py,
`git init` and one commit); FILE is the file a commit touches, relative to it. For each Python
(an interpreter with compilelint installed; default: this one) it times, as whole processes
(startup included), `compilelint check FILE` run from CHECKOUT:
- cold: no cache (the first run of a pre-commit hook);
- unchanged: nothing changed since the last run;
- edited: FILE changed since the last run (a line appended, as an editor's save).
Several Pythons take turns within each round, so a machine that gets busier weighs on all alike.
Prints each case's median wall and CPU seconds (the processes' user + system) per Python; the file
is restored at the end. Each Python keeps its own cache folder, so none reads another's entries.
"""
from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time


def timed(python: str, checkout: str, path: str, cache: str) -> tuple:
    """(wall seconds, CPU seconds) of one `compilelint check` process."""
    before, start = os.times(), time.perf_counter()
    subprocess.run([python, "-m", "compilelint", "check", "--cache-dir", cache, "--exit-zero", "-q", path],
                   cwd=checkout, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
    after = os.times()
    cpu = (after.children_user - before.children_user) + (after.children_system - before.children_system)
    return time.perf_counter() - start, cpu


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("checkout")
    ap.add_argument("file")
    ap.add_argument("--python", action="append", default=[], help="an interpreter with compilelint (repeatable)")
    ap.add_argument("--edits", type=int, default=5, help="edited and unchanged runs per Python")
    args = ap.parse_args(argv)
    pythons = args.python or [sys.executable]
    target = os.path.join(args.checkout, args.file)
    with open(target, "rb") as f:
        original = f.read()
    caches = {p: tempfile.mkdtemp(prefix="compilelint-big-") for p in pythons}
    times = {p: {"cold": [], "unchanged": [], "edited": []} for p in pythons}
    try:
        for p in pythons:
            times[p]["cold"].append(timed(p, args.checkout, args.file, caches[p]))
        for i in range(args.edits):
            for p in pythons if i % 2 == 0 else reversed(pythons):
                with open(target, "ab") as f:
                    f.write(f"# edit {i} {time.time()}\n".encode())
                times[p]["edited"].append(timed(p, args.checkout, args.file, caches[p]))
                times[p]["unchanged"].append(timed(p, args.checkout, args.file, caches[p]))
    finally:
        with open(target, "wb") as f:
            f.write(original)
        for cache in caches.values():
            shutil.rmtree(cache, ignore_errors=True)
    print(f"{args.file} in {args.checkout}; load average {os.getloadavg()[0]:.1f}")
    print("| python | case | runs | wall s (median) | CPU s (median) |")
    print("|---|---|--:|--:|--:|")
    for p in pythons:
        for case, runs in times[p].items():
            print(f"| {p} | {case} | {len(runs)} | {statistics.median(w for w, _ in runs):.2f} "
                  f"| {statistics.median(c for _, c in runs):.2f} |")


if __name__ == "__main__":
    main()
