"""Which lines of the checked files an eager call executed (decides *not reached*).

`sys.settrace` with a global tracer that only returns a local tracer for code objects of the
checked files, so the cost outside them is one call event per frame. The previous tracer (a
coverage tool, a debugger) is restored afterwards.

A line is not always enough: `if x.dtype == torch.float16 and not torch.isfinite(x).all():` runs
its line on every call, its flagged operand only in fp16. On the rows of `column_rows` (the
findings' own lines) the tracer also asks for opcode events and keeps where each executed
instruction starts (line, 0-based column, from `co_positions`, Python 3.11+), so verify can tell
whether the flagged expression itself ran. Only those rows pay for opcode tracing.
"""
from __future__ import annotations

import os
import sys
import threading
from typing import Dict, Iterable, Optional, Set, Tuple

_COLUMNS = hasattr((lambda: 0).__code__, "co_positions")  # Python 3.11+


class LineTracer:
    def __init__(self, files: Iterable[str], column_rows: Optional[Dict[str, Iterable[int]]] = None):
        self.files = {os.path.realpath(os.path.abspath(f)) for f in files}
        self.lines: Dict[str, Set[int]] = {}
        self.column_rows: Dict[str, Set[int]] = {
            os.path.realpath(os.path.abspath(f)): set(rows) for f, rows in (column_rows or {}).items()
        } if _COLUMNS else {}
        self.starts: Dict[str, Set[Tuple[int, int]]] = {}
        self._positions: dict = {}  # code object -> its instructions' positions
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
        rows = self.column_rows.get(path)
        if not rows:
            def local(frame, event, arg):
                if event == "line":
                    seen.add(frame.f_lineno)
                return local

            return local

        starts = self.starts.setdefault(path, set())
        code = frame.f_code
        positions = self._positions.get(code)
        if positions is None:
            positions = self._positions[code] = list(code.co_positions())

        def local_columns(frame, event, arg):
            if event == "line":
                seen.add(frame.f_lineno)
                frame.f_trace_opcodes = frame.f_lineno in rows
            elif event == "opcode":
                line, _, col, _ = positions[frame.f_lasti // 2]
                if line is not None and col is not None:
                    starts.add((line, col))
            return local_columns

        return local_columns

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

    def columns_json(self) -> Dict[str, list]:
        """{file: [[line, column], ...]}: where executed instructions on the column rows start."""
        return {f: sorted(map(list, v)) for f, v in self.starts.items()}
