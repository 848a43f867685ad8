"""Which lines of the checked files an eager call executed (decides *not reached*).

`sys.settrace` with a global tracer that only returns a local tracer for code objects of the
checked files, so the cost outside them is one call event per frame. The previous tracer (a
coverage tool, a debugger) is restored afterwards.

A line is not always enough: `if x.dtype == torch.float16 and not torch.isfinite(x).all():` runs
its line on every call, its flagged operand only in fp16. On the rows of `column_rows` (the
findings' own lines) the tracer also keeps where each executed instruction starts (line, 0-based
column, from `co_positions`), so verify can tell whether the flagged expression itself ran:
- Python 3.12+: `sys.monitoring` instruction events, each location reported once and then
  disabled (cheap); opcode tracing switched on from a trace function misses instructions there.
- Python 3.11: opcode events of `sys.settrace`, asked only for frames of code holding those rows.
- Older: lines only.
"""
from __future__ import annotations

import os
import sys
import threading
from typing import Dict, Iterable, Optional, Set, Tuple

_COLUMNS = hasattr((lambda: 0).__code__, "co_positions")  # Python 3.11+
_MONITORING = hasattr(sys, "monitoring")  # Python 3.12+
_TOOL_IDS = (4, 3)  # sys.monitoring ids no standard tool (debugger, coverage, profiler, optimizer) claims


class LineTracer:
    def __init__(self, files: Iterable[str], column_rows: Optional[Dict[str, Iterable[int]]] = None):
        self.files = {os.path.realpath(os.path.abspath(f)) for f in files}
        self.lines: Dict[str, Set[int]] = {}
        self.column_rows: Dict[str, Set[int]] = {
            os.path.realpath(os.path.abspath(f)): set(rows) for f, rows in (column_rows or {}).items()
        } if _COLUMNS else {}
        self.starts: Dict[str, Set[Tuple[int, int]]] = {}  # a file is here once code holding its rows ran
        self._positions: dict = {}  # code object -> its instructions' (line, column), [] if off the rows
        self._resolved: Dict[str, str] = {}  # co_filename -> checked path, or ""
        self._prev = None
        self._prev_thread = None
        self._tool: Optional[int] = None

    def _file(self, co_filename: str) -> str:
        got = self._resolved.get(co_filename)
        if got is None:
            real = os.path.realpath(os.path.abspath(co_filename)) if not co_filename.startswith("<") else ""
            got = real if real in self.files else ""
            self._resolved[co_filename] = got
        return got

    def _on_rows(self, code, rows: Set[int]) -> list:
        positions = self._positions.get(code)
        if positions is None:
            positions = [p[:3:2] for p in code.co_positions()]
            positions = self._positions[code] = positions if any(line in rows for line, _ in positions) else []
        return positions

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

        rows = self.column_rows.get(path)
        positions = self._on_rows(frame.f_code, rows) if rows else []
        if not positions:
            return local
        starts = self.starts.setdefault(path, set())
        if self._tool is not None:
            return local  # the instruction events record the columns
        frame.f_trace_opcodes = True

        def local_columns(frame, event, arg):
            if event == "line":
                seen.add(frame.f_lineno)
            elif event == "opcode":
                line, col = positions[frame.f_lasti // 2]
                if line in rows and col is not None:
                    starts.add((line, col))
            return local_columns

        return local_columns

    def _on_instruction(self, code, offset):
        path = self._file(code.co_filename)
        rows = self.column_rows.get(path) if path else None
        if rows:
            positions = self._on_rows(code, rows)
            if positions:
                line, col = positions[offset // 2]
                if line in rows and col is not None:
                    self.starts.setdefault(path, set()).add((line, col))
        return sys.monitoring.DISABLE

    def _start_monitoring(self) -> None:
        mon = sys.monitoring
        for tool in _TOOL_IDS:
            try:
                mon.use_tool_id(tool, "compilelint-verify")
            except ValueError:  # taken by another tool
                continue
            self._tool = tool
            mon.restart_events()  # locations an earlier call disabled report again
            mon.register_callback(tool, mon.events.INSTRUCTION, self._on_instruction)
            mon.set_events(tool, mon.events.INSTRUCTION)
            return

    def __enter__(self):
        if _MONITORING and self.column_rows:
            self._start_monitoring()
        self._prev = sys.gettrace()
        self._prev_thread = threading.gettrace() if hasattr(threading, "gettrace") else None
        sys.settrace(self._global)
        threading.settrace(self._global)  # model code run from a DataLoader worker thread
        return self

    def __exit__(self, *exc):
        sys.settrace(self._prev)
        threading.settrace(self._prev_thread)
        if self._tool is not None:
            mon = sys.monitoring
            mon.set_events(self._tool, 0)
            mon.register_callback(self._tool, mon.events.INSTRUCTION, None)
            mon.free_tool_id(self._tool)
            self._tool = None
        return False

    def as_json(self) -> Dict[str, list]:
        return {f: sorted(v) for f, v in self.lines.items()}

    def columns_json(self) -> Dict[str, list]:
        """{file: [[line, column], ...]}: where executed instructions on the column rows start."""
        return {f: sorted(map(list, v)) for f, v in self.starts.items()}
