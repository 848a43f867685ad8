"""The project pass as rules' `check_project` hooks see it: the `ProjectContext` implementation."""
from __future__ import annotations

from typing import Dict, List, Optional

from compilelint.project_pass.frames import Frames, FramesMemo, all_frames
from compilelint.project_pass.regions import DisabledCall, Project
from compilelint.project_pass.trees import Trees
from compilelint.finding import Region
from compilelint.project_pass.findings import FindingBuilder
from compilelint.rule import ProjectContext, break_codes
from compilelint.summary import Candidate, FileSummary, may_hold


class PassContext(ProjectContext):
    """The project pass as rules' `check_project` hooks see it."""

    def __init__(self, project: Project, summaries: List[FileSummary], roots, reached, disabled,
                 builder: FindingBuilder, trees: Trees, frames_memo: Optional[FramesMemo] = None):
        self._project = project
        self._summaries = summaries
        self._roots = roots
        self._reached = reached
        self._disabled = disabled
        self._builder = builder
        self._trees = trees
        self._frames_memo = frames_memo
        self._frames: Optional[Dict[str, Frames]] = None
        self._facts: Dict[tuple, object] = {}  # (rule code, fid) → `facts`' answer

    @property
    def summaries(self) -> List[FileSummary]:
        return self._summaries

    @property
    def roots(self):
        return self._roots

    @property
    def disabled_calls(self) -> List[DisabledCall]:
        return self._disabled

    def function(self, fid: str):
        return self._project.functions.get(fid)

    def facts(self, rule, fid: str):
        key = (rule.code, fid)  # hooks ask it of every reached function, in each mode
        if key not in self._facts:
            found = self._project.functions.get(fid)
            # most hold no facts of the rule, and stay packed
            self._facts[key] = None if found is None or not may_hold(found[1], rule.code) else \
                found[1].rule_facts.get(rule.code)
        return self._facts[key]

    def class_info(self, cls: str):
        found = self._project.classes.get(cls)
        return found[1] if found is not None else None

    def canonical(self, dotted: str) -> str:
        return self._project.canonical(dotted)

    def mro(self, cls: str) -> List[str]:
        return self._project.mro(cls)

    def display(self, fid: str) -> str:
        return self._project.display(fid)

    def region(self, fid: str) -> Optional[Region]:
        r = self._reached.get(fid)
        return Region(r.root, r.reason) if r is not None else None

    @property
    def reached(self):
        return self._reached

    @property
    def torch_version(self) -> str:
        return self._builder.settings.torch_version

    def dead(self, guards) -> bool:
        return self._project.dead(guards)

    def frames(self, mode: str) -> Frames:
        if self._frames is None:  # both modes at once, for every rule that asks
            self._frames = all_frames(self._project, self._reached, [r[0] for r in self._roots], break_codes(),
                                      self._frames_memo)
        return self._frames[mode]

    @property
    def trees(self) -> Trees:
        return self._trees

    def unused_noqa(self):
        if self._builder.settings.ignore_noqa:
            return []  # nothing was suppressed, so nothing can be told unused
        used = self._builder.used_noqa
        return [(summary, row, code) for summary in self._summaries for row, codes in summary.noqa.items()
                for code in codes or () if code.startswith("CL") and (summary.path, row, code) not in used]

    def findings_of(self, code: str):
        return [f for f in self._builder.findings.values() if f.code == code]

    def withdraw(self, finding) -> None:
        self._builder.findings = {k: f for k, f in self._builder.findings.items() if f is not finding}

    def report(self, rule, summary, function, span, message=None, region=None, *, guards=(), distinct=""):
        self._builder.add(summary, function, Candidate(rule.code, message or rule.message, span, None, tuple(guards)),
                          region, distinct)
