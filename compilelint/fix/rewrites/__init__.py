"""Rewrites of the patterns that break real models, one module per pattern.

Each module exposes builders with the same contract as `compilelint.fix.builders`: called by a rule
while the file is walked, they return a `Fix` or None, and None whenever the source alone does not
prove the rewrite right. Every fix message says what changes in eager behaviour.
"""
