"""Benchmark compilelint against a bare libcst parse and TorchFix on real model code.

    python bench/corpus.py && python bench/run.py
    python bench/run.py --quick --corpus timm          # smoke test: 1 run, one corpus
    python bench/run.py --runs 5 -j 2 --json out.json

Every tool runs as a subprocess and is measured the same way: wall clock, CPU
(user+sys of the whole process tree, from os.wait4, which includes reaped
worker processes) and peak RSS (ru_maxrss of the tree's largest process).
Each number is the median of --runs runs. The parse and the cold check take
turns, run by run; the cold row's note gives the median of their paired CPU
ratios, which a drift of a shared machine's speed moves least. Lines are
physical lines of the .py files. See bench/README.md.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shlex
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections import Counter
from dataclasses import asdict, dataclass, field
from importlib.metadata import version as dist_version
from pathlib import Path

BENCH = Path(__file__).resolve().parent
REPO = BENCH.parent
sys.path.insert(0, str(BENCH))
import corpus as corpus_mod  # noqa: E402
import torchfix_env  # noqa: E402

PARSE = "libcst parse"
TORCHFIX = "TorchFix"


@dataclass
class Measure:
    wall: float  # seconds
    cpu: float  # user+sys seconds of the process tree
    rss_mb: float  # peak RSS of the largest process in the tree
    rc: int
    stdout: str = ""
    stderr: str = ""


@dataclass
class Row:
    corpus: str
    files: int
    lines: int
    tool: str
    wall: float | None = None
    cpu: float | None = None
    rss_mb: float | None = None
    note: str = ""
    extra: dict = field(default_factory=dict)

    @property
    def lines_per_s(self) -> float | None:
        return self.lines / self.wall if self.wall else None

    @property
    def lines_per_cpu_s(self) -> float | None:
        return self.lines / self.cpu if self.cpu else None


# ---------------------------------------------------------------- measuring


def measure_once(cmd: list[str], cwd: Path | None = None, env: dict | None = None) -> Measure:
    """Run cmd to completion; times and RSS come from os.wait4 on that one child."""
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        start = time.perf_counter()
        proc = subprocess.Popen(cmd, stdout=out, stderr=err, cwd=cwd, env=env)
        _, status, usage = os.wait4(proc.pid, 0)
        wall = time.perf_counter() - start
        proc.returncode = os.waitstatus_to_exitcode(status)  # already reaped: tell Popen
        out.seek(0)
        err.seek(0)
        return Measure(wall=wall, cpu=usage.ru_utime + usage.ru_stime,
                       rss_mb=usage.ru_maxrss / 1024,  # Linux: KiB
                       rc=proc.returncode,
                       stdout=out.read().decode(errors="replace"),
                       stderr=err.read().decode(errors="replace"))


def measure(cmd: list[str], runs: int, cwd: Path | None = None, env: dict | None = None) -> Measure:
    """Median wall and median CPU of `runs` runs; the largest RSS; the last run's output."""
    return summary([measure_once(cmd, cwd, env) for _ in range(runs)])


def summary(results: list[Measure]) -> Measure:
    last = results[-1]
    bad = [r for r in results if r.rc != 0]
    return Measure(wall=statistics.median(r.wall for r in results),
                   cpu=statistics.median(r.cpu for r in results),
                   rss_mb=max(r.rss_mb for r in results),
                   rc=bad[0].rc if bad else 0,
                   stdout=last.stdout, stderr=(bad[0] if bad else last).stderr)


def tail(text: str, n: int = 6) -> str:
    return "\n".join("    " + line for line in text.strip().splitlines()[-n:])


# ---------------------------------------------------------------- tools


class Compilelint:
    """The compilelint CLI, or why it can't be run."""

    def __init__(self, command: str | None, workdir: Path):
        self.env = dict(os.environ)
        self.workdir = workdir  # cwd of every run: a cache written to cwd stays out of the repo
        if command:
            self.cmd = shlex.split(command)
        elif (Path(sys.executable).parent / "compilelint").exists():
            self.cmd = [str(Path(sys.executable).parent / "compilelint")]
        elif shutil.which("compilelint"):
            self.cmd = [shutil.which("compilelint")]
        else:  # not installed: import it from the working tree
            self.cmd = [sys.executable, "-c", "from compilelint.cli import main; main()"]
            self.env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(REPO), self.env.get("PYTHONPATH")]))
        self.available = False
        self.why = ""
        self.has_no_prefilter = False
        self.common: list[str] = []
        try:
            help_run = measure_once(self.cmd + ["check", "--help"], workdir, self.env)
        except OSError as e:
            self.why = str(e)
            return
        if help_run.rc != 0:
            self.why = tail(help_run.stderr or help_run.stdout, 3)
            return
        self.available = True
        self.has_no_prefilter = "--no-prefilter" in help_run.stdout
        # reproducible runs: no configuration file found above the corpus, the cache in our temp dir
        self.common = ["--isolated"] if "--isolated" in help_run.stdout else []
        if "--cache-dir" in help_run.stdout:
            self.common += ["--cache-dir", str(workdir / "cache")]
        version = measure_once(self.cmd + ["--version"], workdir, self.env)
        self.version = (version.stdout.strip() or "?") if version.rc == 0 else "?"

    def check(self, paths: list[Path], *options: str) -> list[str]:
        return (self.cmd + ["check", "--exit-zero", "--output-format", "json", *self.common, *options]
                + [str(p) for p in paths])

    def run(self, paths, runs, *options) -> Measure:
        return measure(self.check(paths, *options), runs, self.workdir, self.env)


