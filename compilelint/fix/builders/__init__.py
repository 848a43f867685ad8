"""Fix builders: rules call these while the file is walked and attach what they return to
`self.report(..., fix=...)`. Each takes the rule's `RuleContext` (file-level state through
`ctx.fixes`, a `FixContext`) and returns a `Fix` or None: None whenever the rewrite can't be shown to
be right from the source alone (a builder refuses rather than guesses).

Every builder works on the text as read (line ends, encoding and BOM are the applier's business:
inserted newlines use the file's own) and never raises: a bug here must not cost the finding.
One module per rewrite; `_common` and `_classes` hold what they share.
"""
from compilelint.fix.builders.counter import buffer_counter
from compilelint.fix.builders.guard import guard_statement
from compilelint.fix.builders.item import drop_item
from compilelint.fix.builders.one_hot import one_hot_num_classes
from compilelint.fix.builders.where import where_for_if, where_for_ifexp

__all__ = ["buffer_counter", "drop_item", "guard_statement", "one_hot_num_classes", "where_for_if", "where_for_ifexp"]
