"""Automatic fixes: the edits rules attach to findings (`builders`) and applying them (`apply`).

`compilelint check --fix` calls `compilelint.fix.apply.run_fixes`. Fixes are built while the file is
walked (so they travel with findings, in the cache and in JSON output) and applied Ruff-style:
non-overlapping edits per round, re-checked, never written unless the result parses and the fixed
findings are gone.
"""