def findings_of(stdout: str) -> list[str]:
    """Findings from JSON output, each as a canonical string (for a multiset compare)."""
    try:
        data = json.loads(stdout)
    except ValueError:
        return stdout.splitlines()
    if isinstance(data, dict):
        data = data.get("findings", data.get("results", [data]))
    return sorted(json.dumps(item, sort_keys=True) for item in data)


def count_difference(a: list[str], b: list[str]) -> int:
    ca, cb = Counter(a), Counter(b)
    return sum(((ca - cb) + (cb - ca)).values())


# ---------------------------------------------------------------- benchmark


def row_from(base: Row, tool: str, m: Measure, note: str = "") -> Row:
    if m.rc != 0:
        note = (note + f" rc={m.rc}").strip()
    return Row(base.corpus, base.files, base.lines, tool, m.wall, m.cpu, m.rss_mb, note)


def bench_target(name: str, paths: list[Path], files: list[Path], args, cl: Compilelint,
                 torchfix: Path | None, workdir: Path) -> list[Row]:
    lines = corpus_mod.count_lines(files)
    base = Row(name, len(files), lines, "")
    rows: list[Row] = []
    jobs = str(args.jobs)
    say = lambda msg: print(f"[{name}] {msg}", file=sys.stderr, flush=True)  # noqa: E731

    listing = workdir / f"{name}.files"
    listing.write_text("\n".join(map(str, files)) + "\n")
    say(f"{PARSE}: {len(files)} files, {lines} lines" + (", and compilelint --no-cache" if cl.available else ""))
    # The parse and the cold check take turns, so that a drift of the shared machine's speed falls
    # on both; each pair's CPU ratio is kept, and their median is the row's "paired" ratio.
    parse_cmd = [sys.executable, str(BENCH / "libcst_parse.py"), "-j", jobs, "--files-from", str(listing)]
    parses, colds = [], []
    for _ in range(args.runs):
        parses.append(measure_once(parse_cmd))
        if cl.available:
            colds.append(measure_once(cl.check(paths, "--no-cache", "-j", jobs), cl.workdir, cl.env))
    rows.append(row_from(base, PARSE, summary(parses)))

    if cl.available:
        cold = summary(colds)
        if cold.rc != 0:
            say("compilelint failed:\n" + tail(cold.stderr))
        paired = statistics.median(c.cpu / p.cpu for c, p in zip(colds, parses) if p.cpu)
        cold_row = row_from(base, "compilelint", cold, f"cold, --no-cache; paired {paired:.2f}x")
        cold_row.extra["paired_cpu_ratios"] = [round(c.cpu / p.cpu, 3) for c, p in zip(colds, parses) if p.cpu]
        rows.append(cold_row)

        say("compilelint warm (cache on; a first run fills the cache)")
        measure_once(cl.check(paths, "-j", jobs), cl.workdir, cl.env)
        warm = cl.run(paths, args.runs, "-j", jobs)
        rows.append(row_from(base, "compilelint warm", warm, "2nd run, cache on"))

        if cl.has_no_prefilter:
            say("compilelint --no-prefilter (findings compare)")
            nopre = measure_once(cl.check(paths, "--no-cache", "--no-prefilter", "-j", jobs),
                                 cl.workdir, cl.env)
            diff = count_difference(findings_of(cold.stdout), findings_of(nopre.stdout))
            verdict = "identical" if diff == 0 and nopre.rc == 0 else f"{diff} findings differ"
            n = len(findings_of(cold.stdout))
            print(f"[{name}] prefilter vs --no-prefilter: {verdict} ({n} findings; "
                  f"--no-prefilter wall {nopre.wall:.2f}s, cpu {nopre.cpu:.2f}s, 1 run)", flush=True)
            cold_row.extra["prefilter_compare"] = {"verdict": verdict, "difference": diff, "findings": n,
                                                  "no_prefilter_wall": nopre.wall,
                                                  "no_prefilter_cpu": nopre.cpu}
        else:
            print(f"[{name}] prefilter compare skipped: compilelint check has no --no-prefilter yet",
                  flush=True)

    if torchfix is not None:
        if name == "all" and not args.torchfix_all:
            rows.append(sum_rows(base, TORCHFIX, rows_by_tool.get(TORCHFIX, [])))
        else:
            say("TorchFix (default rules)")
            m = measure([str(torchfix), "-j", jobs] + [str(p) for p in paths], args.torchfix_runs or args.runs)
            # TorchFix exits 1 when a file fails to process; that is a result, not a crash
            rows.append(row_from(base, TORCHFIX, m, "" if m.rc in (0, 1) else "crashed"))
            if m.rc not in (0, 1):
                say("TorchFix failed:\n" + tail(m.stderr))
    return rows


