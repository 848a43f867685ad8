"""compilelint: find, fix and verify code that graph-breaks or recompiles under torch.compile."""

# The one place the version is written: pyproject.toml reads it (setuptools' dynamic version), a
# release is tagged v<this>, and CHANGELOG.md has a section for it (tests/test_release.py checks both).
__version__ = "0.1.0"
