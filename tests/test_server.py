"""`compilelint server` end to end: a real LSP client (pytest-lsp) talks to the server process over
stdio, in a temporary workspace of two files: `model.py` compiles `Router.forward`, which calls
`route()` in `helpers.py`."""
import asyncio
import subprocess
import sys
import textwrap

import pytest
import pytest_lsp
from lsprotocol import types as lsp
from pytest_lsp import ClientServerConfig, LanguageClient, client_capabilities

from compilelint.config import Settings
from compilelint.engine import check_paths
from compilelint.rule import registry
from compilelint.server.convert import action_title
from conftest import FIXTURES
from helpers import check_source

SERVER = [sys.executable, "-m", "compilelint", "server"]

MODEL = """\
import torch
from torch import nn

from helpers import route


class Router(nn.Module):
    def forward(self, x):
        return route(x)
"""

HELPERS = """\
import torch
import torch.nn.functional as F


def route(x):
    ids = torch.arange(8)
    return F.one_hot(ids) + x
"""


def _write(root, files):
    for name, text in files.items():
        (root / name).write_text(textwrap.dedent(text))


async def _initialize(client: LanguageClient, root):
    await client.initialize_session(lsp.InitializeParams(
        capabilities=client_capabilities("visual-studio-code"),
        root_uri=root.as_uri(),
        workspace_folders=[lsp.WorkspaceFolder(uri=root.as_uri(), name="workspace")],
    ))


@pytest_lsp.fixture(config=ClientServerConfig(server_command=SERVER))
async def client(lsp_client: LanguageClient, tmp_path):
    _write(tmp_path, {"model.py": MODEL, "helpers.py": HELPERS})
    await _initialize(lsp_client, tmp_path)
    yield
    await lsp_client.shutdown_session()


async def diagnostics(client: LanguageClient, uri: str, until=lambda ds: True, timeout: float = 30.0):
    """The diagnostics last published for `uri`, once they satisfy `until`."""
    async def wait():
        while uri not in client.diagnostics or not until(client.diagnostics[uri]):
            await client.wait_for_notification(lsp.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS)
        return client.diagnostics[uri]

    return await asyncio.wait_for(wait(), timeout)


def _open(client: LanguageClient, path, version: int = 1):
    uri = path.as_uri()
    client.text_document_did_open(lsp.DidOpenTextDocumentParams(text_document=lsp.TextDocumentItem(
        uri=uri, language_id="python", version=version, text=path.read_text())))
    return uri


def _replace_all(client: LanguageClient, uri: str, text: str, version: int):
    client.text_document_did_change(lsp.DidChangeTextDocumentParams(
        text_document=lsp.VersionedTextDocumentIdentifier(uri=uri, version=version),
        content_changes=[lsp.TextDocumentContentChangeWholeDocument(text=text)]))


def _codes(ds):
    return sorted(str(d.code) for d in ds)


@pytest.mark.asyncio
async def test_open_publishes_the_finding_with_its_reach_path(client: LanguageClient, tmp_path):
    uri = _open(client, tmp_path / "helpers.py")
    ds = await diagnostics(client, uri, lambda ds: ds)
    assert _codes(ds) == ["CL303"]
    d = ds[0]
    assert "\n" not in d.message  # no path condition here
    assert d.range.start == lsp.Position(line=6, character=11)
    assert d.severity == lsp.DiagnosticSeverity.Error
    assert d.source == "compilelint"
    assert d.code_description.href.endswith("/gb0246.html")
    [note] = d.related_information
    assert note.message == "reached via Router.forward → route"
    assert note.location.uri == (tmp_path / "model.py").as_uri()
    assert note.location.range.start.line == 7  # `def forward` in model.py


@pytest.mark.asyncio
async def test_the_path_condition_is_the_messages_second_line(client: LanguageClient, tmp_path):
    (tmp_path / "helpers.py").write_text(HELPERS.replace(
        "    return F.one_hot(ids) + x\n", "    if x.ndim == 3:\n        return F.one_hot(ids) + x\n    return x\n"))
    uri = _open(client, tmp_path / "helpers.py")
    [d] = await diagnostics(client, uri, lambda ds: ds)
    first, second = d.message.split("\n")
    assert first.startswith("`F.one_hot()` without num_classes") and second == "only when x.ndim == 3"


