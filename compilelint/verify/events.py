"""Dynamo's own reports of graph breaks, skipped frames and recompiles, turned into plain events.

Three sources, because each one alone misses cases (dynamo-truth.md §5 and "Mapping a break back to
file:line"): the `graph_breaks` log artifact (every break, even the ones `explain()` drops), the
`recompiles` log artifact, and the compilation metrics (`fail_type` marks a frame Dynamo gave up
on, `recompile_reason` a recompile). The text parsers are pure so they are tested without torch;
only `Capture` and `metrics_events` touch torch, and they import it lazily (the parent never does).

An event is a dict, because it crosses the child → parent boundary as JSON:
`{"event": "graph-break"|"frame-skipped"|"recompile", "file", "line", "anchored", "gb_type",
"gb_id", "reason", "stack": [[file, line, name], ...]}`, and for a skipped frame the compilation metrics
report, `"frame": [file, first line, code name]`. `anchored` is False when Dynamo names no user line
(a shape recompile names only the function), so the line is the function's first line.
"""
from __future__ import annotations

import logging
import os
import re

GRAPH_BREAK = "graph-break"
FRAME_SKIPPED = "frame-skipped"
RECOMPILE = "recompile"

_AT = re.compile(r"^Graph break.*? in user code at (?P<file>.+):(?P<line>\d+)\s*$", re.M)
_FILE_LINE = re.compile(r'^\s*(?:-\s+)?File "(?P<file>[^"]+)", line (?P<line>\d+), in (?P<name>\S+)', re.M)
_GB_ID = re.compile(r"/gb/gb(\d{4})\.html")
_RECOMPILING = re.compile(r"^Recompiling function (?P<name>\S+) in (?P<file>.+):(?P<line>\d+)\s*$", re.M)
# "- 2/0: self.counter == 0   # self.counter += 1  # mp/vx/m1.py:10 in forward (HINT: ...)":
# the path in the guard comment is truncated on the left, so only its tail is trusted.
_GUARD = re.compile(r"^\s*(?:-\s+)?\d+/\d+: (?P<guard>.*?)\s*(?:#.*?#\s*(?P<tail>\S+):(?P<line>\d+) in (?P<name>\S+))?"
                    r"(?:\s+\(HINT:.*)?$", re.M)
_SKIP_MARK = "Skipping the function and falling back to eager"
# Guards on the inputs themselves ("tensor 'x' size mismatch at index 0"): a new input shape or
# dtype, which automatic dynamic shapes absorb; the code is not at fault.
_INPUT_GUARD = re.compile(r"^tensor '[^']*' \w+ mismatch")


def gb_id(text: str) -> str:
    m = _GB_ID.search(text or "")
    return f"GB{m.group(1)}" if m else ""


def _event(kind, file, line, *, gb_type="", reason="", stack=(), anchored=True, text="", input_driven=False,
           frame=None):
    extra = {"frame": list(frame)} if frame else {}
    return {
        "input_driven": input_driven,
        "event": kind,
        "file": os.path.abspath(file) if file and not file.startswith("<") else file,
        "line": int(line),
        "anchored": anchored,
        "gb_type": gb_type,
        "gb_id": gb_id(text),
        "reason": reason,
        "stack": [list(s) for s in stack],
        **extra,
    }


def _stack(text: str):
    return [(m.group("file"), int(m.group("line")), m.group("name")) for m in _FILE_LINE.finditer(text)]


def _gb_type_and_reason(body: str):
    """The gb_type follows 'Graph Break Reason:' — on the same line ("Graph Break Reason: Data-dependent
    branching"), or after a header ending in ':' ("... when attempting to trace CALL: ...:"). The reason
    is the first line of its Explanation."""
    lines = [ln.rstrip() for ln in body.splitlines()]
    rest = []
    for i, ln in enumerate(lines):
        if ln.startswith("Graph Break Reason:"):
            inline = ln[len("Graph Break Reason:"):].strip()
            rest = ([inline] if inline and not inline.endswith(":") else []) + lines[i + 1:]
            break
    rest = [ln for ln in rest if ln.strip()]
    if not rest:
        return "", ""
    gb_type = rest[0].strip()
    reason = ""
    for ln in rest[1:]:
        s = ln.strip()
        if s.startswith("Explanation:"):
            reason = s[len("Explanation:"):].strip()
            break
        if s.startswith(("Hint:", "User code", "Developer", "For more details")):
            break
    return gb_type, reason