rows_by_tool: dict[str, list[Row]] = {}  # per-corpus rows, to add up for "all" where asked


def sum_rows(base: Row, tool: str, rows: list[Row]) -> Row:
    row = Row(base.corpus, base.files, base.lines, tool, note="sum of the corpora (--torchfix-all runs it)")
    if rows:
        row.wall = sum(r.wall for r in rows)
        row.cpu = sum(r.cpu for r in rows)
        row.rss_mb = max(r.rss_mb for r in rows)
    return row


def bench_single_file(name: str, path: Path, args, cl: Compilelint, torchfix: Path | None) -> list[Row]:
    """One typical model file, default options (no -j), startup included."""
    base = Row(f"{name}:1 file", 1, corpus_mod.count_lines([path]), "")
    print(f"[{name}] single file {path.name}", file=sys.stderr, flush=True)
    rows = [row_from(base, PARSE, measure([sys.executable, str(BENCH / "libcst_parse.py"), str(path)],
                                          args.runs))]
    if cl.available:
        rows.append(row_from(base, "compilelint", cl.run([path], args.runs, "--no-cache"), "cold, --no-cache"))
    if torchfix is not None:
        rows.append(row_from(base, TORCHFIX, measure([str(torchfix), str(path)], args.runs)))
    rows[0].extra["file"] = str(path)
    return rows