@pytest.mark.asyncio
async def test_a_hidden_break_is_related_information_of_the_one_that_hides_it(client: LanguageClient, tmp_path):
    """A break in a loop makes Dynamo run the rest of the frame eager: the later break is shown on
    the first one's diagnostic (compilelint.hidden), not as a diagnostic of its own."""
    (tmp_path / "helpers.py").write_text(HELPERS.replace(
        "    return F.one_hot(ids) + x\n",
        "    for i in range(2):\n        x = x + x.sum().item()\n    print(x.tolist())\n    return x\n"))
    uri = _open(client, tmp_path / "helpers.py")
    [d] = await diagnostics(client, uri, lambda ds: ds)
    assert d.code == "CL101" and d.range.start.line == 7
    hidden = [r for r in d.related_information if r.location.uri == uri]
    assert [r.location.range.start.line for r in hidden] == [8]
    assert "1 more break in it follows once this is fixed: line 9 (CL201)" in d.message


@pytest.mark.asyncio
async def test_a_safe_fix_is_a_preferred_code_action_and_applying_it_clears_the_diagnostic(
        client: LanguageClient, tmp_path):
    uri = _open(client, tmp_path / "helpers.py")
    [d] = await diagnostics(client, uri, lambda ds: ds)
    actions = await client.text_document_code_action_async(lsp.CodeActionParams(
        text_document=lsp.TextDocumentIdentifier(uri=uri), range=d.range,
        context=lsp.CodeActionContext(diagnostics=[d])))
    [action] = actions
    assert action.is_preferred and action.kind == lsp.CodeActionKind.QuickFix
    assert action.title == "Pass `num_classes=8` (CL303)"
    [edit] = action.edit.changes[uri]
    assert edit.new_text == ", num_classes=8"
    client.text_document_did_change(lsp.DidChangeTextDocumentParams(
        text_document=lsp.VersionedTextDocumentIdentifier(uri=uri, version=2),
        content_changes=[lsp.TextDocumentContentChangePartial(range=edit.range, text=edit.new_text)]))
    assert _codes(await diagnostics(client, uri, lambda ds: not ds)) == []


@pytest.mark.asyncio
async def test_an_unsafe_fix_is_labelled_and_not_preferred(client: LanguageClient, tmp_path):
    (tmp_path / "helpers.py").write_text(HELPERS.replace("torch.arange(8)", "torch.randint(8, (4,))"))
    uri = _open(client, tmp_path / "helpers.py")
    [d] = await diagnostics(client, uri, lambda ds: ds)
    [action] = await client.text_document_code_action_async(lsp.CodeActionParams(
        text_document=lsp.TextDocumentIdentifier(uri=uri), range=d.range,
        context=lsp.CodeActionContext(diagnostics=[d])))
    assert not action.is_preferred and action.title == "Pass `num_classes=8` (CL303, unsafe)"
    # the detail the short title leaves out is on the hover, above the rule's page
    hover = await client.text_document_hover_async(lsp.HoverParams(
        text_document=lsp.TextDocumentIdentifier(uri=uri), position=d.range.start))
    first, rest = hover.contents.value.split("\n\n---\n\n", 1)
    assert first == ("**Fix** (CL303, unsafe): Pass `num_classes=8`. Eager change: the one-hot width is always K, "
                     "also when the largest index is smaller")
    assert rest.startswith("# one-hot-dynamic (CL303)")


@pytest.mark.slow
def test_every_fix_has_a_quick_fix_title_of_at_most_60_characters():
    """Editors cut long titles: each fix has a short one (the edit and the hover show the rest).
    The fixes: every one `check` makes on fixtures/ and on the rules' own flagged examples."""
    findings = list(check_paths([FIXTURES], Settings(cache=False)).findings)
    for rule in registry().values():
        for source in rule.INVALID:
            findings += check_source(source).findings
    fixes = [(f, f.fix) for f in findings if f.fix is not None]
    fixable = {code for code, rule in registry().items() if rule.fix != "none"}
    assert {f.code for f, _ in fixes} == fixable  # every rule's fixes are among them
    long = sorted({action_title(f, fix) for f, fix in fixes if len(action_title(f, fix)) > 60})
    assert not long, long


TWO_SAFE_ONE_UNSAFE = """\
import torch
import torch.nn.functional as F


def route(x):
    a = F.one_hot(torch.arange(8)) + x
    b = F.one_hot(torch.arange(4)) + x
    c = F.one_hot(torch.randint(8, (4,))) + x
    return a, b, c
"""


