"""The human formats: concise, full, the summary and `--statistics`."""
import re

import pytest

from compilelint.finding import Edit, FileError, Finding, Fix, Region, Report, Span
from compilelint.report import FORMATS, render, render_statistics


pytestmark = pytest.mark.usefixtures("throwaway_rules")
THROWAWAY_RULES = [
    dict(code="CL990", name="throwaway-item", message="`.item()` breaks the graph", __doc__="""
        ## What it does
        Flags `.item()` on a tensor.

        ## Why is this bad?
        Dynamo breaks the graph.

        ## Example
        ```python
        y = x.item()
        ```

        ## Use instead
        Keep the value as a tensor, e.g. pass `x` on. Or use a scalar output.
        ```python
        y = x
        ```
        """),
    dict(code="CL991", name="throwaway-if", message="tensor-valued `if`"),
]


SRC = (
    "import torch\n"
    "def f(x):\n"
    "    y = x.item()  # é\n"
    "    if x.any():\n"
    "        return 1\n"
    "    return y\n"
)

SAFE = Fix("safe", "Drop `.item()`", (Edit("", Span(3, 10, 3, 17)),))
UNSAFE = Fix("unsafe", "Rewrite with `torch.where`", (Edit("return torch.where(x.any(), 1, y)", Span(4, 5, 6, 13)),))


def item(**kw):
    base = dict(code="CL990", name="throwaway-item", message="`.item()` breaks the graph", path="m.py",
                span=Span(3, 9, 3, 17), function="f", fix=SAFE)
    return Finding(**{**base, **kw})


def tensor_if(**kw):
    base = dict(code="CL991", name="throwaway-if", message="tensor-valued `if` — Grüße 張", path="m.py",
                span=Span(4, 8, 5, 17), function="f", fix=UNSAFE, severity="warning")
    return Finding(**{**base, **kw})


def report(*findings, **kw):
    return Report(findings=list(findings), files_checked=1, **kw)


# --- concise -------------------------------------------------------------------------------------


def test_concise_lines_and_summary_with_hidden_unsafe_fix():
    out = render(report(item(), tensor_if()), "concise")
    assert out == (
        "m.py:3:9: CL990 [*] `.item()` breaks the graph\n"
        "m.py:4:8: CL991 tensor-valued `if` — Grüße 張\n"
        "\n"
        "Found 2 errors.\n"
        "[*] 1 fixable with the `--fix` option "
        "(1 hidden fix can be enabled with the `--unsafe-fixes` option).\n"
    )


def test_concise_with_unsafe_fixes_marks_both():
    out = render(report(item(), tensor_if()), "concise", unsafe_fixes=True)
    assert out.splitlines()[1] == "m.py:4:8: CL991 [*] tensor-valued `if` — Grüße 張"
    assert out.endswith("Found 2 errors.\n[*] 2 fixable with the `--fix` option.\n")


def test_summary_only_hidden_fixes_plural():
    out = render(report(tensor_if(), tensor_if(span=Span(5, 1, 5, 2))), "concise")
    assert out.splitlines()[-1] == (
        "No fixes available (2 hidden fixes can be enabled with the `--unsafe-fixes` option)."
    )


def test_summary_single_error_without_fix_and_clean_run():
    out = render(report(item(fix=None)), "concise")
    assert out == "m.py:3:9: CL990 `.item()` breaks the graph\n\nFound 1 error.\n"
    assert render(report(), "concise") == "All checks passed!\n"


def test_summary_counts_fixed():
    out = render(report(item(fix=None), fixed=2), "concise")
    assert out.splitlines()[-1] == "Found 3 errors (2 fixed, 1 remaining)."
    assert render(report(fixed=1), "concise") == "Found 1 error (1 fixed, 0 remaining).\n"


def test_concise_verification_status():
    out = render(report(item(verification={"status": "confirmed", "gb_id": "GB0124"})), "concise")
    assert out.splitlines()[0] == "m.py:3:9: CL990 [*] `.item()` breaks the graph [confirmed]"


def test_color_only_when_asked():
    plain = render(report(item()), "concise")
    colored = render(report(item()), "concise", color=True)
    assert "\x1b[" not in plain
    assert "\x1b[" in colored
    assert re.sub(r"\x1b\[[0-9;]*m", "", colored) == plain


def test_unknown_format_is_a_value_error():
    assert "concise" in FORMATS and "sarif" in FORMATS
    with pytest.raises(ValueError, match="unknown output format"):
        render(report(), "checkstyle")


# --- full ----------------------------------------------------------------------------------------


def _block(out, code):
    """The lines of one finding's block in the full output."""
    lines = out.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith(code))
    end = lines.index("", start)
    return lines[start:end]


