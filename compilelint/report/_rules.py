"""Rule metadata for a finding: the registry when the code is there, the finding itself when not.

Codes reported only by `verify` (CL9xx) may have no Rule class; every helper here falls back to what
the finding carries.
"""
from __future__ import annotations

import re
from typing import Dict, Optional

from compilelint.rule import DEFAULT_TORCH_VERSION


def load_rules() -> Dict[str, type]:
    """code -> Rule class; an empty dict when the rules package cannot be loaded."""
    try:
        from compilelint.rule import registry

        return registry()
    except Exception:  # a broken or missing rules package must not stop a report
        return {}


def rule_url(finding, rule: Optional[type], torch_version: str = DEFAULT_TORCH_VERSION) -> str:
    if finding.url:
        return finding.url
    return rule.url(torch_version) if rule is not None else ""


def doc_sections(doc: str) -> Dict[str, str]:
    """Ruff-style docstring sections: {"What it does": "...", "Use instead": "...", ...}."""
    sections: Dict[str, list] = {}
    current = None
    for line in doc.splitlines():
        if line.startswith("## "):
            current = line[3:].strip().rstrip("?")
            sections[current] = []
        elif current is not None:
            sections[current].append(line)
    return {name: "\n".join(lines).strip() for name, lines in sections.items()}


def first_sentence(text: str) -> str:
    text = " ".join(text.split())
    match = re.match(r"(.+?(?<!e\.g)(?<!i\.e)[.!?])(\s|$)", text)
    return match.group(1) if match else text


def help_text(finding, rule: Optional[type]) -> str:
    """The one-line advice of the `full` format: the prose of "Use instead", else the fix's title."""
    if rule is not None:
        use_instead = doc_sections(rule.doc()).get("Use instead", "")
        prose = use_instead.split("```")[0].strip()
        if prose:
            return first_sentence(prose)
    return finding.fix.message if finding.fix is not None else ""
