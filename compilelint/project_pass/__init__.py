"""The project pass: from every file's summary to findings. `regions` finds the compile roots and
what they reach across files (`stored_reach` keeps that between runs), `placement` turns the
reached candidates into findings through `findings.FindingBuilder` (selection, per-file ignores,
noqa), and `context.PassContext` runs the rules' project-pass hooks (`frames`: which functions
Dynamo runs as frames of their own). It reads summaries and, for a few questions, the parsed
modules (`trees`); it never walks a file with the rules."""
