"""The machine formats: json, json-lines, SARIF (validated against the vendored schema), github, junit."""
import copy
import json
import os
import xml.etree.ElementTree as ET
from pathlib import Path

import jsonschema
import pytest

import compilelint
from compilelint.finding import Edit, FileError, Finding, Fix, Region, Report, Span
from compilelint.report import render

SCHEMA_PATH = Path(compilelint.__file__).parent / "data" / "sarif-schema-2.1.0.json"


GB_TYPE = "Unsupported Tensor.item() call with capture_scalar_outputs=False"


pytestmark = pytest.mark.usefixtures("throwaway_rules")
THROWAWAY_RULES = [
    dict(code="CL992", name="throwaway-item-2", message="`.item()` breaks the graph", gb_types=(GB_TYPE,),
         gb_ids={"2.13": ("GB0124",), "2.11": ("GB0120",)}, __doc__="""
        ## What it does
        Flags `.item()` on a tensor inside a compiled region.

        ## Why is this bad?
        Dynamo breaks the graph.

        ## Use instead
        Keep the value as a tensor.
        """),
    dict(code="CL993", name="throwaway-shape", message="branching on a shape recompiles", kind="recompile",
         severity="warning"),
]


ITEM = Finding(
    code="CL992", name="throwaway-item-2", message="`.item()` breaks the graph — Grüße", path="pkg/m.py",
    span=Span(3, 9, 3, 17), function="f",
    fix=Fix("safe", "Drop `.item()`", (Edit("", Span(3, 10, 3, 17)),)),
    gb_type=GB_TYPE, noqa_row=3,
    region=Region("pkg/m.py:Net.forward", "Net.forward → f"),
    verification={"status": "confirmed", "gb_id": "GB0124"},
)
SHAPE = Finding(
    code="CL993", name="throwaway-shape", message="branching on a shape recompiles", path="pkg/m.py",
    span=Span(4, 8, 6, 2), function="f", severity="warning",
    fix=Fix("unsafe", "Mark dynamic", (Edit("torch._dynamo.mark_dynamic(x, 0)\n", Span(4, 1, 4, 1)),
                                       Edit("", Span(5, 1, 6, 1)))),
    url="https://example.org/shape",
)
MISSED = Finding(code="CL998", name="missed-break", message="Dynamo broke: `open()`", path="b.py",
                 span=Span(1, 1, 1, 5), function="")


def report(*findings, errors=()):
    return Report(findings=list(findings), errors=list(errors), files_checked=2)


# --- json ----------------------------------------------------------------------------------------


def test_json_objects_exactly():
    rows = json.loads(render(report(ITEM, SHAPE, MISSED), "json"))
    assert rows[0] == {
        "code": "CL992",
        "name": "throwaway-item-2",
        "message": "`.item()` breaks the graph — Grüße",
        "filename": "pkg/m.py",
        "location": {"row": 3, "column": 9},
        "end_location": {"row": 3, "column": 17},
        "fix": {
            "applicability": "safe",
            "message": "Drop `.item()`",
            "edits": [{"content": "", "location": {"row": 3, "column": 10}, "end_location": {"row": 3, "column": 17}}],
        },
        "url": "https://meta-pytorch.github.io/compile-graph-break-site/gb/gb0124.html",
        "noqa_row": 3,
        "gb_type": "Unsupported Tensor.item() call with capture_scalar_outputs=False",
        "region": {"root": "pkg/m.py:Net.forward", "reason": "Net.forward → f", "mode": "any", "condition": ""},
        "severity": "error",
        "verification": {"status": "confirmed", "gb_id": "GB0124"},
    }
    assert list(rows[1]) == ["code", "name", "message", "filename", "location", "end_location", "fix", "url",
                             "noqa_row", "gb_type", "region", "severity"]  # no verification key
    assert rows[1]["url"] == "https://example.org/shape"  # the finding's own url wins
    assert rows[1]["region"] is None and rows[1]["severity"] == "warning"
    assert [e["content"] for e in rows[1]["fix"]["edits"]] == ["torch._dynamo.mark_dynamic(x, 0)\n", ""]
    assert rows[2]["fix"] is None and rows[2]["url"] == ""  # unregistered code: nothing invented


