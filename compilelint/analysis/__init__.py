"""Per-file analysis (facts, bindings, tensor inference, the walk that runs the rules) and the
project pass over its summaries (`regions`). Nothing here imports a rule module or the CLI."""
from compilelint.analysis.walker import analyze

__all__ = ["analyze"]