def _apply(text: str, edits) -> str:
    """LSP text edits on an ASCII text (characters are UTF-16 units there)."""
    lines = text.splitlines(keepends=True)

    def offset(p):
        return sum(len(line) for line in lines[:p.line]) + p.character

    for e in sorted(edits, key=lambda e: (e.range.start.line, e.range.start.character), reverse=True):
        text = text[:offset(e.range.start)] + e.new_text + text[offset(e.range.end):]
    return text


@pytest.mark.asyncio
async def test_fix_all_applies_the_safe_fixes_as_check_fix_does(client: LanguageClient, tmp_path):
    (tmp_path / "helpers.py").write_text(TWO_SAFE_ONE_UNSAFE)
    uri = _open(client, tmp_path / "helpers.py")
    ds = await diagnostics(client, uri, lambda ds: len(ds) == 3)
    whole = lsp.Range(start=lsp.Position(line=0, character=0), end=lsp.Position(line=0, character=0))

    async def actions(only):
        return await client.text_document_code_action_async(lsp.CodeActionParams(
            text_document=lsp.TextDocumentIdentifier(uri=uri), range=whole,
            context=lsp.CodeActionContext(diagnostics=ds, only=only)))

    assert not await actions(None)  # no quick fix at line 1, and "fix all" only on request
    assert not await actions([lsp.CodeActionKind.QuickFix])
    for only in ([lsp.CodeActionKind.SourceFixAll], [lsp.CodeActionKind.Source], ["source.fixAll.compilelint"]):
        [action] = await actions(only)
        assert action.kind == "source.fixAll.compilelint" and action.title == "compilelint: apply all safe fixes"
    fixed = _apply(TWO_SAFE_ONE_UNSAFE, action.edit.changes[uri])
    # what `check --fix` writes in a copy of the workspace
    copy = tmp_path / "copy"
    copy.mkdir()
    (copy / "model.py").write_text(MODEL)
    (copy / "helpers.py").write_text(TWO_SAFE_ONE_UNSAFE)
    subprocess.run([sys.executable, "-m", "compilelint", "check", "--fix", "--no-cache", "helpers.py", "model.py"],
                   cwd=str(copy), capture_output=True, timeout=120)
    assert fixed == (copy / "helpers.py").read_text()
    assert fixed.count("num_classes=") == 2 and "torch.randint(8, (4,)))" in fixed  # the unsafe one is left
    _replace_all(client, uri, fixed, 2)
    assert _codes(await diagnostics(client, uri, lambda ds: len(ds) == 1)) == ["CL303"]
    assert not await actions([lsp.CodeActionKind.SourceFixAll])  # nothing safe left to fix


@pytest.mark.asyncio
async def test_hover_shows_the_rule_doc(client: LanguageClient, tmp_path):
    uri = _open(client, tmp_path / "helpers.py")
    [d] = await diagnostics(client, uri, lambda ds: ds)
    result = await client.text_document_hover_async(lsp.HoverParams(
        text_document=lsp.TextDocumentIdentifier(uri=uri), position=d.range.start))
    assert result.contents.kind == lsp.MarkupKind.Markdown
    assert result.contents.value.startswith("# one-hot-dynamic (CL303)")
    assert "## Why is this bad?" in result.contents.value
    nothing = await client.text_document_hover_async(lsp.HoverParams(
        text_document=lsp.TextDocumentIdentifier(uri=uri), position=lsp.Position(line=0, character=0)))
    assert nothing is None


@pytest.mark.asyncio
async def test_an_edit_in_the_callee_file_updates_the_caller_file(client: LanguageClient, tmp_path):
    model = _open(client, tmp_path / "model.py")
    helpers = _open(client, tmp_path / "helpers.py")
    assert _codes(await diagnostics(client, model)) == []
    await diagnostics(client, helpers, lambda ds: _codes(ds) == ["CL303"])
    # route() stops being traced: calling it from the compiled forward now always graph-breaks.
    _replace_all(client, helpers, HELPERS.replace("def route", "@torch.compiler.disable\ndef route"), 2)
    ds = await diagnostics(client, model, lambda ds: ds)
    assert _codes(ds) == ["CL210"]
    assert ds[0].range.start.line == 8
    assert _codes(await diagnostics(client, helpers, lambda ds: not ds)) == []
    _replace_all(client, helpers, HELPERS, 3)  # and back
    assert _codes(await diagnostics(client, model, lambda ds: not ds)) == []
    assert _codes(await diagnostics(client, helpers, lambda ds: ds)) == ["CL303"]


