"""The pygls wiring: document events in, diagnostics out; code actions and hover read what the
last analysis left.

Every handler runs on pygls' thread pool and takes one lock, so the project state is touched by one
thread at a time while the event loop keeps reading messages. A change whose document has already
moved on to a newer version is skipped: the newer change's own handler analyses the latest text,
so a burst of keystrokes costs one analysis per handler that is still current, not one per key.
"""
from __future__ import annotations

import gc
import multiprocessing
import os
import threading
import time
from typing import Dict, Iterable, List, Optional, Set

from lsprotocol import types as lsp
from pygls.lsp.server import LanguageServer
from pygls.uris import from_fs_path, to_fs_path

from compilelint import __version__
from compilelint.config import ConfigError
from compilelint.finding import Finding
from compilelint.hidden import fold_hidden
from compilelint.rule import registry, rule_page
from compilelint.server import convert, fix_all
from compilelint.server.contexts import Contexts
from compilelint.server.project import ProjectContext, split_root


class CompilelintServer(LanguageServer):
    def __init__(self):
        super().__init__("compilelint", __version__)
        self.contexts = Contexts()
        self.lock = threading.Lock()
        self.config_errors: Dict[str, str] = {}  # path → why its configuration cannot be used

    # ----- analysis ---------------------------------------------------------------------------
    def analyse(self, uri: str, version: Optional[int] = None) -> None:
        with self.lock:
            document = self.workspace.get_text_document(uri)
            if version is not None and document.version is not None and document.version != version:
                return  # a newer edit is queued behind this one; it analyses the latest text
            path = _path(uri)
            if not _is_python(path, document.language_id):
                return
            context = self._context(path)
            if context is None:
                self._publish_config_error(uri, path)
                return
            changed = context.update(path, document.source)
            self._publish(context, changed | {path})

    def closed(self, uri: str) -> None:
        """The buffer is gone: the file counts as it is on disk again, and its diagnostics clear."""
        with self.lock:
            path = _path(uri)
            self.text_document_publish_diagnostics(lsp.PublishDiagnosticsParams(uri=uri, diagnostics=[]))
            context = self.contexts.for_known(path)
            if context is not None:
                self._publish(context, context.reload(path))

    def files_changed(self, paths: Iterable[str]) -> None:
        """Files changed outside the editor (a checkout, a formatter); a configuration change
        reloads every project."""
        with self.lock:
            paths = [os.path.normpath(p) for p in paths]
            open_paths = {_path(uri) for uri in self.workspace.text_documents}
            if any(os.path.basename(p) == "pyproject.toml" for p in paths):
                self.contexts.forget()
                self.config_errors.clear()
                for uri, document in list(self.workspace.text_documents.items()):
                    context = self._context(_path(uri))
                    if context is None:
                        self._publish_config_error(uri, _path(uri))
                        continue
                    self._publish(context, context.update(_path(uri), document.source) | {_path(uri)})
                return
            for path in paths:
                context = self.contexts.for_known(path)
                if context is not None and path not in open_paths:
                    self._publish(context, context.reload(path))

    def _context(self, path: str) -> Optional[ProjectContext]:
        folders = [to_fs_path(f.uri) for f in self.workspace.folders.values()]
        if self.workspace.root_path:
            folders.append(self.workspace.root_path)
        self.contexts.set_folders([f for f in folders if f])
        try:
            started = time.perf_counter()
            known = self.contexts.for_known(path)
            context = known or self.contexts.for_path(path)
            if known is None:
                # What the project holds lives as long as the server: kept out of the cyclic
                # collector's full passes, which would otherwise walk it all again after some edits.
                gc.freeze()
                self.window_log_message(lsp.LogMessageParams(
                    type=lsp.MessageType.Info,
                    message=f"compilelint: project {context.root}: {len(context.summaries)} files ready in "
                            f"{time.perf_counter() - started:.1f}s"))
            self.config_errors.pop(path, None)
            return context
        except ConfigError as e:
            self.config_errors[path] = str(e)
            return None

    # ----- publishing -------------------------------------------------------------------------
    def _publish(self, context: ProjectContext, paths: Set[str]) -> None:
        for uri, document in list(self.workspace.text_documents.items()):
            path = _path(uri)
            if path in paths and self.contexts.for_known(path) is context:
                diagnostics = self.diagnostics(context, path, document)
                self.text_document_publish_diagnostics(lsp.PublishDiagnosticsParams(
                    uri=uri, diagnostics=diagnostics, version=document.version))

    def diagnostics(self, context: ProjectContext, path: str, document) -> List[lsp.Diagnostic]:
        if path in context.errors:
            return [convert.error_diagnostic(context.errors[path])]
        lines = convert.Lines(document.source, document.position_codec)
        return [convert.diagnostic(f, lines, self._root_location(context, f), document.uri)
                for f in fold_hidden(context.findings.get(path, []))]

    def _root_location(self, context: ProjectContext, finding: Finding) -> Optional[lsp.Location]:
        if finding.region is None:
            return None
        path, qualname = split_root(finding.region.root)
        row = context.function_row(path, qualname) or 1
        start = lsp.Position(line=row - 1, character=0)
        return lsp.Location(uri=from_fs_path(path), range=lsp.Range(start=start, end=start))

    def _publish_config_error(self, uri: str, path: str) -> None:
        message = f"compilelint: {self.config_errors[path]}"
        self.window_show_message(lsp.ShowMessageParams(type=lsp.MessageType.Error, message=message))
        self.text_document_publish_diagnostics(lsp.PublishDiagnosticsParams(uri=uri, diagnostics=[
            convert.error_diagnostic(message)]))

    # ----- requests ---------------------------------------------------------------------------
    def findings_at(self, uri: str):
        """(its findings as last analysed, its lines, its project), or None for a document that has
        not been analysed or does not parse now."""
        path = _path(uri)
        context = self.contexts.for_known(path)
        if context is None or path in context.errors:
            return None
        document = self.workspace.get_text_document(uri)
        return context.findings.get(path, []), convert.Lines(document.source, document.position_codec), context

    def code_actions(self, params: lsp.CodeActionParams) -> List[lsp.CodeAction]:
        """Quick fixes at the range; "fix all" when the client asks for source actions (it re-analyses
        the file in rounds, too slow for every cursor move)."""
        only = params.context.only
        actions = self.quick_fixes(params) if _wanted(lsp.CodeActionKind.QuickFix.value, only) else []
        if only and _wanted(fix_all.KIND, only):
            actions += self.fix_all(params.text_document.uri)
        return actions

    def fix_all(self, uri: str) -> List[lsp.CodeAction]:
        with self.lock:
            found = self.findings_at(uri)
            if found is None:
                return []
            _, lines, context = found
            document = self.workspace.get_text_document(uri)
            fixed = fix_all.fixed_text(context, _path(uri), document.source)
            if fixed == document.source:
                return []
            edits = fix_all.text_edits(document.source, fixed, lines)
            return [lsp.CodeAction(title=fix_all.TITLE, kind=fix_all.KIND, edit=lsp.WorkspaceEdit(changes={uri: edits}))]

    def quick_fixes(self, params: lsp.CodeActionParams) -> List[lsp.CodeAction]:
        with self.lock:
            found = self.findings_at(params.text_document.uri)
            if found is None:
                return []
            _, lines, context = found
            document = self.workspace.get_text_document(params.text_document.uri)
            # Published findings carry no fixes (they are re-analysed function by function): the
            # file's own full analysis has them.
            findings = context.findings_with_fixes(_path(params.text_document.uri), document.source)
            selected = document.range_from_client_units(params.range)
            start = (selected.start.line + 1, selected.start.character + 1)
            end = (selected.end.line + 1, selected.end.character + 1)
            actions = []
            for f in findings:
                if f.fix is not None and convert.overlaps(f.span, start, end):
                    d = convert.diagnostic(f, lines, self._root_location(context, f))
                    actions.append(convert.code_action(f, f.fix, params.text_document.uri, lines, d))
            actions.sort(key=lambda a: not a.is_preferred)  # safe fixes first
            return actions

    def hover(self, params: lsp.HoverParams) -> Optional[lsp.Hover]:
        """The rule's page of each finding under the cursor, after what its fix does in full when
        that says more than the quick fix's short title."""
        with self.lock:
            found = self.findings_at(params.text_document.uri)
            if found is None:
                return None
            findings, _, context = found
            document = self.workspace.get_text_document(params.text_document.uri)
            at = document.position_from_client_units(params.position)
            here = [f for f in findings if convert.contains(f.span, at.line + 1, at.character + 1)]
            if not here:
                return None
            spans = {(f.code, f.span) for f in here}
            fixes = [f for f in context.findings_with_fixes(_path(params.text_document.uri), document.source)
                     if f.fix is not None and f.fix.message != f.fix.title and (f.code, f.span) in spans]
            rules = registry()
            codes = list(dict.fromkeys(f.code for f in here))
            pages = [convert.fix_note(f) for f in fixes] + [rule_page(rules[c], examples=False) for c in codes if c in rules]
            return convert.hover(pages) if pages else None