def test_full_frame_caret_help_note_and_diff():
    finding = item(region=Region("m.py:Net.forward", "Net.forward → f"))
    out = render(report(finding), "full", sources={"m.py": SRC})
    assert _block(out, "CL990") == [
        "CL990 [*] `.item()` breaks the graph",
        " --> m.py:3:9",
        "  |",
        "2 | def f(x):",
        "3 |     y = x.item()  # é",
        "  |         ^^^^^^^^",
        "4 |     if x.any():",
        "  |",
        "help: Keep the value as a tensor, e.g. pass `x` on.",
        "  = note: reached from m.py:Net.forward via Net.forward → f",
        "fix (safe): Drop `.item()`",
        "  --- m.py",
        "  +++ m.py",
        "  @@ -2,3 +2,3 @@",
        "   def f(x):",
        "  -    y = x.item()  # é",
        "  +    y = x  # é",
        "       if x.any():",
    ]
    assert out.endswith("\nFound 1 error.\n[*] 1 fixable with the `--fix` option.\n")


def test_full_multiline_span_underlines_first_line_to_its_end():
    out = render(report(tensor_if()), "full", sources={"m.py": SRC})
    block = _block(out, "CL991")
    assert block[0] == "CL991 tensor-valued `if` — Grüße 張"
    caret = block.index("4 |     if x.any():") + 1
    assert block[caret] == "  |        ^^^^^^^^"
    assert "5 |         return 1" in block and "6 |     return y" in block  # the span, then context
    # no "Use instead" prose: the fix's title is the help, and is not repeated on the fix line
    assert "help: Rewrite with `torch.where`" in block
    assert "fix (unsafe, enable with `--unsafe-fixes`)" in block
    assert "  -    if x.any():" in block
    assert "  +    return torch.where(x.any(), 1, y)" in block


def test_full_caret_accounts_for_wide_characters_and_tabs():
    src = "a = 1\n\ts = '張三' + x.item()\n"
    finding = item(span=Span(2, 13, 2, 21), fix=None)
    block = _block(render(report(finding), "full", sources={"m.py": src}), "CL990")
    line = block.index("2 | \ts = '張三' + x.item()")
    # the tab is kept; then "s = '" (5), 張三 (2 wide = 4), "' + " (4): 13 columns of padding
    assert block[line + 1] == "  | \t" + " " * 13 + "^" * 8


def test_full_reads_source_from_disk_and_skips_unreadable(tmp_path):
    path = tmp_path / "m.py"
    path.write_text(SRC, encoding="utf-8")
    out = render(report(item(path=str(path))), "full")
    assert "3 |     y = x.item()  # é" in out
    missing = render(report(item(path=str(tmp_path / "gone.py"))), "full")
    block = _block(missing, "CL990")
    assert block[1] == f" --> {tmp_path / 'gone.py'}:3:9"
    assert not any(line.startswith("3 |") for line in block)
    assert "  replace 3:10-3:17 with ''" in block  # the fix still shows, as edits


def test_full_handles_code_missing_from_registry():
    finding = Finding("CL989", "missed-break", "Dynamo broke here: builtin `open`", "m.py", Span(2, 1, 2, 4), "f")
    out = render(report(finding), "full", sources={"m.py": SRC})
    assert _block(out, "CL989")[:2] == ["CL989 Dynamo broke here: builtin `open`", " --> m.py:2:1"]
    assert "  |" + " " + "^^^" in out


def test_full_clean_run():
    assert render(report(), "full") == "All checks passed!\n"


# --- statistics ----------------------------------------------------------------------------------


def test_statistics_counts_sorted_with_fixable_marker():
    findings = [tensor_if(), tensor_if(), item(), tensor_if(fix=None), item(code="CL989", name="missed", fix=None)]
    assert render_statistics(report(*findings)) == (
        "3\tCL991\t[ ] throwaway-if\n"
        "1\tCL989\t[ ] missed\n"
        "1\tCL990\t[*] throwaway-item\n"
    )


def test_statistics_without_fixes_still_has_the_fixable_column_and_empty_when_clean():
    assert render_statistics(report(item(fix=None), item(fix=None))) == "2\tCL990\t[ ] throwaway-item\n"
    assert render_statistics(report()) == ""
    assert "\x1b[" in render_statistics(report(item()), color=True)


def test_file_errors_do_not_break_text_formats():
    rep = report(item(), errors=[FileError("bad.py", "syntax error")])
    assert render(rep, "concise").startswith("m.py:3:9: CL990")


def test_full_shows_only_what_fix_writes():
    """One edit applier: a fix whose edits overlap is one --fix refuses, so `full` previews no change."""
    from compilelint.edits import apply_fixes

    clash = Fix("safe", "Two edits on one span", (Edit("a", Span(3, 9, 3, 17)), Edit("b", Span(3, 10, 3, 12))))
    finding = item(fix=clash)
    text, applied = apply_fixes(SRC, [finding])
    assert applied == [] and text == SRC
    out = render(report(finding), "full", sources={"m.py": SRC})
    assert "fix (safe): Two edits on one span" in out
    assert "+++" not in out and "-    y = x.item()" not in out
    text, applied = apply_fixes(SRC, [item()])
    assert applied and "    y = x  # é" in text.splitlines()
