"""Parent side of proving fixes by running them (no torch here): copy the code to a temporary
folder, and run a factory's targets against the original and against the copy in isolated
children (`prove_child.py`), the copy first on PYTHONPATH.

A *copy* is the whole top-level package that holds the checked paths (so the fixed files import
as the originals did), or the folder itself when it is not a package.
"""
from __future__ import annotations

import json
import os
import shutil
import sys
import tempfile
from dataclasses import dataclass, field
from typing import Dict, List, Optional, Sequence

from compilelint.verify import proc
from compilelint.verify.runner import _env, _records


def import_root(path: str) -> str:
    """The folder to copy for `path`: its top-level package, or its own folder outside packages."""
    path = os.path.realpath(os.path.abspath(path))
    folder = path if os.path.isdir(path) else os.path.dirname(path)
    top = None
    while os.path.isfile(os.path.join(folder, "__init__.py")):
        top = folder
        folder = os.path.dirname(folder)
    return top or (path if os.path.isdir(path) else os.path.dirname(path))


@dataclass
class Copy:
    """The checked code copied under `base`; `pythonpath` goes first on the children's PYTHONPATH."""

    base: str
    roots: Dict[str, str]  # original root -> its copy

    @property
    def pythonpath(self) -> List[str]:
        out = []
        for orig, copy in self.roots.items():
            entry = os.path.dirname(copy) if os.path.isfile(os.path.join(orig, "__init__.py")) else copy
            if entry not in out:
                out.append(entry)
        return out

    def to_copy(self, path: str) -> str:
        if not path or path.startswith("<"):
            return path
        real = os.path.realpath(os.path.abspath(path))
        for orig, copy in self.roots.items():
            if real == orig or real.startswith(orig + os.sep):
                return copy + real[len(orig):]
        return path

    def to_original(self, path: str) -> str:
        if not path or path.startswith("<"):
            return path  # "<string>", or no file at all (a compilation metric without one)
        real = os.path.realpath(os.path.abspath(path))
        for orig, copy in self.roots.items():
            if real == copy or real.startswith(copy + os.sep):
                return orig + real[len(copy):]
        return path

    def remove(self):
        shutil.rmtree(self.base, ignore_errors=True)


# Never copied: caches, VCS folders, virtual environments and installed packages.
SKIP = shutil.ignore_patterns("__pycache__", "*.pyc", ".*", "venv", "site-packages", "node_modules")


def make_copy(paths: Sequence[str]) -> Copy:
    """Copy the import root of every path; a root inside another is copied once, with it."""
    wanted = sorted({import_root(p) for p in paths}, key=len)
    outer: List[str] = []
    for root in wanted:
        if not any(root == r or root.startswith(r + os.sep) for r in outer):
            outer.append(root)
    base = tempfile.mkdtemp(prefix="compilelint-fix-")
    roots: Dict[str, str] = {}
    for root in outer:
        dest = os.path.join(base, f"{len(roots)}", os.path.basename(root))
        shutil.copytree(root, dest, ignore=SKIP, symlinks=True)
        roots[root] = dest
    return Copy(base, roots)


@dataclass
class TargetRun:
    """What one child observed for one (target, mode)."""

    index: int
    mode: str
    events: list = field(default_factory=list)
    reached: Dict[str, set] = field(default_factory=dict)
    compare: Optional[dict] = None
    error: str = ""
    count: Optional[int] = None
    modules: List[bool] = field(default_factory=list)  # per target: is it (a method of) a module
    timing: List[List[float]] = field(default_factory=list)  # per timed round, each call's seconds


def run_target(example: str, index: int, mode: str, *, trace_files: Sequence[str] = (), copy: Optional[Copy] = None,
               save: str = "", reference: str = "", device: str = "cpu", backend: str = "eager",
               timeout: float = 300.0, memory_limit_mb: Optional[int] = None, calls: int = 3, seed: int = 0,
               dynamo_config: Optional[dict] = None, dynamic: Optional[bool] = None,
               env_extra: Optional[Dict[str, str]] = None, time: Optional[dict] = None) -> TargetRun:
    """Run target `index` of `example` in `mode` in a child; on the copy when `copy` is given
    (the example itself is read from the copy when it lives in the copied code). `env_extra`: more
    environment for the child (a factory that reads which model to build from it). `time`: only
    time the compiled target, in rounds (fix_timing.py)."""
    mem = memory_limit_mb or proc.default_memory_limit_mb()
    env = dict(_env(), **(env_extra or {}))
    first: List[str] = []
    if copy is not None:
        first = copy.pythonpath  # before the working folder too, which `-m` and the module form put first
        env["PYTHONPATH"] = os.pathsep.join(copy.pythonpath + [env["PYTHONPATH"]])
        mod, sep, attr = example.rpartition(":")
        if mod.endswith(".py") or os.sep in mod:
            example = f"{copy.to_copy(mod)}{sep}{attr}"
        trace_files = [copy.to_copy(f) for f in trace_files]
    fd, out = tempfile.mkstemp(prefix="compilelint-prove-", suffix=".jsonl")
    os.close(fd)
    spec_fd, spec = tempfile.mkstemp(prefix="compilelint-prove-", suffix=".json")
    with os.fdopen(spec_fd, "w", encoding="utf-8") as f:
        json.dump({"example": example, "index": index, "mode": mode, "seed": seed, "backend": backend,
                   "device": device, "calls": calls, "trace_files": list(trace_files), "out": out, "save": save,
                   "reference": reference or None, "dynamo_config": dynamo_config or {}, "dynamic": dynamic,
                   "path_first": first, "time": time}, f)
    try:
        res = proc.run([sys.executable, "-m", "compilelint.verify.prove_child", spec], env=env, cwd=os.getcwd(),
                       timeout=timeout, memory_limit_mb=mem)
        records = _records(out)
    finally:
        for p in (out, spec):
            try:
                os.unlink(p)
            except OSError:
                pass
    run = TargetRun(index=index, mode=mode)
    back = copy.to_original if copy is not None else (lambda p: p)
    for r in records:
        t = r.get("type")
        if t == "count":
            run.count = int(r["n"])
            run.modules = list(r.get("modules") or [])
        elif t == "reached":
            run.reached = {os.path.realpath(back(f)): set(v) for f, v in r["lines"].items()}
        elif t == "events":
            run.events = [_back(e, back) for e in r["events"]]
        elif t == "compare":
            run.compare = {"eager": r["eager"], "compiled": r["compiled"]}
        elif t == "timing":
            run.timing.append(list(r["seconds"]))
        elif t == "error" and not run.error:
            run.error = r["message"]
    if not any(r.get("type") == "done" for r in records) and not run.error:
        run.error = res.failure(timeout, mem) or "stopped without reporting"
    return run


def _back(event: dict, back) -> dict:
    """An event of a run on the copy, with its paths named as the original's."""
    return dict(event, file=back(event["file"]), stack=[[back(f), ln, name] for f, ln, name in event.get("stack", [])])


def breaks(events: Sequence[dict], under: str = "") -> int:
    """Graph breaks and skipped frames, each counted as often as Dynamo reported it; only those in
    files under `under` when given."""
    under = os.path.realpath(under) if under else ""
    return sum(e.get("count", 1) for e in events if e["event"] != "recompile"
               and (not under or os.path.realpath(e["file"]).startswith(under + os.sep)))
