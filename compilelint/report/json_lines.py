"""`--output-format json-lines`: the `json` format's objects, one compact object per line."""
from __future__ import annotations

import json

from compilelint.rule import DEFAULT_TORCH_VERSION

from .json_output import finding_dicts


def render(report, *, torch_version: str = DEFAULT_TORCH_VERSION, **_) -> str:
    rows = finding_dicts(report, torch_version)
    return "".join(json.dumps(row, ensure_ascii=False, separators=(",", ":"), default=str) + "\n" for row in rows)