def test_json_url_follows_torch_version():
    rows = json.loads(render(report(ITEM), "json", torch_version="2.11"))
    assert rows[0]["url"].endswith("/gb/gb0120.html")


def test_json_is_indented_and_empty_is_an_array():
    out = render(report(ITEM), "json")
    assert out.startswith('[\n  {\n    "code": "CL992"')
    assert "Grüße" in out  # UTF-8, not \u escapes
    assert json.loads(render(report(), "json")) == []


def test_json_lines_one_object_per_line():
    out = render(report(ITEM, SHAPE, MISSED), "json-lines")
    lines = out.splitlines()
    assert len(lines) == 3 and out.endswith("\n")
    assert [json.loads(line) for line in lines] == json.loads(render(report(ITEM, SHAPE, MISSED), "json"))
    assert render(report(), "json-lines") == ""


# --- sarif ---------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def validator():
    schema = json.loads(SCHEMA_PATH.read_text(encoding="utf-8"))
    assert schema["$schema"] == "http://json-schema.org/draft-04/schema#"
    jsonschema.Draft4Validator.check_schema(schema)
    return jsonschema.Draft4Validator(schema)


def test_sarif_validates_and_carries_everything(validator):
    rep = report(ITEM, SHAPE, MISSED, errors=[FileError("bad.py", "cannot parse: line 1")])
    log = json.loads(render(rep, "sarif"))
    validator.validate(log)
    assert log["version"] == "2.1.0"
    run = log["runs"][0]
    driver = run["tool"]["driver"]
    assert driver["name"] == "compilelint" and driver["version"] == compilelint.__version__
    assert driver["informationUri"].startswith("https://")
    assert [r["id"] for r in driver["rules"]] == ["CL992", "CL993", "CL998"]
    item_rule = driver["rules"][0]
    assert item_rule["name"] == "throwaway-item-2"
    assert item_rule["shortDescription"] == {"text": "`.item()` breaks the graph"}
    assert item_rule["fullDescription"]["text"] == "Flags `.item()` on a tensor inside a compiled region."
    assert "## Use instead" in item_rule["help"]["markdown"]
    assert item_rule["helpUri"].endswith("/gb/gb0124.html")
    assert item_rule["properties"]["gb_types"] == [GB_TYPE]
    assert driver["rules"][1]["defaultConfiguration"]["level"] == "warning"
    assert driver["rules"][2] == {"id": "CL998", "name": "missed-break",
                                  "shortDescription": {"text": "Dynamo broke: `open()`"}}

    results = run["results"]
    assert [driver["rules"][r["ruleIndex"]]["id"] for r in results] == [r["ruleId"] for r in results]
    first = results[0]
    assert first["level"] == "error" and results[1]["level"] == "warning"
    assert first["message"]["text"] == ITEM.message
    assert first["locations"][0]["physicalLocation"] == {
        "artifactLocation": {"uri": "pkg/m.py"},
        "region": {"startLine": 3, "startColumn": 9, "endLine": 3, "endColumn": 17},
    }
    change = first["fixes"][0]["artifactChanges"][0]
    assert change["replacements"] == [{"deletedRegion": {"startLine": 3, "startColumn": 10, "endLine": 3,
                                                         "endColumn": 17}, "insertedContent": {"text": ""}}]
    assert first["properties"]["region"] == {"root": "pkg/m.py:Net.forward", "reason": "Net.forward → f",
                                                   "mode": "any", "condition": ""}
    assert first["properties"]["verification"]["status"] == "confirmed"
    assert "verification" not in results[1].get("properties", {})
    assert "fixes" not in results[2]
    assert run["invocations"][0]["executionSuccessful"] is False
    assert run["invocations"][0]["toolExecutionNotifications"][0]["message"]["text"] == "cannot parse: line 1"


