"""Fix builders: rules call these while the file is walked and attach what they return to
`self.report(..., fix=...)`. Each takes the rule's `RuleContext` (file-level state through
`ctx.fixes`, a `FixContext`) and returns a `Fix` or None: None whenever the rewrite can't be shown to
be right from the source alone (a builder refuses rather than guesses). Every fix message says what
changes in eager behaviour (`notes`).

Every builder works on the text as read (line ends, encoding and BOM are the applier's business:
inserted newlines use the file's own) and never raises: a bug here must not cost the finding.
One module per rewrite; `_common` and `_classes` hold what they share, `paths` which values are
tensors on every path.

Fixes travel with findings (in the cache and in JSON output); `compilelint.edits` turns them into
text and `compilelint.fix_files` applies them to files (`check --fix`).
"""
import importlib


def builder(module: str, name: str):
    """The fix builder `name` of `compilelint.fix.<module>`, imported on its first call: a run that
    reports nothing a builder fixes (a cached check re-analysing one file) imports no builder."""
    found = []

    def build(*args, **kwargs):
        if not found:
            found.append(getattr(importlib.import_module(f"compilelint.fix.{module}"), name))
        return found[0](*args, **kwargs)
    build.__name__ = name
    return build
