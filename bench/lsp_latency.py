"""Edit → diagnostics latency of `compilelint server` in a warm, vLLM-sized project.

Copies `vllm/model_executor` (845 files, from `bench/corpus.py`'s cache) to a temporary folder,
starts `compilelint server` over stdio with a real LSP client (pygls), opens a ~3,000-line file,
lets the project warm up, then times each edit from the moment the client sends `didChange` to the
moment it receives `publishDiagnostics` for that version of the document. Two kinds of edit:

  body   a comment typed inside a method
  graph  a new call added to a method, `self._bench_probe_<n>()` (a new name each time): the file's
         call graph changes (its `graph_key`), though not what is reached
  reach  a new call added to a method, to a module-level function of the file: when the method is
         reached, what is reached may change, and reach is recomputed over the project

Each edit is made to the file as opened, so that consecutive versions differ in two places (the
last edit undone, the new one made). The server's CPU time per edit (from /proc, all its threads)
is printed beside the wall time: on a busy machine it says what an idle core would take.

Also times, in-process and in wall and CPU time, the file's analysis alone (`engine.analyze_bytes`)
and a whole `ProjectContext.update` (that analysis plus the project pass, `engine.project_findings`):
on a busy machine the CPU time says what an idle core would take.

    .venv/bin/python bench/lsp_latency.py [--edits 30] [--file models/qwen3_vl.py ...]

Not a test: numbers depend on the machine; record them in bench/README.md.
"""
from __future__ import annotations

import argparse
import asyncio
import os
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

from lsprotocol import types as lsp
from pygls.lsp.client import LanguageClient

CACHE = Path(os.environ.get("COMPILELINT_BENCH_CACHE", Path.home() / ".cache" / "compilelint-bench"))
PROJECT = CACHE / "src" / "vllm-0.33.0" / "vllm" / "model_executor"
FILES = ["models/qwen3_vl.py", "layers/attention/mla_attention.py"]


def _module_functions(text: str):
    import ast

    return [n.name for n in ast.parse(text).body if isinstance(n, ast.FunctionDef)]


def _cpu_seconds(pid: int) -> float:
    """User + system CPU time of process `pid` so far (all its threads)."""
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _method_lines(text: str):
    """(row of a method's first body line, its indentation) for the methods of the file."""
    import ast

    tree = ast.parse(text)
    out = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ClassDef):
            for item in node.body:
                if isinstance(item, ast.FunctionDef) and item.body and not isinstance(item.body[0], ast.Expr):
                    first = item.body[0]
                    out.append((first.lineno, " " * first.col_offset))
    return out


class Session:
    def __init__(self):
        self.client = LanguageClient("compilelint-bench", "1")
        self.waiting = {}  # (uri, version) → future

        @self.client.feature(lsp.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS)
        def published(params: lsp.PublishDiagnosticsParams):
            future = self.waiting.pop((params.uri, params.version), None)
            if future is not None and not future.done():
                future.set_result((time.perf_counter(), len(params.diagnostics)))

        @self.client.feature(lsp.WINDOW_LOG_MESSAGE)
        def logged(params: lsp.LogMessageParams):
            print(f"  server: {params.message}")

    def expect(self, uri: str, version: int):
        future = asyncio.get_running_loop().create_future()
        self.waiting[(uri, version)] = future
        return future


