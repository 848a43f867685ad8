"""Precision fixtures: false alarms found on real model code must stay silent (fixtures/precision).

Each file holds the must-not-flag pattern of one false-alarm class, plus must-flag companions
marked `# expect: CODE`; a file is checked alone, with default settings (scope "modules").
"""
import os
import re
from collections import Counter

import pytest

from compilelint.config import Settings
from compilelint.engine import check_paths

from conftest import FIXTURES

PRECISION = os.path.join(FIXTURES, "precision")
CASES = sorted(n for n in os.listdir(PRECISION) if n.endswith(".py"))
EXPECT = re.compile(r"#\s*expect:\s*([A-Z0-9, ]+)")


def expected(path):
    """(row, code) → how many findings: `# expect: CL106, CL106` is two on that row."""
    out = Counter()
    with open(path, encoding="utf-8") as fh:
        for i, line in enumerate(fh, 1):
            m = EXPECT.search(line)
            if m:
                out.update((i, code.strip()) for code in m.group(1).split(",") if code.strip())
    return out


@pytest.mark.parametrize("case", CASES)
def test_precision_case(case):
    path = os.path.join(PRECISION, case)
    report = check_paths([path], Settings(cache=False, named_alone=True))
    assert not report.errors
    got = Counter((f.span.row, f.code) for f in report.findings)  # one break reported twice fails too
    assert got == expected(path), f"{case}: unexpected {sorted(got - expected(path))}, missing {sorted(expected(path) - got)}"


def test_all_fixtures_present():
    assert len(CASES) >= 4