def parse_graph_break(text: str):
    """One `__graph_breaks` log record → an event, or None when it is not a break report."""
    m = _AT.search(text or "")
    if not m:
        return None
    header = text.split("\n", 2)[1] if text.count("\n") >= 1 else ""
    kind = FRAME_SKIPPED if _SKIP_MARK in header else GRAPH_BREAK
    gb_type, reason = _gb_type_and_reason(text)
    stack = _stack(text.split("User code traceback:", 1)[1]) if "User code traceback:" in text else []
    return _event(kind, m.group("file"), m.group("line"), gb_type=gb_type, reason=reason,
                  stack=stack, text=text)


def parse_recompile(text: str):
    """One `__recompiles` log record, or one `recompile_reason` → a recompile event, or None.

    The user line comes from the 'User stack trace' (full path) when present, else from the guard
    comment (whose path is truncated, so the function's file is used), else the function itself."""
    text = text or ""
    fn = _RECOMPILING.search(text)
    guard = _GUARD.search(text)
    guard_text = guard.group("guard").strip() if guard else text.strip().splitlines()[0] if text.strip() else ""
    reason = f"guard failed: {guard_text}" if guard_text else "recompiled"
    inputs = bool(_INPUT_GUARD.match(guard_text))
    stack = _stack(text.split("User stack trace:", 1)[1]) if "User stack trace:" in text else []
    if stack:
        f, ln, _ = stack[-1]
        return _event(RECOMPILE, f, ln, reason=reason, stack=stack, input_driven=inputs)
    if fn is None:
        return None  # a bare recompile_reason with no user line: metrics_events adds the frame
    file, line, anchored = fn.group("file"), int(fn.group("line")), False
    if guard and guard.group("tail") and os.path.basename(guard.group("tail")) == os.path.basename(file):
        line, anchored = int(guard.group("line")), True
    return _event(RECOMPILE, file, line, reason=reason, anchored=anchored, input_driven=inputs)


def dedupe(events):
    """Dynamo reports the same break once per call, and the same recompile once per guard value
    (`self.counter == 0`, `== 1`, ...): keep one event per (kind, place, gb_type), with a count."""
    seen, out = {}, []
    for e in events:
        key = (e["event"], e["file"], e["line"], e["gb_type"])
        if key in seen:
            seen[key]["count"] = seen[key].get("count", 1) + 1
            if e.get("frame"):  # the log's report of a skip names no frame, the metrics' does
                seen[key].setdefault("frame", e["frame"])
            continue
        e = dict(e, count=e.get("count", 1))
        seen[key] = e
        out.append(e)
    return out


def metrics_snapshot() -> set:
    """Ids of the compilation metrics recorded so far (a program may compile things of its own)."""
    from torch._dynamo.utils import get_compilation_metrics

    return {id(m) for m in get_compilation_metrics()}


