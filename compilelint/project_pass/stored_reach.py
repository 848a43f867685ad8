"""Roots and reach, kept in a store (the on-disk cache, the language server's memo) and reused
while no file's call graph changed (an edit inside a function body)."""
from __future__ import annotations

from typing import List, Optional

from compilelint.project_pass.regions import DisabledCall, Project, compile_roots, reach
from compilelint.project_pass.resolved_calls import ResolvedCalls
from compilelint.cache import Store, reach_key
from compilelint.config import Settings
from compilelint.summary import FileSummary


def roots_and_reach(project: Project, summaries: List[FileSummary], entries: List[str], settings: Settings,
                    store: Optional[Store], calls: ResolvedCalls):
    """(roots, reached, disabled calls). The store may also know the roots still hold (the
    language server, after an edit that changed calls only): then reach alone is made again."""
    key = None
    if store is not None:
        key = reach_key(entries, settings, summaries)
        hit = store.get(key)
        if hit is not None:
            roots, reached, refs = hit
            project.option_parts.user_built = user_built(project, roots)
            return roots, reached, disabled_calls(project, refs)
    known = store.known_roots if store is not None else None
    roots = known or compile_roots(project, entries, settings.scope, settings.follow_swapped)
    project.option_parts.user_built = user_built(project, roots)
    reached, disabled = reach(project, roots, settings.follow_swapped, calls)
    if key is not None:
        refs = [(f"{d.summary.module}.{d.function.qualname}", d.index, d.callee) for d in disabled]
        store.put_run(key, (roots, reached, refs))
    return roots, reached, disabled


def user_built(project: Project, roots) -> frozenset:
    """The constructors of the compile roots' classes: the user builds those models, with any
    arguments (`option_parts`)."""
    out = set()
    for fid, _via, *rest in roots:
        cls = (rest[-1] if rest else None) or (project.defining_class(fid) if fid in project.functions else None)
        if cls:
            out.update(m for m in (project.method(cls, "__init__"), project.method(cls, "__new__")) if m)
    return frozenset(out)


def disabled_calls(project: Project, refs) -> List[DisabledCall]:
    """The disabled calls `refs` names as (caller, index of the call, callee)."""
    out = []
    for caller, index, callee in refs:
        summary, info = project.functions[caller]
        out.append(DisabledCall(summary, info, info.calls[index], callee, index))
    return out
