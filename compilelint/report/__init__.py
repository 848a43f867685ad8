"""Render a `Report` in the formats users know from Ruff, plus SARIF, GitHub annotations and JUnit.

One module per format, each with `render(report, **options) -> str`; this module picks one.
Nothing here imports torch.
"""
from __future__ import annotations

from typing import Dict, Optional

from compilelint.rule import DEFAULT_TORCH_VERSION

from . import concise, full, github, gitlab, grouped, json_lines, json_output, junit, pylint, sarif
from .stats import render_statistics

FORMATS = ("concise", "full", "grouped", "json", "json-lines", "sarif", "github", "gitlab", "junit", "pylint")

_RENDERERS = {
    "concise": concise.render,
    "full": full.render,
    "json": json_output.render,
    "json-lines": json_lines.render,
    "sarif": sarif.render,
    "github": github.render,
    "junit": junit.render,
    "grouped": grouped.render,
    "gitlab": gitlab.render,
    "pylint": pylint.render,
}

__all__ = ["FORMATS", "render", "render_statistics"]


def render(report, fmt: str, *, sources: Optional[Dict[str, str]] = None,
           torch_version: str = DEFAULT_TORCH_VERSION, color: bool = False, unsafe_fixes: bool = False) -> str:
    """The whole report as text in `fmt` (one of FORMATS). `sources` maps a path to its text, for
    the `full` format's code frames; a path missing there is read from disk."""
    try:
        renderer = _RENDERERS[fmt]
    except KeyError:
        raise ValueError(f"unknown output format {fmt!r}; expected one of {', '.join(FORMATS)}") from None
    return renderer(report, sources=sources, torch_version=torch_version, color=color, unsafe_fixes=unsafe_fixes)
