"""Findings that only `verify` produces: what Dynamo did that no rule predicted (codes CL9xx).

They are not `Rule`s (there is nothing to detect statically), so their metadata lives here for the
formatters and `compilelint rule CL901`.
"""
from __future__ import annotations

import os

from compilelint.finding import Finding, Span
from compilelint.rule import GB_SITE, RECOMPILE_DOCS

CODES = {
    "CL901": {
        "name": "missed-graph-break",
        "event": "graph-break",
        "summary": "torch.compile graph-broke here, and no compilelint rule predicted it",
    },
    "CL902": {
        "name": "missed-recompile",
        "event": "recompile",
        "summary": "torch.compile recompiled because of this line, and no compilelint rule predicted it",
    },
    "CL903": {
        "name": "missed-frame-skip",
        "event": "frame-skipped",
        "summary": "torch.compile gave up on this frame and ran it in eager, and no compilelint rule predicted it",
    },
}
_BY_EVENT = {meta["event"]: code for code, meta in CODES.items()}


def display_path(path: str, cwd: str) -> str:
    rel = os.path.relpath(path, cwd)
    return path if rel.startswith("..") else rel


def missed_finding(event: dict, *, function: str, verification: dict, cwd: str) -> Finding:
    code = _BY_EVENT[event["event"]]
    line = event["line"]
    text = _source_line(event["file"], line)
    col = len(text) - len(text.lstrip()) + 1
    if event["event"] == "recompile":
        message = f"Recompile: {event['reason'] or 'a guard failed'}"
    else:
        message = event["gb_type"] or "Graph break"
        if event.get("reason"):
            message = f"{message}: {event['reason']}"
    gb = event.get("gb_id", "")
    url = GB_SITE.format(gb.lower()) if gb else (RECOMPILE_DOCS if event["event"] == "recompile" else "")
    return Finding(
        code=code,
        name=CODES[code]["name"],
        message=message,
        path=display_path(event["file"], cwd),
        span=Span(line, col, line, len(text.rstrip()) + 1 if text.strip() else col),
        function=function,
        gb_type=event.get("gb_type", ""),
        url=url,
        severity="warning",
        verification=verification,
    )


def _source_line(path: str, line: int) -> str:
    try:
        with open(path, encoding="utf-8") as f:
            for i, text in enumerate(f, 1):
                if i == line:
                    return text.rstrip("\n")
    except (OSError, UnicodeDecodeError):
        pass
    return ""