def metrics_events(skip=frozenset()):
    """Skipped frames and recompiles from the compilation metrics not in `skip` (covers what the
    logs word differently across torch versions)."""
    from torch._dynamo.utils import get_compilation_metrics

    out = []
    for m in get_compilation_metrics():
        if id(m) in skip:
            continue
        fail_type = getattr(m, "fail_type", None)
        ffile = getattr(m, "fail_user_frame_filename", None)
        fline = getattr(m, "fail_user_frame_lineno", None)
        if fail_type and ffile and fline:
            text = str(getattr(m, "fail_reason", "") or "")
            first = [ln.strip() for ln in text.splitlines() if ln.strip()]
            expl = next((ln[len("Explanation:"):].strip() for ln in first if ln.startswith("Explanation:")), "")
            # the frame given up on (`frame`: its code's file, first line and name; a resumed part of a
            # function is `torch_dynamo_resume_in_<name>_at_<line>`): none of its lines ran compiled
            code = (getattr(m, "co_filename", None), getattr(m, "co_firstlineno", None), getattr(m, "co_name", None))
            out.append(_event(FRAME_SKIPPED, ffile, fline, gb_type=first[0] if first else str(fail_type),
                              reason=expl, text=text, frame=code if all(code) else None))
        rr = getattr(m, "recompile_reason", None)
        if rr:
            ev = parse_recompile(str(rr))
            if ev is None:
                co_file, co_line = getattr(m, "co_filename", ""), getattr(m, "co_firstlineno", 0)
                guard = str(rr).strip().splitlines()[0]
                ev = _event(RECOMPILE, co_file, co_line or 0, reason=f"guard failed: {guard}", anchored=False,
                            input_driven=bool(_INPUT_GUARD.match(re.sub(r"^\d+/\d+: ", "", guard))))
            out.append(ev)
    return out


class _Collect(logging.Handler):
    def __init__(self, sink):
        super().__init__(logging.DEBUG)
        self.sink = sink

    def emit(self, record):
        try:
            text = record.getMessage()
            ev = parse_recompile(text) if "Recompiling function" in text else parse_graph_break(text)
            if ev is not None:
                self.sink.append(ev)
        except Exception:  # a logging handler must never raise into Dynamo
            pass


class Capture:
    """Collect break/recompile log records while active, without printing them.

    It attaches to the artifact loggers directly and turns off their propagation, instead of
    `torch._logging.set_logs(...)`: that would print every break to the user's stderr and reset the
    user's own TORCH_LOGS settings."""

    ARTIFACTS = ("__graph_breaks", "__recompiles")

    def __init__(self):
        self.events = []
        self._saved = []

    def __enter__(self):
        import torch._dynamo  # noqa: F401  (registers the artifact loggers)
        from torch._logging import _internal

        names = {n for n in _internal.log_registry.get_artifact_log_qnames() if n.endswith(self.ARTIFACTS)}
        handler = _Collect(self.events)
        for name in sorted(names):
            log = logging.getLogger(name)
            self._saved.append((log, log.level, log.propagate, log.disabled, handler))
            log.setLevel(logging.DEBUG)
            log.disabled = False
            log.propagate = False
            log.addHandler(handler)
        return self

    def __exit__(self, *exc):
        for log, level, propagate, disabled, handler in self._saved:
            log.removeHandler(handler)
            log.setLevel(level)
            log.propagate = propagate
            log.disabled = disabled
        self._saved.clear()
        return False


def one_line(exc: BaseException, limit: int = 240) -> str:
    """`ValueError: bad shape` — the first non-empty line of the message, never a traceback."""
    text = next((ln.strip() for ln in str(exc).splitlines() if ln.strip()), "")
    out = f"{type(exc).__name__}: {text}" if text else type(exc).__name__
    return out if len(out) <= limit else out[: limit - 1] + "…"


def fullgraph_failure(exc: BaseException) -> dict:
    """What a `fullgraph=True` failure says: its gb_type (or, for UserError and friends, which have
    none, the first line of the message) and the innermost user frame."""
    gb_type = getattr(exc, "gb_type", "") or ""
    if not gb_type:
        gb_type = next((ln.strip() for ln in str(exc).splitlines() if ln.strip()), type(exc).__name__)[:200]
    frame = getattr(exc, "innermost_user_frame_summary", None)
    stack = getattr(exc, "real_stack", None)
    if frame is None and stack:
        frame = stack[-1]
    where = [frame.filename, frame.lineno] if frame is not None else None
    return {"gb_type": gb_type, "where": where, "gb_id": gb_id(str(exc))}
