"""The import contracts of pyproject.toml's [tool.importlinter], checked by import-linter: `check`
and the language server never import torch or `verify`, rules never import the CLI, the per-file
analysis and the project pass never import rules, the per-file analysis never imports the project
pass, report never imports the engine, fixes run one way (applying over the engine over rules over
fix builders over `rule` over text and edits: nothing imports upward), and verify --fix's steps
import only earlier steps."""
import os
import subprocess
import sys

from conftest import ROOT

CONTRACTS = (
    "check and the language server never import torch or verify",
    "rules never import the CLI or the engine",
    "analysis never imports rules",
    "the per-file analysis never imports the project pass",
    "report never imports the engine",
    "fix layers import downward only",
    "verify --fix steps import earlier steps only",
)


def test_import_contracts_are_kept():
    lint = os.path.join(os.path.dirname(sys.executable), "lint-imports")
    r = subprocess.run([lint, "--no-cache"], cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stdout + r.stderr
    for name in CONTRACTS:
        assert f"{name} KEPT" in r.stdout, r.stdout


def _ctx_members_used(path, names=("ctx",)):
    import ast

    tree = ast.parse(open(path, encoding="utf-8").read())
    used = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute):
            base = node.value
            if isinstance(base, ast.Attribute) and base.attr == "ctx" or isinstance(base, ast.Name) and base.id in names:
                used.add(node.attr)
    return used


def test_rules_and_builders_use_only_the_declared_rule_context():
    import glob

    from compilelint.rule import RuleContext

    declared = {name for name in vars(RuleContext) if not name.startswith("_")}
    files = glob.glob(os.path.join(ROOT, "rules", "*.py")) + glob.glob(os.path.join(ROOT, "compilelint", "fix", "*.py"))
    assert len(files) > 20
    for path in files:
        undeclared = _ctx_members_used(path) - declared
        assert not undeclared, f"{os.path.relpath(path, ROOT)} uses ctx.{sorted(undeclared)}, not in RuleContext"


def test_rules_take_gb_ids_from_their_declared_gb_ids():
    """A message names a GB id only as `{gb}`, `{gb1}`, `{gb@2.11}` (filled from the rule's `gb_ids`
    for the torch version in use), never as a literal: `--torch-version` changes message and link
    together. Docstrings and `gb_ids` itself are where ids are written."""
    import ast
    import glob
    import re

    literal = re.compile(r"GB\d{4}")
    for path in glob.glob(os.path.join(ROOT, "rules", "*.py")):
        tree = ast.parse(open(path, encoding="utf-8").read())
        skip = set()
        for node in ast.walk(tree):
            body = getattr(node, "body", None)
            if isinstance(body, list) and body and isinstance(body[0], ast.Expr) and \
                    isinstance(body[0].value, ast.Constant):
                skip.add(id(body[0].value))  # a docstring
            if isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == "gb_ids" for t in node.targets):
                skip.update(id(sub) for sub in ast.walk(node.value))
        for node in ast.walk(tree):
            if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in skip:
                # the rule's own VALID / INVALID examples are code, not messages
                assert not literal.search(node.value) or "\n" in node.value, \
                    f"{os.path.relpath(path, ROOT)}:{node.lineno}: a GB id written by hand: {node.value!r}"


def test_long_functions_and_classes_say_why():
    """In the engine (per-file analysis, project pass, engine.py) no class is over 300 lines and no
    function over 60 without a reason in its docstring ("Long because ...")."""
    import ast
    import glob

    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    files = sorted(glob.glob(os.path.join(root, "compilelint", "analysis", "*.py")) +
                   glob.glob(os.path.join(root, "compilelint", "project_pass", "*.py")) +
                   [os.path.join(root, "compilelint", "engine.py")])
    unexplained = []
    for path in files:
        with open(path, encoding="utf-8") as f:
            tree = ast.parse(f.read())
        for node in ast.walk(tree):
            limit = 300 if isinstance(node, ast.ClassDef) else 60 if isinstance(
                node, (ast.FunctionDef, ast.AsyncFunctionDef)) else None
            if limit and node.end_lineno - node.lineno + 1 > limit and \
                    "Long because" not in (ast.get_docstring(node) or ""):
                unexplained.append(f"{os.path.relpath(path, root)}:{node.lineno} {node.name}")
    assert unexplained == []
