"""Parent-side orchestration: start the isolated runs and read back what they observed.

The parent never imports torch or user code. `--example` runs one child per factory target (the
first child reports how many there are, the rest then run in a small pool); `--run` runs the user's
command once with the import hook on its PYTHONPATH. Both produce `Run`s: one per target, or one
per wrapped call, with the lines it reached, the events Dynamo reported, and any failure.
"""
from __future__ import annotations

import json
import os
import shutil
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Callable, Dict, List, Optional, Sequence, Tuple

from compilelint.verify import proc
from compilelint.verify.hook import SITECUSTOMIZE, SPEC_ENV

# The directory holding the `compilelint` package, so children import this very copy.
_PKG_ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


@dataclass
class Run:
    label: str
    entry: Optional[Tuple[str, int]] = None  # the function the run entered first
    reached: Optional[Dict[str, set]] = None  # None: the run died before reporting
    columns: Optional[Dict[str, set]] = None  # where instructions on the findings' rows started
    reach_unknown: bool = False  # the function ran, but only compiled: lines not traced
    events: list = field(default_factory=list)
    fullgraph: str = "not-run"
    fullgraph_where: Optional[Tuple[str, int]] = None
    error: str = ""


@dataclass
class Outcome:
    runs: List[Run]
    torch: str = ""
    device: str = ""
    error: str = ""  # a failure that concerns every finding (the factory did not load, ...)
    command: str = ""  # --run: how the user's command ended
    output_tail: str = ""  # --run: the last lines the command printed, when it failed


def _env() -> dict:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (_PKG_ROOT, env.get("PYTHONPATH", "")) if p)
    return env


def _records(path: str) -> List[dict]:
    out = []
    try:
        with open(path, encoding="utf-8") as f:
            for line in f:
                try:
                    out.append(json.loads(line))
                except ValueError:
                    continue  # a line cut short by a crash
    except OSError:
        pass
    return out


def run_child(module: str, spec: dict, *, prefix: str, env: dict, timeout: float, memory_limit_mb: int,
              started_on_output: bool = False) -> Tuple[proc.Outcome, List[dict]]:
    """`python -m <module> SPEC` in a child: `spec` written to a temporary JSON file, its `out` set to
    a temporary JSONL file the child writes its records to (both removed after). The child's outcome
    and its records. `started_on_output`: the timeout counts from the child's first record."""
    fd, out = tempfile.mkstemp(prefix=prefix, suffix=".jsonl")
    os.close(fd)
    spec_fd, spec_path = tempfile.mkstemp(prefix=prefix, suffix=".json")
    try:
        with os.fdopen(spec_fd, "w", encoding="utf-8") as f:
            json.dump(dict(spec, out=out), f)
        started = (lambda: os.path.getsize(out) > 0) if started_on_output else None
        res = proc.run([sys.executable, "-m", module, spec_path], env=env, cwd=os.getcwd(), timeout=timeout,
                       memory_limit_mb=memory_limit_mb, started=started)
        return res, _records(out)
    finally:
        for p in (out, spec_path):
            try:
                os.unlink(p)
            except OSError:
                pass


def _columns(raw: Optional[dict]) -> Dict[str, set]:
    return {os.path.realpath(f): {tuple(s) for s in v} for f, v in (raw or {}).items()}


# ---------------------------------------------------------------- --example


def _child_run(records: List[dict], label: str, failure: str) -> Tuple[Run, dict]:
    run = Run(label=label)
    meta: dict = {}
    phase = "setup"
    for r in records:
        t = r.get("type")
        if t == "start":
            meta = {"torch": r.get("torch", ""), "device": r.get("device", "")}
        elif t == "target":
            run.label = r.get("label") or label
            run.entry = tuple(r["entry"]) if r.get("entry") else None
        elif t == "phase":
            phase = r["phase"]
        elif t == "reached":
            run.reached = {os.path.realpath(f): set(v) for f, v in r["lines"].items()}
            run.columns = _columns(r.get("columns"))
        elif t == "events":
            run.events = r["events"]
        elif t == "fullgraph":
            run.fullgraph = r["result"]
            run.fullgraph_where = tuple(r["where"]) if r.get("where") else None
        elif t == "error" and not run.error:
            run.error = r["message"]
    done = any(r.get("type") == "done" for r in records)
    if failure and not done:
        # A crash while the compiled code ran is still a crash of that target; say where.
        run.error = f"{failure} during the {phase} run" if phase != "setup" else failure
    elif not done and not run.error:
        run.error = f"stopped during the {phase} run without reporting"
    return run, meta


