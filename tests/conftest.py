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


@pytest.fixture(scope="module")
def throwaway_rules(request):
    """Rules that exist only while one test module runs, made from its `THROWAWAY_RULES` (a list
    of class attributes: code, name, message, ..., `__doc__`): a Rule subclass registers itself
    globally, and tests elsewhere that walk the registry must not meet them."""
    from compilelint.rule import _REGISTRY, Rule, registry

    registry()  # load the real rules first: the throwaway ones join a complete registry
    made = [type(f"Throwaway{attrs['code']}", (Rule,), dict(attrs)) for attrs in request.module.THROWAWAY_RULES]
    yield made
    for rule in made:
        _REGISTRY.pop(rule.code, None)


@pytest.fixture(autouse=True)
def _builder_bugs_fail_tests(monkeypatch):
    """Fix builders swallow their own exceptions for users; in every test they must surface."""
    monkeypatch.setenv("COMPILELINT_DEBUG", "1")
