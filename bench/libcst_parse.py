"""Baseline: bare ``libcst.parse_module`` over files, with N processes.

    python bench/libcst_parse.py -j 2 FILE_OR_DIR ...
    python bench/libcst_parse.py -j 2 --files-from LIST    # one path a line

bench/run.py runs this as a subprocess and measures it exactly like the
linters (wall clock, user+sys CPU of the process tree, peak RSS), so Python
startup and the libcst import are part of the baseline too.
"""

from __future__ import annotations

import argparse
import multiprocessing
import os
import sys
from pathlib import Path

import libcst


def parse_one(path: str) -> bool:
    """Parse one file from its bytes (libcst detects the encoding); False on a syntax error."""
    with open(path, "rb") as f:
        source = f.read()
    try:
        libcst.parse_module(source)
    except libcst.ParserSyntaxError:
        return False
    return True


def gather(paths: list[str]) -> list[str]:
    files: list[str] = []
    for p in map(Path, paths):
        if p.is_dir():
            files.extend(str(f) for f in sorted(p.rglob("*.py")))
        else:
            files.append(str(p))
    return files


def main() -> int:
    parser = argparse.ArgumentParser(description="bare libcst.parse_module baseline")
    parser.add_argument("paths", nargs="*")
    parser.add_argument("--files-from", help="file with one path a line")
    parser.add_argument("-j", "--jobs", type=int, default=os.cpu_count() or 1)
    args = parser.parse_args()

    files = gather(args.paths)
    if args.files_from:
        files += Path(args.files_from).read_text().split("\n")
        files = [f for f in files if f]

    if args.jobs <= 1 or len(files) <= 1:
        results = [parse_one(f) for f in files]
    else:
        with multiprocessing.Pool(args.jobs) as pool:
            results = pool.map(parse_one, files, chunksize=4)
            pool.close()
            pool.join()  # reap the workers, so their CPU time counts for our parent
    failed = results.count(False)
    print(f"parsed {len(files) - failed} files, {failed} syntax errors", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