@pytest.mark.asyncio
async def test_a_syntax_error_mid_edit_is_one_diagnostic_and_the_next_edit_recovers(
        client: LanguageClient, tmp_path):
    uri = _open(client, tmp_path / "helpers.py")
    await diagnostics(client, uri, lambda ds: _codes(ds) == ["CL303"])
    _replace_all(client, uri, HELPERS.replace("ids = torch.arange(8)", "ids = torch.arange(8"), 2)
    [d] = await diagnostics(client, uri, lambda ds: _codes(ds) != ["CL303"])
    assert d.message.startswith("syntax error") and d.severity == lsp.DiagnosticSeverity.Error
    assert d.range.start.line in (5, 6)
    _replace_all(client, uri, HELPERS, 3)
    assert _codes(await diagnostics(client, uri, lambda ds: _codes(ds) == ["CL303"])) == ["CL303"]


# The server run by a wrapper that, as the process exits, writes down whether torch was imported.
RECORD_MODULES_AT_EXIT = """\
import atexit, sys
record = sys.argv.pop(1)
atexit.register(lambda: open(record, "w").write(str(sorted(m for m in sys.modules if m.split(".")[0] == "torch"))))
from compilelint.cli import main
sys.argv = ["compilelint", "server"]
main()
"""


@pytest.mark.asyncio
async def test_the_server_never_imports_torch(tmp_path):
    _write(tmp_path, {"model.py": MODEL, "helpers.py": HELPERS})
    record = tmp_path / "torch-modules.txt"
    client = pytest_lsp.make_test_lsp_client()
    await client.start_io(sys.executable, "-c", RECORD_MODULES_AT_EXIT, str(record))
    try:
        await _initialize(client, tmp_path)
        uri = _open(client, tmp_path / "helpers.py")
        [d] = await diagnostics(client, uri, lambda ds: ds)
        position = lsp.TextDocumentIdentifier(uri=uri)
        assert await client.text_document_hover_async(lsp.HoverParams(text_document=position, position=d.range.start))
        assert await client.text_document_code_action_async(lsp.CodeActionParams(
            text_document=position, range=d.range, context=lsp.CodeActionContext(diagnostics=[d])))
        await client.shutdown_session()  # waits for the process to exit
    finally:
        await client.stop()
    assert record.read_text() == "[]"


@pytest.mark.asyncio
async def test_settings_come_from_the_projects_pyproject(client: LanguageClient, tmp_path):
    (tmp_path / "pyproject.toml").write_text('[tool.compilelint]\nper-file-ignores = { "helpers.py" = ["CL303"] }\n')
    (tmp_path / "other.py").write_text(textwrap.dedent("""\
        import torch
        import torch.nn.functional as F
        from torch import nn


        class Other(nn.Module):
            def forward(self, x):
                return F.one_hot(torch.arange(8)) + x
        """))
    helpers = _open(client, tmp_path / "helpers.py")
    other = _open(client, tmp_path / "other.py")
    assert _codes(await diagnostics(client, other, lambda ds: ds)) == ["CL303"]
    assert _codes(await diagnostics(client, helpers)) == []


@pytest.mark.asyncio
async def test_a_configuration_error_is_one_diagnostic_not_a_crash(client: LanguageClient, tmp_path):
    (tmp_path / "pyproject.toml").write_text('[tool.compilelint]\nselect = ["CL999"]\n')
    uri = _open(client, tmp_path / "helpers.py")
    [d] = await diagnostics(client, uri, lambda ds: ds)
    assert d.message.startswith("compilelint: unknown rule selector 'CL999'")
    (tmp_path / "pyproject.toml").write_text('[tool.compilelint]\nselect = ["CL3"]\n')
    client.workspace_did_change_watched_files(lsp.DidChangeWatchedFilesParams(changes=[lsp.FileEvent(
        uri=(tmp_path / "pyproject.toml").as_uri(), type=lsp.FileChangeType.Changed)]))
    assert _codes(await diagnostics(client, uri, lambda ds: _codes(ds) == ["CL303"])) == ["CL303"]
