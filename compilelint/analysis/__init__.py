"""Per-file analysis: one file in, its `FileSummary` out (facts, bindings, tensor inference, the
walk that runs the rules). Nothing here imports the project pass (`compilelint.project_pass`), a
rule module or the CLI."""
from compilelint.analysis.walker import analyze

__all__ = ["analyze"]