async def measure(root: Path, rel: str, edits: int, log: Path):
    session = Session()
    client = session.client
    # The server's stderr goes to a file: pygls' client pipes it and never reads it.
    await client.start_io("/bin/sh", "-c", 'exec "$0" -m compilelint server 2>"$1"', sys.executable, str(log))
    await client.initialize_async(lsp.InitializeParams(
        capabilities=lsp.ClientCapabilities(), root_uri=root.as_uri(),
        workspace_folders=[lsp.WorkspaceFolder(uri=root.as_uri(), name="model_executor")]))
    client.initialized(lsp.InitializedParams())
    path = root / rel
    uri, text = path.as_uri(), path.read_text()
    started = time.perf_counter()
    done = session.expect(uri, 1)
    client.text_document_did_open(lsp.DidOpenTextDocumentParams(text_document=lsp.TextDocumentItem(
        uri=uri, language_id="python", version=1, text=text)))
    _, count = await asyncio.wait_for(done, 600)
    load = time.perf_counter() - started
    methods = _method_lines(text)
    functions = _module_functions(text) or ["len"]
    lines = text.splitlines(keepends=True)
    kinds = ("body", "graph", "reach")
    times = {kind: [] for kind in kinds}
    cpu = {kind: [] for kind in kinds}
    pid = client._server.pid
    version = 1
    for i in range(len(kinds) * (edits + 2)):  # the first round of each kind warms up; not counted
        kind = kinds[i % len(kinds)]
        row, indent = methods[(i * 7) % len(methods)]
        new = list(lines)
        if kind == "body":
            new[row - 1] = new[row - 1].rstrip("\n") + f"  # typing {i}\n"
        elif kind == "graph":
            new.insert(row - 1, f"{indent}self._bench_probe_{i}()\n")
        else:
            new.insert(row - 1, f"{indent}{functions[i % len(functions)]}()\n")
        version += 1
        done = session.expect(uri, version)
        used = _cpu_seconds(pid)
        sent = time.perf_counter()
        client.text_document_did_change(lsp.DidChangeTextDocumentParams(
            text_document=lsp.VersionedTextDocumentIdentifier(uri=uri, version=version),
            content_changes=[lsp.TextDocumentContentChangeWholeDocument(text="".join(new))]))
        received, _ = await asyncio.wait_for(done, 60)
        if i >= 2 * len(kinds):
            times[kind].append(received - sent)
            cpu[kind].append(_cpu_seconds(pid) - used)
    await client.shutdown_async(None)
    client.exit(None)
    await client.stop()
    return load, count, len(lines), times, cpu


def in_process(root: Path, rel: str, edits: int):
    """The two steps of an edit, timed inside one process (no LSP, no JSON)."""
    from compilelint.config import settings_for
    from compilelint.engine import analyze_bytes
    from compilelint.server.project import ProjectContext

    settings = settings_for([str(root)])
    settings.project_root = str(root)
    context = ProjectContext(str(root), settings)
    context.load()
    path = str(root / rel)
    text = Path(path).read_text()
    times = {"analyze_bytes": ([], []), "ProjectContext.update": ([], [])}  # (wall, CPU)
    for i in range(edits):
        edited = text + f"\n# typing {i}\n"
        for label, step in (("analyze_bytes", lambda: analyze_bytes(path, edited.encode())),
                            ("ProjectContext.update", lambda: context.update(path, edited))):
            wall, cpu = time.perf_counter(), time.process_time()
            step()
            times[label][0].append(time.perf_counter() - wall)
            times[label][1].append(time.process_time() - cpu)
    return times


def ms(values) -> str:
    p90 = sorted(values)[round(0.9 * (len(values) - 1))]
    return f"{statistics.median(values) * 1000:.0f} ms (p90 {p90 * 1000:.0f})"


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--edits", type=int, default=30, help="edits of each kind per file")
    parser.add_argument("--file", action="append", help="file inside the project (repeatable)")
    parser.add_argument("--project", type=Path, default=PROJECT, help="default: vllm/model_executor")
    args = parser.parse_args()
    if not args.project.is_dir():
        sys.exit(f"no corpus at {args.project}: run bench/corpus.py first")
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / args.project.name
        shutil.copytree(args.project, root)
        print(f"project: {args.project} (copied), {sum(1 for _ in root.rglob('*.py'))} files; "
              f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores")
        for rel in args.file or FILES:
            log = Path(os.environ.get("COMPILELINT_BENCH_LOG", Path(tmp) / "server.log"))
            try:
                load, count, nlines, times, cpu = asyncio.run(measure(root, rel, args.edits, log))
            except asyncio.TimeoutError:
                sys.exit(f"no diagnostics in time; the server's stderr:\n{log.read_text()[-3000:]}")
            print(f"\n{rel} ({nlines} lines): open → first diagnostics {load:.1f} s "
                  f"(project load included), {count} diagnostics")
            for kind, values in times.items():
                print(f"  edit → diagnostics, {kind:5s}: median {ms(values)} over {len(values)} edits; "
                      f"server CPU {statistics.mean(cpu[kind]) * 1000:.0f} ms per edit (mean; 10 ms ticks)")
            for label, (wall, cpu) in in_process(root, rel, args.edits).items():
                print(f"  in-process {label}: wall median {ms(wall)}, CPU median {ms(cpu)}")
        print(f"\nload average at the end: {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores")


if __name__ == "__main__":
    main()
