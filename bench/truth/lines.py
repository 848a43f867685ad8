"""Which library lines a model's eager run executed: what the truth can judge.

A static finding on a line the run never reached (a `layerdrop > 0` branch with layerdrop 0, an
fp16-only path in a float32 run) is a claim Dynamo was never asked about. The scorer judges a
finding only where the eager run of the same model, in the same mode, executed its line; the rest
are reported as *unexercised*.

Lines are not always enough: `if x.dtype == torch.float16 and not torch.isfinite(x).all():` runs
its line on every call, its flagged operand only in fp16. With Python 3.12's `sys.monitoring` the
start (line, column) of every executed instruction is kept too, so the scorer can ask whether the
flagged expression itself ran. Each location is recorded once and then disabled (cheap). Older
Pythons fall back to `sys.settrace`, tracing only frames of the library: lines, and (3.11, where
code objects have `co_positions`) the start of each executed instruction from opcode events
(slower, but the same columns as 3.12's).
"""
from __future__ import annotations

import sys


class ExecutedLines:
    """`with ExecutedLines("transformers") as seen: model(**x)` → `seen.by_file()`."""

    def __init__(self, lib: str):
        self.marker = f"/{lib}/"
        self.lib = lib
        self.hits: set = set()
        self.starts: set = set()  # (path, line, column) where an executed instruction starts
        self._positions: dict = {}  # code object -> its instructions' positions

    # ---------------------------------------------------------------- sys.monitoring (3.12+)
    def _on_line(self, code, line):
        if self.marker in code.co_filename:
            self.hits.add((code.co_filename, line))
        return sys.monitoring.DISABLE

    def _on_instruction(self, code, offset):
        if self.marker in code.co_filename:
            positions = self._positions.get(code)
            if positions is None:
                positions = self._positions[code] = list(code.co_positions())
            line, _, col, _ = positions[offset // 2]
            if line is not None and col is not None:
                self.starts.add((code.co_filename, line, col))
        return sys.monitoring.DISABLE

    # ------------------------------------------------------------------- sys.settrace (older)
    def _global(self, frame, event, arg):
        if self.marker not in frame.f_code.co_filename:
            return None
        if hasattr(frame.f_code, "co_positions"):
            frame.f_trace_opcodes = True
        return self._local

    def _local(self, frame, event, arg):
        if event == "line":
            self.hits.add((frame.f_code.co_filename, frame.f_lineno))
        elif event == "opcode":
            code = frame.f_code
            positions = self._positions.get(code)
            if positions is None:
                positions = self._positions[code] = list(code.co_positions())
            line, _, col, _ = positions[frame.f_lasti // 2]
            if line is not None and col is not None:
                self.starts.add((code.co_filename, line, col))
        return self._local

    def __enter__(self):
        if hasattr(sys, "monitoring"):
            mon = sys.monitoring
            self.tool = mon.COVERAGE_ID
            mon.use_tool_id(self.tool, "compilelint-truth")
            mon.restart_events()  # lines disabled by an earlier recording fire again
            mon.register_callback(self.tool, mon.events.LINE, self._on_line)
            mon.register_callback(self.tool, mon.events.INSTRUCTION, self._on_instruction)
            mon.set_events(self.tool, mon.events.LINE | mon.events.INSTRUCTION)
        else:
            self.tool = None
            sys.settrace(self._global)
        return self

    def __exit__(self, *exc):
        if self.tool is not None:
            mon = sys.monitoring
            mon.set_events(self.tool, 0)
            mon.register_callback(self.tool, mon.events.LINE, None)
            mon.register_callback(self.tool, mon.events.INSTRUCTION, None)
            mon.free_tool_id(self.tool)
        else:
            sys.settrace(None)
        return False

    def by_file(self) -> dict:
        """{`transformers/models/bert/modeling_bert.py`: [sorted lines]} for the library's files."""
        out: dict = {}
        for path, line in self.hits:
            rel = path[path.rfind(self.marker) + 1:]
            out.setdefault(rel, []).append(line)
        return {f: sorted(set(lines)) for f, lines in sorted(out.items())}

    def columns_by_file(self) -> dict:
        """{file: {line: [columns where an executed instruction starts]}} (3.11+; {} before)."""
        out: dict = {}
        for path, line, col in self.starts:
            rel = path[path.rfind(self.marker) + 1:]
            out.setdefault(rel, {}).setdefault(str(line), []).append(col)
        return {f: {ln: sorted(cols) for ln, cols in sorted(rows.items(), key=lambda kv: int(kv[0]))}
                for f, rows in sorted(out.items())}
