"""Candidates → findings: rule metadata, selection, per-file ignores and noqa, each decided by the
settings of the finding's own file (its nearest configuration)."""
from __future__ import annotations

import os
from typing import Dict, List, Optional

from compilelint.config import Settings
from compilelint.finding import Finding, Region
from compilelint.rule import registry
from compilelint.summary import Candidate, FileSummary
from compilelint.torch_version import holds


class FindingBuilder:
    """Candidates → Findings: rule metadata, selection, per-file ignores and noqa, in that order,
    each decided by the settings of the finding's own file (its nearest configuration)."""

    def __init__(self, settings: Settings, judges: Optional[Dict[str, tuple]] = None):
        self.settings = settings
        self.rules = registry()
        self.findings: Dict[tuple, Finding] = {}
        self.used_noqa: set = set()  # (path, row, code) that suppressed something
        self._judges: Dict[str, tuple] = {} if judges is None else judges
        self._codes: Dict[int, tuple] = {}

    def judge(self, path: str):
        """(settings, enabled codes, codes ignored for this file, fixable codes) for `path`."""
        if path not in self._judges:
            s, enabled, fixable = self._codes_of(self.settings.for_path(path))
            self._judges[path] = (s, enabled, s.ignored_for(path), fixable)
        return self._judges[path]

    def _codes_of(self, s: Settings) -> tuple:
        """(settings, enabled codes, fixable codes), worked out once per settings."""
        if id(s) not in self._codes:
            self._codes[id(s)] = (s, s.enabled_codes(), s.fixable_codes())
        return self._codes[id(s)]

    def enabled_anywhere(self, summaries: List[FileSummary]) -> set:
        """The codes some file's settings enable (a project-wide rule runs if any file wants it).
        Asked per folder: a file's settings are its folder's configuration's (`Settings.for_path`),
        and finding a file's configuration stats it (3,231 files, 477 folders)."""
        out = set()
        folders = set()
        for summary in summaries:
            folder = os.path.dirname(summary.path)
            if folder not in folders:
                folders.add(folder)
                out |= self._codes_of(self.settings.for_path(os.path.join(folder, "")))[1]
        return out

    def add(self, summary: FileSummary, function: str, c: Candidate, region: Optional[Region], distinct: str = ""):
        """`distinct` tells apart findings of one rule at one span (one per unused noqa code)."""
        rule = self.rules.get(c.code)
        path = summary.path
        settings, enabled, ignored, fixable = self.judge(path)
        if rule is None or c.code not in enabled:
            return
        if rule.noqa_applies:
            if c.code in ignored:
                return
            if not settings.ignore_noqa and self._suppressed(summary, c.code, c.span.row):
                return
        severity = rule.severity
        if rule.kind == "recompile" and settings.profile == "vllm":
            severity = "error"  # vLLM runs under fail_on_recompile: every recompile is fatal
        if severity == "info" and self.settings.profile == "vllm":
            severity = "error"  # a deliberate break still splits vLLM's single graph
        key = (path, c.span, c.code + distinct)
        if key in self.findings:
            return
        tv = settings.torch_version
        self.findings[key] = Finding(
            code=c.code, name=rule.name, message=rule.render(c.message, tv), path=path, span=c.span, function=function,
            fix=_fix_for(c.fix, tv) if c.code in fixable else None,
            gb_type=rule.gb_types[0] if rule.gb_types else "",
            url=rule.url(tv), noqa_row=c.span.row, region=region, severity=severity, args=c.args,
        )

    def _suppressed(self, summary: FileSummary, code: str, row: int) -> bool:
        if summary.file_noqa is not None:
            if summary.file_noqa == () or any(code.startswith(p) for p in summary.file_noqa):
                return True
        if row in summary.noqa:
            codes = summary.noqa[row]
            if codes is None:
                return True
            for listed in codes:
                if code.startswith(listed):
                    self.used_noqa.add((summary.path, row, listed))
                    return True
        return False

    def finish(self, summaries: List[FileSummary]) -> List[Finding]:
        return sorted(self.findings.values(), key=lambda f: f.sort_key)


def _fix_for(fix, torch_version: str):
    """The rewrite that works on the selected torch: the fix where the behaviour it relies on holds
    there, else the one it names instead (`Fix.otherwise`), else None."""
    while fix is not None and fix.behaviour and not holds(fix.behaviour, torch_version):
        fix = fix.otherwise
    return fix
