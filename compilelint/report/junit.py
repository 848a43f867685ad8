"""`--output-format junit`: JUnit XML, one testsuite per file and one failing testcase per finding.

CI systems that read test reports (GitLab, Jenkins, Azure) show the findings as failed tests; a clean
run is a single passing testcase.
"""
from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from itertools import groupby

from compilelint.hidden import hidden_suffix

from .location import cell_of

# Characters XML 1.0 cannot hold at all, even escaped.
_NOT_XML = re.compile("[^\t\n\r\x20-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")


def _clean(text: str) -> str:
    return _NOT_XML.sub("\ufffd", text)


def _suite(parent, name: str, tests: int, failures: int = 0, errors: int = 0):
    return ET.SubElement(parent, "testsuite", name=_clean(name), tests=str(tests), failures=str(failures),
                         errors=str(errors), skipped="0", package="compilelint")


def _testcase(suite, finding):
    span = finding.span
    cell, row, _ = cell_of(finding)
    case = ET.SubElement(suite, "testcase", name=f"compilelint.{finding.code}", classname=_clean(finding.path),
                         file=_clean(finding.path), line=str(row), column=str(span.col))
    failure = ET.SubElement(case, "failure", message=_clean(finding.message), type=finding.code)
    where = f"cell {cell}, " if cell else ""
    failure.text = _clean(f"{where}line {row}, col {span.col}, {finding.code} {finding.message}"
                          f"{hidden_suffix(finding)}")


def render(report, **_) -> str:
    errors = len(report.errors)
    root = ET.Element("testsuites", name="compilelint", tests=str(len(report.findings) + errors),
                      failures=str(len(report.findings)), errors=str(errors))
    by_path = groupby(sorted(report.findings, key=lambda f: f.sort_key), key=lambda f: f.path)
    for path, group in by_path:
        findings = list(group)
        suite = _suite(root, path, len(findings), failures=len(findings))
        for finding in findings:
            _testcase(suite, finding)
    if report.errors:
        suite = _suite(root, "compilelint (files not checked)", errors, errors=errors)
        for e in report.errors:
            case = ET.SubElement(suite, "testcase", name="compilelint.check", classname=_clean(e.path),
                                 file=_clean(e.path))
            ET.SubElement(case, "error", message=_clean(e.message)).text = _clean(e.message)
    if not report.findings and not report.errors:
        root.set("tests", "1")
        suite = _suite(root, "compilelint", 1)
        ET.SubElement(suite, "testcase", name="compilelint", classname="compilelint")
    ET.indent(root)
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(root, encoding="unicode") + "\n"