def _wanted(kind: str, only: Optional[List[str]]) -> bool:
    """Whether a client's `only` filter admits `kind` ("source" admits "source.fixAll.compilelint")."""
    kinds = [getattr(k, "value", k) for k in only or ()]  # CodeActionKind members or plain strings
    return not kinds or any(kind == k or kind.startswith(f"{k}.") for k in kinds)


def _is_python(path: str, language_id: Optional[str]) -> bool:
    """Clients may send every open document; only Python source is ours."""
    return path.endswith((".py", ".pyi")) or language_id == "python"


def _path(uri: str) -> str:
    return os.path.normpath(to_fs_path(uri) or uri)


server = CompilelintServer()


@server.feature(lsp.TEXT_DOCUMENT_DID_OPEN)
@server.thread()
def did_open(ls: CompilelintServer, params: lsp.DidOpenTextDocumentParams):
    ls.analyse(params.text_document.uri)


@server.feature(lsp.TEXT_DOCUMENT_DID_CHANGE)
@server.thread()
def did_change(ls: CompilelintServer, params: lsp.DidChangeTextDocumentParams):
    ls.analyse(params.text_document.uri, params.text_document.version)


@server.feature(lsp.TEXT_DOCUMENT_DID_SAVE)
@server.thread()
def did_save(ls: CompilelintServer, params: lsp.DidSaveTextDocumentParams):
    if os.path.basename(_path(params.text_document.uri)) == "pyproject.toml":
        ls.files_changed([_path(params.text_document.uri)])
    else:
        ls.analyse(params.text_document.uri)


