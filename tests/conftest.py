import os

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
FIXTURES = os.path.join(ROOT, "fixtures")


@pytest.fixture
def write_tree(tmp_path):
    """Write {relative path: source} into a temporary folder and return its path."""

    def write(files):
        for rel, text in files.items():
            path = tmp_path / rel
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text)
        return tmp_path

    return write


@pytest.fixture(autouse=True)
def _builder_bugs_fail_tests(monkeypatch):
    """Fix builders swallow their own exceptions for users; in every test they must surface."""
    monkeypatch.setenv("COMPILELINT_DEBUG", "1")
