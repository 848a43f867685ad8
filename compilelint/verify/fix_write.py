"""verify --fix, step 6 of 6 (copy → run before → apply → run after → judge → write): with
`--proven-only`, write the proven fixes, and only them, to the user's files."""
from __future__ import annotations

from typing import Dict, List, Sequence

from compilelint.finding import Finding
from compilelint.verify.fix_apply import write_fixed
from compilelint.verify.fix_judge import FixResult


def write_proven(results: Sequence[FixResult]) -> List[str]:
    """Write the proven fixes to the user's files (atomically, each file only when its result
    parses); the paths written."""
    by_file: Dict[str, List[Finding]] = {}
    for r in results:
        if r.status == "proven":
            by_file.setdefault(r.finding.path, []).append(r.finding)
    return [path for path, todo in by_file.items() if write_fixed(path, todo, path) is not None]