@server.feature(lsp.TEXT_DOCUMENT_DID_CLOSE)
@server.thread()
def did_close(ls: CompilelintServer, params: lsp.DidCloseTextDocumentParams):
    ls.closed(params.text_document.uri)


@server.feature(lsp.WORKSPACE_DID_CHANGE_WATCHED_FILES)
@server.thread()
def did_change_watched_files(ls: CompilelintServer, params: lsp.DidChangeWatchedFilesParams):
    ls.files_changed(_path(change.uri) for change in params.changes)


@server.feature(lsp.TEXT_DOCUMENT_CODE_ACTION,
                lsp.CodeActionOptions(code_action_kinds=[lsp.CodeActionKind.QuickFix, fix_all.KIND]))
@server.thread()
def code_action(ls: CompilelintServer, params: lsp.CodeActionParams):
    return ls.code_actions(params)


@server.feature(lsp.TEXT_DOCUMENT_HOVER)
@server.thread()
def hover(ls: CompilelintServer, params: lsp.HoverParams):
    return ls.hover(params)


def serve() -> None:
    # Loading a project analyses its files in a process pool, from one of pygls' threads: a forked
    # child of a threaded process can inherit a lock some other thread held and hang for ever.
    # A fork server forks from a clean single-threaded process instead.
    multiprocessing.set_start_method("forkserver", force=True)
    server.start_io()
