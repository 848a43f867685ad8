"""Findings that only `verify` produces: what Dynamo did that no rule predicted (CL901-CL903).

Their rules (`rules/missed_*.py`) detect nothing statically; they carry the name, docs and the
verify event each stands for (`Rule.verify_event`), which is all the formatters and `compilelint
rule CL901` need.
"""
from __future__ import annotations

import os

from compilelint.finding import Finding, Span
from compilelint.rule import GB_SITE, RECOMPILE_DOCS, registry


def codes_by_event() -> dict:
    """verify event ("graph-break", "recompile", "frame-skipped") → the code reporting it."""
    return {rule.verify_event: code for code, rule in registry().items() if rule.verify_event}


def display_path(path: str, cwd: str) -> str:
    rel = os.path.relpath(path, cwd)
    return path if rel.startswith("..") else rel


def missed_finding(event: dict, *, function: str, verification: dict, cwd: str) -> Finding:
    code = codes_by_event()[event["event"]]
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
        name=registry()[code].name,
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