def bench_one_changed_file(name: str, corpus: Path, typical: Path, args, cl: Compilelint, workdir: Path) -> list[Row]:
    """A warm tree with one edited file, against checking that file alone (the pre-commit case).

    The corpus is copied so the edit never touches it; each timed run edits the file anew, so the
    edited file always misses the cache while the others hit."""
    if not cl.available:
        return []
    tree = workdir / f"edit-{name}"
    shutil.copytree(corpus, tree)
    edited = tree / typical.relative_to(corpus)
    base = Row(f"{name}:1 changed", len(corpus_mod.py_files(tree)), corpus_mod.count_lines(corpus_mod.py_files(tree)), "")
    print(f"[{name}] warm tree, one changed file ({edited.name})", file=sys.stderr, flush=True)
    measure_once(cl.check([tree], "-j", str(args.jobs)), cl.workdir, cl.env)  # fill the cache
    original = edited.read_text()
    results = []
    for i in range(args.runs):
        edited.write_text(original + f"\n# edit {i} {time.time()}\n")
        results.append(measure_once(cl.check([tree], "-j", str(args.jobs)), cl.workdir, cl.env))
    results.sort(key=lambda m: m.wall)
    mid = results[len(results) // 2]
    alone = cl.run([edited], args.runs, "--no-cache")
    changed = row_from(base, "compilelint 1 changed", mid, f"warm tree, {edited.name} edited")
    single = row_from(Row(f"{name}:1 changed", 1, corpus_mod.count_lines([edited]), ""),
                      "compilelint that file alone", alone, "--no-cache")
    changed.extra["vs_single_file_wall"] = round(mid.wall / alone.wall, 2) if alone.wall else None
    return [changed, single]


# ---------------------------------------------------------------- report


def fmt(value, spec: str) -> str:
    return "-" if value is None else format(value, spec)


def ratio(row: Row, ref: Row | None) -> str:
    """CPU of this row / CPU of the reference on the same files: 2.0x = twice the CPU."""
    if ref is None or row is ref or not row.cpu or not ref.cpu:
        return "-"
    return f"{row.cpu / ref.cpu:.2f}x"


def print_table(rows: list[Row]) -> None:
    header = ["corpus", "files", "lines", "tool", "wall s", "CPU s", "lines/s", "lines/CPU-s",
              "CPU vs parse", "CPU vs TorchFix", "peak RSS MB", "note"]
    table = [header]
    for row in rows:
        same = [r for r in rows if r.corpus == row.corpus]
        parse = next((r for r in same if r.tool == PARSE), None)
        tfix = next((r for r in same if r.tool == TORCHFIX), None)
        table.append([row.corpus, str(row.files), str(row.lines), row.tool, fmt(row.wall, ".2f"),
                      fmt(row.cpu, ".2f"), fmt(row.lines_per_s, ",.0f"), fmt(row.lines_per_cpu_s, ",.0f"),
                      ratio(row, parse), ratio(row, tfix), fmt(row.rss_mb, ".0f"), row.note])
    widths = [max(len(r[i]) for r in table) for i in range(len(header))]
    left = {0, 3, 11}
    for i, r in enumerate(table):
        print("  ".join(c.ljust(w) if j in left else c.rjust(w) for j, (c, w) in enumerate(zip(r, widths))))
        if i == 0:
            print("  ".join("-" * w for w in widths))


def environment(args, cl: Compilelint, torchfix: Path | None) -> dict:
    return {
        "python": platform.python_version(),
        "platform": platform.platform(),
        "cores": os.cpu_count(),
        "jobs": args.jobs,
        "runs": args.runs,
        "libcst": dist_version("libcst"),
        "torchfix": torchfix_env.versions() if torchfix else None,
        "compilelint": (getattr(cl, "version", None) if cl.available
                        else "skipped" if args.no_compilelint else "not available"),
        "corpora": {n: f"{d}=={v} {s}" for n, (d, v, s) in corpus_mod.CORPORA.items()},
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3, help="runs per measurement; the median is kept")
    parser.add_argument("-j", "--jobs", type=int, default=os.cpu_count() or 1, help="processes (default: cores)")
    parser.add_argument("--corpus", action="append", choices=list(corpus_mod.CORPORA),
                        help="only this corpus (repeatable); default: all four, then all together")
    parser.add_argument("--quick", action="store_true", help="1 run per measurement (smoke test)")
    parser.add_argument("--json", metavar="FILE", help="also write the results as JSON")
    parser.add_argument("--compilelint", metavar="CMD",
                        help="compilelint command (default: the one next to this Python, else the working tree)")
    parser.add_argument("--no-compilelint", action="store_true", help="skip compilelint (baselines only)")
    parser.add_argument("--no-torchfix", action="store_true", help="skip TorchFix (it is slow)")
    parser.add_argument("--torchfix-runs", type=int, help="runs for TorchFix (default: --runs)")
    parser.add_argument("--torchfix-all", action="store_true",
                        help="also run TorchFix over all corpora together (default: add up the corpora)")
    parser.add_argument("--no-single-file", action="store_true", help="skip the single-file runs")
    args = parser.parse_args()
    if args.quick:
        args.runs = 1
        args.torchfix_runs = 1

    names = args.corpus or list(corpus_mod.CORPORA)
    dirs = {n: corpus_mod.ensure(n) for n in names}
    torchfix = None if args.no_torchfix else torchfix_env.ensure()

    load_before = os.getloadavg()[0]
    with tempfile.TemporaryDirectory(prefix="compilelint-bench-") as tmp:
        workdir = Path(tmp)
        cl = Compilelint("false" if args.no_compilelint else args.compilelint, workdir)
        if args.no_compilelint:
            cl.why = "skipped (--no-compilelint)"
        elif not cl.available:
            print(f"compilelint not available ({' '.join(cl.cmd)}):\n{cl.why}", flush=True)

        rows: list[Row] = []
        all_files: list[Path] = []
        for name, d in dirs.items():
            files = corpus_mod.py_files(d)
            all_files += files
            corpus_rows = bench_target(name, [d], files, args, cl, torchfix, workdir)
            for r in corpus_rows:
                rows_by_tool.setdefault(r.tool, []).append(r)
            rows += corpus_rows
            print_table(corpus_rows)  # progress: the full table comes at the end
            print(flush=True)
        if len(dirs) > 1:
            rows += bench_target("all", list(dirs.values()), all_files, args, cl, torchfix, workdir)
        if not args.no_single_file:
            for name, d in dirs.items():
                rows += bench_single_file(name, corpus_mod.typical_file(name, d), args, cl, torchfix)
                rows += bench_one_changed_file(name, d, corpus_mod.typical_file(name, d), args, cl, workdir)

        env = environment(args, cl, torchfix)
        # other work on the machine inflates wall times (CPU times much less): keep a trace of it
        env["loadavg_1min"] = f"{load_before:.2f} before, {os.getloadavg()[0]:.2f} after"

    print()
    print(", ".join(f"{k} {v}" for k, v in env.items() if k != "corpora"))
    print_table(rows)
    if args.json:
        data = {"environment": env,
                "rows": [dict(asdict(r), lines_per_s=r.lines_per_s, lines_per_cpu_s=r.lines_per_cpu_s)
                         for r in rows]}
        Path(args.json).write_text(json.dumps(data, indent=2) + "\n")
        print(f"wrote {args.json}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
