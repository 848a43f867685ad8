"""The last pass's placement of candidates, reused for the files whose summaries did not change.

Placing (`project_pass.placement.place`) turns each reached function's candidates into findings
one function at a time: what it asks besides the function's own candidates — its reach, the
project's names, the call sites that pass its arguments, config classes, guards' predicates —
reads no candidate anywhere. So when the files changed since the last pass changed their
summaries only in candidates (`summary_change.only_candidates`: a `print` or `.item()` added to a
reached `forward`, one removed, rows moved with them), and reach came out the same, every other
file's candidates are placed as before: only the changed files are placed again, and the pass's
rule hooks (frames, first-call state, ...), which do read the candidates, run on the whole.

Kept per pass: its roots, reach and disabled calls, and per file the findings placing made and
the noqa rows it used, in the order the builder held them (a hook reads them in that order); and
the constructors the user builds (`stored_reach.user_built`: the roots' classes' `__init__`s by
their MROs), which read the roots and the classes, no candidate: made again, they unpickled
3,400 of a 3,231-file project's records.
"""
from __future__ import annotations

from typing import Dict, FrozenSet, List, Optional, Set, Tuple

from compilelint.project_pass.findings import FindingBuilder
from compilelint.project_pass.placement import place
from compilelint.row_shift import Shift, moved_finding

# (roots, reach, disabled calls as (caller, index, callee), path → [(key, Finding)], path → used noqa,
# the cache key of the calls resolved and frames' parts the pass kept: `engine.project_findings`,
# the constructors the user builds: `OptionParts.user_built`)
Placement = Tuple[list, dict, list, Dict[str, list], Dict[str, Set[tuple]], Optional[str], FrozenSet[str]]


def placement_of(builder: FindingBuilder, roots, reached, disabled, tables: Optional[str] = None,
                 user_built: FrozenSet[str] = frozenset()) -> Placement:
    """What a pass's placement left in `builder` (asked before any rule hook adds to it)."""
    by_path: Dict[str, list] = {}
    for key, finding in builder.findings.items():
        by_path.setdefault(key[0], []).append((key, finding))
    noqa: Dict[str, Set[tuple]] = {}
    for used in builder.used_noqa:
        noqa.setdefault(used[0], set()).add(used)
    return list(roots), dict(reached), _refs(disabled), by_path, noqa, tables, user_built


def place_changed(kept: Placement, changed: Set[str], project, summaries: List, roots, reached, disabled,
                  settings, builder: FindingBuilder, calls) -> bool:
    """Place the candidates of the files in `changed` and take the rest from `kept`, when the pass
    reaches what the kept one did; False (nothing placed) when it does not."""
    kept_roots, kept_reached, kept_disabled, by_path, noqa, _, _ = kept
    if list(roots) != kept_roots or reached != kept_reached or _refs(disabled) != kept_disabled:
        return False
    place(project, [s for s in summaries if s.path in changed], roots, reached, settings, builder, calls)
    fresh = placement_of(builder, roots, reached, disabled)
    builder.findings = {}
    for summary in summaries:  # the builder's order: the summaries', each file's findings together
        builder.findings.update((fresh if summary.path in changed else kept)[3].get(summary.path, ()))
    builder.used_noqa = {used for path, rows in noqa.items() if path not in changed for used in rows}
    builder.used_noqa.update(builder_noqa for rows in fresh[4].values() for builder_noqa in rows)
    return True


def moved_placement(kept: Placement, shifts: Dict[str, Shift]) -> Optional[Placement]:
    """`kept` with the rows of each file in `shifts` moved (the pass's result stood, moved: so did
    its placement); None where a finding cannot be moved."""
    roots, reached, disabled, by_path, noqa, tables, user_built = kept
    by_path, noqa = dict(by_path), dict(noqa)
    for path, shift in shifts.items():
        moved = []
        for key, finding in by_path.get(path, ()):
            finding = moved_finding(finding, shift)
            if finding is None:
                return None
            moved.append(((key[0], finding.span, key[2]), finding))
        if path in by_path:
            by_path[path] = moved
        if path in noqa:
            noqa[path] = {(p, shift.row(row), code) for p, row, code in noqa[path]}
    return roots, reached, disabled, by_path, noqa, tables, user_built


def _refs(disabled) -> list:
    return [(f"{d.summary.module}.{d.function.qualname}", d.index, d.callee) for d in disabled]
