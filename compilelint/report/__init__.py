"""Render a `Report` in the formats users know from Ruff, plus SARIF, GitHub annotations and JUnit.

One module per format, each with `render(report, **options) -> str`; this module picks one.
Nothing here imports torch.
"""
from __future__ import annotations

import importlib
from typing import Dict, Optional

from compilelint.rule import DEFAULT_TORCH_VERSION

from .stats import render_statistics

FORMATS = ("concise", "full", "grouped", "json", "json-lines", "sarif", "github", "gitlab", "junit", "pylint")

# format → its module, imported when a run renders in it (a check prints one format)
_MODULES = {
    "concise": "concise",
    "full": "full",
    "json": "json_output",
    "json-lines": "json_lines",
    "sarif": "sarif",
    "github": "github",
    "junit": "junit",
    "grouped": "grouped",
    "gitlab": "gitlab",
    "pylint": "pylint",
}

__all__ = ["FORMATS", "render", "render_statistics"]


def render(report, fmt: str, *, sources: Optional[Dict[str, str]] = None,
           torch_version: str = DEFAULT_TORCH_VERSION, color: bool = False, unsafe_fixes: bool = False) -> str:
    """The whole report as text in `fmt` (one of FORMATS). `sources` maps a path to its text, for
    the `full` format's code frames; a path missing there is read from disk."""
    if fmt not in _MODULES:
        raise ValueError(f"unknown output format {fmt!r}; expected one of {', '.join(FORMATS)}")
    renderer = importlib.import_module(f"{__name__}.{_MODULES[fmt]}").render
    return renderer(report, sources=sources, torch_version=torch_version, color=color, unsafe_fixes=unsafe_fixes)
