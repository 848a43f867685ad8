"""CL206 reads Dynamo's measured verdicts (compilelint/data/untraceable-<torch>.json, written by
bench/measure/skipped_callables.py) for the torch the findings speak of, never a hand-written list."""
import os
import subprocess
import sys

import pytest

from compilelint.config import Settings
from compilelint.engine import check_paths
from compilelint.rule import KNOWN_TORCH_VERSIONS
from compilelint.rules.untraceable_call import OWNED_ELSEWHERE
from compilelint.torch_version import holds, measured_table

from conftest import FIXTURES
from helpers import check_source

CALLS = {v: measured_table("untraceable", v) for v in KNOWN_TORCH_VERSIONS}


def calling(names):
    """A compiled module whose forward calls each of `names` once, one per line; the rows."""
    lines = ["import torch"] + [f"import {m}" for m in sorted({n.rsplit(".", 1)[0] for n in names})]
    lines += ["class M(torch.nn.Module):", "    def forward(self, x):"]
    first = len(lines) + 1
    lines += [f"        {n}()" for n in names] + ["        return x", "m = torch.compile(M())"]
    return "\n".join(lines) + "\n", {n: first + i for i, n in enumerate(names)}


def test_every_row_says_how_it_was_measured():
    for version, calls in CALLS.items():
        assert calls, f"no table for torch {version}"
        for name, row in calls.items():
            assert row["verdict"] in ("breaks", "traces", "unprobed", "error") and row["measured"], (version, name)
            if row["verdict"] == "breaks":
                # the probe's compiled call, or a truth record's run of real model code on that torch
                assert row["gb_type"] and row["measured"].startswith(("compiled probe", "bench/truth")), (version, name)


def test_the_verdict_decides_not_the_module():
    """Names of one skipped module: the ones the probe broke on are reported, the ones Dynamo
    special-cases are not (random.randint traces, random.choice breaks; measured on both versions)."""
    for version in KNOWN_TORCH_VERSIONS:
        assert holds("untraceable-call:random.choice", version)
        assert not holds("untraceable-call:random.randint", version)
    source = "import random\nimport torch\n\n@torch.compile\ndef f(x):\n    a = random.randint(0, 3)\n" \
             "    b = random.choice([1, 2])\n    return x * a * b\n"
    for version in KNOWN_TORCH_VERSIONS:
        rows = {f.span.row for f in check_source(source, select=["CL206"], torch_version=version).findings}
        assert rows == {7}, version


def test_a_shallow_copy_breaks_on_2_11_only():
    """`copy.copy` of a plain object: "Attempted to call function marked as skipped" on 2.11,
    traced on 2.13 (both measured by the probe)."""
    source = "import copy\nimport torch\n\nclass Settings:\n    scale = 2\n\n@torch.compile\ndef f(x, s: Settings):\n" \
             "    local = copy.copy(s)\n    return x * local.scale\n"
    rows = {v: {f.span.row for f in check_source(source, select=["CL206"], torch_version=v).findings}
            for v in KNOWN_TORCH_VERSIONS}
    assert rows == {"2.11": {9}, "2.13": set()}


def test_the_table_of_the_selected_torch_is_read():
    modules = ("time", "os", "inspect", "sys", "hashlib", "json", "pickle", "copy", "traceback", "uuid", "platform")
    differ = sorted(n for n in set(CALLS["2.11"]) & set(CALLS["2.13"])
                    if (CALLS["2.11"][n]["verdict"] == "breaks") != (CALLS["2.13"][n]["verdict"] == "breaks")
                    and n not in OWNED_ELSEWHERE and n.count(".") == 1 and n.split(".")[0] in modules)
    assert differ, "the measured versions agree on every module-level call"
    source, rows = calling(differ)
    for version in KNOWN_TORCH_VERSIONS:
        got = {f.span.row for f in check_source(source, select=["CL206"], torch_version=version).findings}
        want = {rows[n] for n in differ if CALLS[version][n]["verdict"] == "breaks"}
        assert got == want, version


@pytest.mark.slow
def test_check_reads_the_table_without_importing_torch():
    path = os.path.join(FIXTURES, "precision", "measured_calls.py")
    code = ("import sys, json; from compilelint.cli import main; sys.argv=['compilelint','check','--no-cache',"
            f"{path!r},'--select','CL206','--output-format','json','--exit-zero','-q'];\n"
            "try:\n    main()\nexcept SystemExit:\n    pass\n"
            "assert 'torch' not in sys.modules, 'check imported torch'")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.count('"CL206"') == 6, out.stdout


def test_a_torch_function_dynamo_refuses_by_its_handler():
    """`torch.is_inference_mode_enabled` is in the graph by Dynamo's lookup, but its handler always
    breaks ("Encountered torch.is_inference_mode_enabled during tracing"): the probe measures it
    (torch 2.13) and the truth records show it on 2.11, so a branch on it in compiled code is
    reported on both."""
    source = "import torch\n\n@torch.compile\ndef f(x):\n    if torch.is_inference_mode_enabled():\n" \
             "        return x + 1\n    return x - 1\n"
    for version in KNOWN_TORCH_VERSIONS:
        assert CALLS[version]["torch.is_inference_mode_enabled"]["verdict"] == "breaks"
        rows = {f.span.row for f in check_source(source, select=["CL206"], torch_version=version).findings}
        assert rows == {5}, version


def test_a_library_call_breaks_where_its_row_says():
    """Calls into a library outside the checked tree, judged by data/library_calls-<torch>.json
    (fixtures/precision/library_calls*.py, measured on torch 2.13): the Cholesky, and a subclass's
    `super().__init__` given a keyword that is not a constant, break on both measured versions;
    with constant keywords only, or a library function with no row, nothing is reported."""
    flagged = os.path.join(FIXTURES, "precision", "library_calls.py")
    clean = os.path.join(FIXTURES, "precision", "library_calls_clean.py")
    with open(flagged, encoding="utf-8") as f:
        text = f.read().splitlines()
    want = {i for i, line in enumerate(text, 1) if line.rstrip().endswith("# expect: CL206")}
    assert len(want) == 2
    for version in KNOWN_TORCH_VERSIONS:
        report = check_paths([flagged, clean], Settings(cache=False, named_alone=True, select=["CL206"],
                                                        torch_version=version))
        got = {(os.path.basename(f.path), f.span.row) for f in report.findings}
        assert got == {("library_calls.py", row) for row in want}, version


def test_a_held_module_of_a_library_breaks_where_its_row_says():
    """`self.spec(x)` of a torchaudio `Spectrogram` built in `__init__` runs its `forward`, which
    the 2.11 table says breaks (the truth corpus's encodec discriminator); 2.13 has no row (no
    torchaudio build for it): reported on 2.11 only, at the call (fixtures/precision/library_held_module.py)."""
    path = os.path.join(FIXTURES, "precision", "library_held_module.py")
    with open(path, encoding="utf-8") as f:
        want = {i for i, line in enumerate(f.read().splitlines(), 1) if "breaks on torch 2.11" in line}
    assert len(want) == 1
    for version, rows in (("2.11", want), ("2.13", set())):
        report = check_paths([path], Settings(cache=False, named_alone=True, select=["CL206"], torch_version=version))
        assert {f.span.row for f in report.findings} == rows, version