def run_example(example: str, trace_files: Sequence[str], *, device: str, backend: str, timeout: float,
                memory_limit_mb: int, jobs: int, calls: int = 3,
                progress: Optional[Callable[[int, int, str], None]] = None,
                column_rows: Optional[Dict[str, List[int]]] = None) -> Outcome:
    tmp = tempfile.mkdtemp(prefix="compilelint-verify-")
    env, cwd = _env(), os.getcwd()

    def launch(index: int) -> Tuple[Run, dict, List[dict]]:
        out = os.path.join(tmp, f"target-{index}.jsonl")
        spec = os.path.join(tmp, f"target-{index}.json")
        with open(spec, "w", encoding="utf-8") as f:
            json.dump({"example": example, "index": index, "trace_files": list(trace_files), "device": device,
                       "backend": backend, "calls": calls, "out": out, "column_rows": column_rows or {}}, f)
        # The child's first record comes once torch is imported: the timeout counts from there.
        res = proc.run([sys.executable, "-m", "compilelint.verify.child", spec], env=env, cwd=cwd,
                       timeout=timeout, memory_limit_mb=memory_limit_mb, started=lambda: os.path.exists(out))
        records = _records(out)
        run, meta = _child_run(records, f"#{index}", res.failure(timeout, memory_limit_mb))
        return run, meta, records

    try:
        with ThreadPoolExecutor(max_workers=max(1, jobs)) as pool:
            first = pool.submit(launch, 0)
            count = _wait_for_count(os.path.join(tmp, "target-0.jsonl"), first)
            rest = [pool.submit(launch, i) for i in range(1, count or 0)]
            total = max(1, count or 1)
            results, done = [], 0
            for fut in [first] + rest:
                run, meta, records = fut.result()
                results.append((run, meta, records))
                done += 1
                if progress:
                    progress(done, total, run.label)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)

    outcome = Outcome(runs=[])
    for run, meta, _records_ in results:
        outcome.torch = outcome.torch or meta.get("torch", "")
        outcome.device = outcome.device or meta.get("device", "")
        outcome.runs.append(run)
    if not count:
        # Target 0 never got as far as counting: the factory itself is broken, so is every target.
        outcome.error = ("the example factory returned no targets" if count == 0 else
                         results[0][0].error or "the example factory did not run")
        outcome.runs = []
    return outcome


def _wait_for_count(path: str, future) -> Optional[int]:
    """Target 0's child writes the number of targets right after calling the factory: read it as
    soon as it is there, so the other targets start while target 0 still runs."""
    while True:
        finished = future.done()
        for r in _records(path):
            if r.get("type") == "count":
                return int(r["n"])
        if finished:
            return None
        time.sleep(0.05)


# ---------------------------------------------------------------- --run


def run_command(argv: Sequence[str], roots: Dict[str, List[str]], trace_files: Sequence[str], *, backend: str,
                timeout: float, memory_limit_mb: int, calls: int = 3,
                progress: Optional[Callable[[int, int, str], None]] = None, pythonpath: Sequence[str] = (),
                cwd: Optional[str] = None, column_rows: Optional[Dict[str, List[int]]] = None) -> Outcome:
    tmp = tempfile.mkdtemp(prefix="compilelint-verify-")
    try:
        site = os.path.join(tmp, "site")
        os.makedirs(site)
        with open(os.path.join(site, "sitecustomize.py"), "w", encoding="utf-8") as f:
            f.write(SITECUSTOMIZE)
        out = os.path.join(tmp, "events.jsonl")
        spec = os.path.join(tmp, "spec.json")
        with open(spec, "w", encoding="utf-8") as f:
            json.dump({"roots": roots, "trace_files": list(trace_files), "backend": backend, "calls": calls,
                       "out": out, "column_rows": column_rows or {}}, f)
        env = _env()
        env["PYTHONPATH"] = os.pathsep.join([site, *pythonpath, env["PYTHONPATH"]])  # pythonpath: a fixed copy
        env[SPEC_ENV] = spec
        label = " ".join(argv)
        if progress:
            progress(0, 1, label)
        tail = ""
        try:
            res = proc.run(list(argv), env=env, cwd=cwd or os.getcwd(), timeout=timeout, memory_limit_mb=memory_limit_mb)
            command = res.failure(timeout, memory_limit_mb) or "exited with status 0"
            killed = res.timed_out or res.memory_exceeded or (res.returncode or 0) < 0
            tail = res.output_tail if res.failure(timeout, memory_limit_mb) else ""
        except OSError as e:  # the command does not exist, is not executable, ...
            command, killed = f"could not start: {e.strerror or e}", True
        if progress:
            progress(1, 1, label)
        outcome = _command_outcome(_records(out), command, killed)
        outcome.output_tail = last_lines(tail)
        return outcome
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def _command_outcome(records: List[dict], command: str, killed: bool) -> Outcome:
    outcome = Outcome(runs=[], command=command)
    for r in records:
        t = r.get("type")
        if t == "start":
            outcome.torch = outcome.torch or r.get("torch", "")
            outcome.device = outcome.device or r.get("device", "")
        elif t == "call":
            outcome.runs.append(Run(
                label=f"{r['root']} call {r['n']}",
                entry=tuple(r["entry"]) if r.get("entry") else None,
                reached={os.path.realpath(f): set(v) for f, v in (r.get("reached") or {}).items()},
                columns=_columns(r.get("columns")),
                reach_unknown=bool(r.get("reach_unknown")),
                events=r.get("events") or [],
                error=r.get("error") or "",
            ))
        elif t == "error" and not outcome.error:
            outcome.error = r["message"]
    # Killed, or failed before a single wrapped call ran (the tests could not import the package):
    # what stopped it concerns every finding, so none of them is merely "not reached".
    if killed or (not outcome.runs and command != "exited with status 0"):
        outcome.error = outcome.error or f"the command {command}"
    return outcome


def last_lines(text: str, n: int = 20) -> str:
    """The last `n` lines of a command's output (what says why it failed)."""
    return "\n".join(text.rstrip().splitlines()[-n:])
