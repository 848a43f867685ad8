"""Which lines of the checked files an eager call executed (decides *not reached*).

`sys.settrace` with a global tracer that only returns a local tracer for code objects of the
checked files, so the cost outside them is one call event per frame. The previous tracer (a
coverage tool, a debugger) is restored afterwards.
"""
from __future__ import annotations

import os
import sys
import threading
from typing import Dict, Iterable, Set


class LineTracer:
    def __init__(self, files: Iterable[str]):
        self.files = {os.path.realpath(os.path.abspath(f)) for f in files}
        self.lines: Dict[str, Set[int]] = {}
        self._resolved: Dict[str, str] = {}  # co_filename -> checked path, or ""
        self._prev = None
        self._prev_thread = None

    def _file(self, co_filename: str) -> str:
        got = self._resolved.get(co_filename)
        if got is None:
            real = os.path.realpath(os.path.abspath(co_filename)) if not co_filename.startswith("<") else ""
            got = real if real in self.files else ""
            self._resolved[co_filename] = got
        return got

    def _global(self, frame, event, arg):
        path = self._file(frame.f_code.co_filename)
        if not path:
            return None
        seen = self.lines.setdefault(path, set())
        seen.add(frame.f_lineno)

        def local(frame, event, arg):
            if event == "line":
                seen.add(frame.f_lineno)
            return local

        return local

    def __enter__(self):
        self._prev = sys.gettrace()
        self._prev_thread = threading.gettrace() if hasattr(threading, "gettrace") else None
        sys.settrace(self._global)
        threading.settrace(self._global)  # model code run from a DataLoader worker thread
        return self

    def __exit__(self, *exc):
        sys.settrace(self._prev)
        threading.settrace(self._prev_thread)
        return False

    def as_json(self) -> Dict[str, list]:
        return {f: sorted(v) for f, v in self.lines.items()}
