"""Jupyter notebooks (issue 16, point 4): the code cells analysed as one module, findings at
`file:cell N:row:col` in every format, fixes and noqa comments written back into their cell."""
import json

import pytest

from test_layout import run


def notebook(*cells):
    out = []
    for kind, lines in cells:
        cell = {"cell_type": kind, "metadata": {}, "source": lines}
        if kind == "code":
            cell.update(execution_count=None, outputs=[{"output_type": "stream", "name": "stdout", "text": ["hi\n"]}])
        out.append(cell)
    nb = {"cells": out, "metadata": {"kernelspec": {"name": "python3", "display_name": "Python 3"}},
          "nbformat": 4, "nbformat_minor": 5}
    return json.dumps(nb, indent=1) + "\n"


NB = notebook(
    ("markdown", ["# A model\n", "with a break"]),
    ("code", ["import torch\n", "%matplotlib inline\n", "!echo hi"]),
    ("code", ["@torch.compile\n", "def f(x):\n", "    print(x)\n", "    return x.sum().item()"]),
)


@pytest.fixture
def tree(write_tree):
    return write_tree({"n.ipynb": NB, "m.py": "x = 1\n"})


def test_cells_are_analysed_as_one_module_and_located_by_cell(tree):
    r = run(tree, "check", ".")  # found by walking, magics and all
    assert r.returncode == 1, r.stdout + r.stderr
    lines = [line.split(" `")[0].split(" [")[0] for line in r.stdout.splitlines() if ": CL" in line]
    assert lines == ["n.ipynb:cell 3:3:5: CL201", "n.ipynb:cell 3:4:12: CL101"], r.stdout


@pytest.mark.parametrize("fmt,needle", [
    ("full", "n.ipynb:cell 3:3:5"),
    ("grouped", "  cell 3:3:5 CL201"),
    ("pylint", "n.ipynb:cell 3:3: [CL201]"),
    ("github", "line=3,col=5"),
    ("junit", "cell 3"),
])
def test_every_format_says_the_cell(tree, fmt, needle):
    r = run(tree, "check", "n.ipynb", "--output-format", fmt)
    assert needle in r.stdout, r.stdout


def test_json_and_sarif_carry_the_cell(tree):
    rows = json.loads(run(tree, "check", "n.ipynb", "--output-format", "json").stdout)
    row = next(r for r in rows if r["code"] == "CL201")
    assert row["cell"] == 3 and row["location"] == {"row": 3, "column": 5}
    sarif = json.loads(run(tree, "check", "n.ipynb", "--output-format", "sarif").stdout)
    result = next(r for r in sarif["runs"][0]["results"] if r["ruleId"] == "CL201")
    assert result["properties"]["cell"] == 3
    assert result["locations"][0]["physicalLocation"]["region"]["startLine"] == 3


def test_fixes_are_written_back_into_their_cell(tree):
    r = run(tree, "check", "n.ipynb", "--fix", "--unsafe-fixes")
    assert "n.ipynb:cell 3:5:12: CL101" in r.stdout, r.stdout + r.stderr
    nb = json.loads((tree / "n.ipynb").read_text())
    assert [c["cell_type"] for c in nb["cells"]] == ["markdown", "code", "code"]
    assert nb["cells"][0]["source"] == ["# A model\n", "with a break"]
    assert nb["cells"][1]["source"] == ["import torch\n", "%matplotlib inline\n", "!echo hi"]
    assert nb["cells"][2]["source"] == [
        "@torch.compile\n", "def f(x):\n", "    if not torch.compiler.is_compiling():\n", "        print(x)\n",
        "    return x.sum().item()"]
    assert nb["cells"][2]["outputs"][0]["text"] == ["hi\n"] and nb["metadata"]["kernelspec"]["name"] == "python3"
    before = (tree / "n.ipynb").read_text()
    run(tree, "check", "n.ipynb", "--fix", "--unsafe-fixes")
    assert (tree / "n.ipynb").read_text() == before  # idempotent


def test_add_noqa_writes_into_the_cell(tree):
    run(tree, "check", "n.ipynb", "--add-noqa")
    nb = json.loads((tree / "n.ipynb").read_text())
    assert nb["cells"][2]["source"][2] == "    print(x)  # noqa: CL201\n"
    assert run(tree, "check", "n.ipynb").returncode == 0


def test_a_file_that_is_not_a_notebook_is_reported(tree):
    (tree / "bad.ipynb").write_text("{not json")
    r = run(tree, "check", "bad.ipynb", "--exit-zero")
    assert "bad.ipynb:1:1: CL001" in r.stdout and "not a Jupyter notebook" in r.stdout, r.stdout + r.stderr