def test_sarif_schema_rejects_broken_logs(validator):
    """The validation above is real: the vendored schema catches a malformed log."""
    log = json.loads(render(report(ITEM), "sarif"))
    bad = copy.deepcopy(log)
    bad["runs"][0]["results"][0]["level"] = "fatal"
    assert not validator.is_valid(bad)
    bad = copy.deepcopy(log)
    bad["runs"][0]["results"][0]["locations"][0]["physicalLocation"]["region"]["startLine"] = 0
    assert not validator.is_valid(bad)


def test_sarif_clean_run_and_uris(validator, tmp_path):
    clean = json.loads(render(report(), "sarif"))
    validator.validate(clean)
    assert clean["runs"][0]["results"] == [] and clean["runs"][0]["tool"]["driver"]["rules"] == []
    assert clean["runs"][0]["invocations"][0]["executionSuccessful"] is True

    inside = ITEM.with_(path=os.path.join(os.getcwd(), "pkg", "my file.py"))
    outside = ITEM.with_(path=str(Path(os.sep, "elsewhere", "x.py")))
    log = json.loads(render(report(inside, outside), "sarif"))
    validator.validate(log)
    uris = [r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] for r in log["runs"][0]["results"]]
    assert uris[0] == "pkg/my%20file.py"
    assert uris[1].startswith("file:///") and uris[1].endswith("/elsewhere/x.py")


# --- github --------------------------------------------------------------------------------------


def test_github_lines():
    out = render(report(ITEM, SHAPE), "github")
    assert out.splitlines() == [
        "::error title=compilelint (CL992),file=pkg/m.py,line=3,col=9,endLine=3,endColumn=17::"
        "CL992 `.item()` breaks the graph — Grüße",
        "::warning title=compilelint (CL993),file=pkg/m.py,line=4,col=8,endLine=6,endColumn=2::"
        "CL993 branching on a shape recompiles",
    ]


def test_github_escaping():
    odd = ITEM.with_(path="C:/a,b/m.py", message="100% sure\r\nsecond: line, here")
    line = render(report(odd), "github").rstrip("\n")
    assert "\n" not in line and "\r" not in line
    assert ",file=C%3A/a%2Cb/m.py," in line
    assert line.endswith("::CL992 100%25 sure%0D%0Asecond: line, here")


# --- junit ---------------------------------------------------------------------------------------


def test_junit_parses_and_counts():
    odd = MISSED.with_(message="a < b && c > d \x00 \"quoted\"")
    rep = report(ITEM, SHAPE, odd, errors=[FileError("bad.py", "not UTF-8")])
    root = ET.fromstring(render(rep, "junit").encode("utf-8"))
    assert root.tag == "testsuites"
    assert (root.get("tests"), root.get("failures"), root.get("errors")) == ("4", "3", "1")
    suites = {s.get("name"): s for s in root.findall("testsuite")}
    assert suites["pkg/m.py"].get("failures") == "2"
    cases = suites["pkg/m.py"].findall("testcase")
    assert [c.get("name") for c in cases] == ["compilelint.CL992", "compilelint.CL993"]
    assert cases[0].get("line") == "3" and cases[0].get("column") == "9"
    assert cases[0].find("failure").get("message") == ITEM.message
    failure = suites["b.py"].find("testcase/failure")
    assert failure.get("message") == "a < b && c > d \ufffd \"quoted\""  # escaped; NUL replaced
    errored = [s for s in root.findall("testsuite") if s.get("errors") == "1"]
    assert errored[0].find("testcase/error").get("message") == "not UTF-8"


def test_junit_clean_run_is_one_passing_suite():
    root = ET.fromstring(render(report(), "junit").encode("utf-8"))
    assert root.get("failures") == "0" and root.get("tests") == "1"
    (suite,) = root.findall("testsuite")
    (case,) = suite.findall("testcase")
    assert list(case) == []  # no failure, no error: it passed
