"""Run one subprocess so that nothing it does can take the parent down or hold it forever.

Its own session (process group), so a timeout kills everything it started; stdin closed and
`breakpoint()` disabled, so it cannot wait for input; output to a file, so a chatty program cannot
fill a pipe and block; its resident memory polled, so an unbounded allocation is stopped before
the machine swaps (an address-space rlimit would break CUDA, which reserves huge virtual ranges).
"""
from __future__ import annotations

import os
import signal
import subprocess
import tempfile
import time
from dataclasses import dataclass
from typing import Callable, Optional, Sequence

# Before `started()` says the child is ready (torch imported), it gets this long instead of the
# user's `--timeout`: importing torch is not the user's code, but a child stuck there must still end.
SETUP_TIMEOUT = 600.0


@dataclass
class Outcome:
    returncode: Optional[int]
    timed_out: bool
    memory_exceeded: bool
    seconds: float
    output_tail: str

    def failure(self, timeout: float, memory_limit_mb: int) -> str:
        """A one-line description when the process did not exit normally, else ""."""
        if self.timed_out:
            return f"timed out after {timeout:g}s"
        if self.memory_exceeded:
            return f"killed after using more than {memory_limit_mb} MiB of memory"
        rc = self.returncode
        if rc is not None and rc < 0:
            try:
                name = signal.Signals(-rc).name
            except ValueError:
                name = f"signal {-rc}"
            return f"crashed with signal {name}"
        if rc:
            return f"exited with status {rc}"
        return ""


def default_memory_limit_mb() -> int:
    """Half the machine's memory: generous for real models, short of swapping the box."""
    try:
        with open("/proc/meminfo") as f:
            for line in f:
                if line.startswith("MemTotal:"):
                    return int(line.split()[1]) // 1024 // 2
    except OSError:
        pass
    return 16 * 1024


def _rss_mb(pid: int) -> float:
    try:
        with open(f"/proc/{pid}/statm") as f:
            pages = int(f.read().split()[1])
        return pages * os.sysconf("SC_PAGE_SIZE") / 2**20
    except (OSError, ValueError, IndexError):
        return 0.0


def _kill_group(proc: subprocess.Popen) -> None:
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass


def run(argv: Sequence[str], *, env: dict, cwd: str, timeout: float, memory_limit_mb: int,
        log_path: Optional[str] = None, started: Optional[Callable[[], bool]] = None) -> Outcome:
    """Run `argv` to its end, or kill it after `timeout` seconds, counted from when `started()`
    first returns true (from the start when not given)."""
    env = dict(env, PYTHONBREAKPOINT="0")
    own_log = log_path is None
    if own_log:
        fd, log_path = tempfile.mkstemp(prefix="compilelint-verify-", suffix=".log")
        os.close(fd)
    start = time.monotonic()
    clock = None if started is not None else start  # when the `timeout` began counting
    timed_out = mem = False
    with open(log_path, "wb") as log:
        proc = subprocess.Popen(list(argv), stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT,
                                env=env, cwd=cwd, start_new_session=True)
        delay = 0.02
        while proc.poll() is None:
            now = time.monotonic()
            if clock is None and started():
                clock = now
            if (clock is not None and now - clock > timeout) or (clock is None and now - start > SETUP_TIMEOUT):
                timed_out = True
            elif memory_limit_mb and _rss_mb(proc.pid) > memory_limit_mb:
                mem = True
            if timed_out or mem:
                _kill_group(proc)
                proc.wait()
                break
            time.sleep(delay)
            delay = min(delay * 1.5, 0.25)
        _kill_group(proc)  # whatever it left running in its session goes too
    seconds = time.monotonic() - start
    tail = _tail(log_path)
    if own_log:
        os.unlink(log_path)
    return Outcome(proc.returncode, timed_out, mem, seconds, tail)


def _tail(path: str, limit: int = 4000) -> str:
    try:
        with open(path, "rb") as f:
            f.seek(0, os.SEEK_END)
            f.seek(max(0, f.tell() - limit))
            return f.read().decode("utf-8", "replace")
    except OSError:
        return ""
