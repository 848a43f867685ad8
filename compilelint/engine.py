"""check, end to end: files → per-file summaries (parallel, cached) → project pass → findings.

Data flows one way: nothing in the per-file stage knows about other files or about settings;
the project pass decides what is compiled; suppressions and selection come last.
"""
from __future__ import annotations

import ast
import gc
import hashlib
import os
import re
import sys
import traceback
import warnings
from contextlib import contextmanager
from dataclasses import replace
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from typing import Dict, List, Optional, Tuple

from compilelint.analysis import analyze, config_flags, passed_args
from compilelint.cache import Cache, default_directory
from compilelint.config import Settings
from compilelint.discover import discover
from compilelint.finding import FileError, Finding, Region, Report
from compilelint.analysis.frames import Frames, FramesMemo, all_frames
from compilelint.analysis.misuse import MISUSE, NOTE as MISUSE_NOTE
from compilelint.analysis.names import module_name_for
from compilelint.analysis.regions import DisabledCall, Project, compile_roots, edge_mode, meet, reach, resolve_entry
from compilelint.analysis.resolved_calls import ResolvedCalls
from compilelint.analysis.trees import ON_DISK, Trees, parse_bytes
from compilelint.notebook import decode_any, locate
from compilelint.project import named_only, with_context
from compilelint.rule import ProjectContext, registry
from compilelint.source import SourceError, read_bytes
from compilelint.summary import Candidate, FileSummary

# Below this many files to parse, a process pool costs more than it saves.
POOL_THRESHOLD = 6


class UsageError(Exception):
    """Bad command-line input (an --entry that names nothing): exit 2 with this one line."""


def analyze_bytes(path: str, data: bytes, debug: bool = False, prefilter: bool = True):
    """('ok', FileSummary) or ('error', one-line message). Never raises."""
    try:
        source = decode_any(path, data)  # a notebook's code cells as one module
        with warnings.catch_warnings():  # `"\d"` warns; under PYTHONWARNINGS=error it would raise
            warnings.simplefilter("ignore")
            tree = ast.parse(source.text, filename=path)
        summary = analyze(path, source, tree, prefilter)
        summary.cells = getattr(source, "cells", ())
        return "ok", summary
    except SourceError as e:
        return "error", str(e)
    except SyntaxError as e:
        where = f" at line {e.lineno}" + (f", column {e.offset}" if e.offset else "") if e.lineno else ""
        return "error", f"syntax error{where}: {e.msg}{_newer_syntax_hint(source.text, e)}"
    except (RecursionError, MemoryError):
        return "error", "too deeply nested to analyze"
    except ValueError as e:
        return "error", f"cannot parse: {e}"
    except Exception as e:  # a bug of ours: report it for this file, keep checking the others
        detail = traceback.format_exc() if debug else ""
        return "error", f"internal error: {type(e).__name__}: {e}" + (f"\n{detail}" if detail else "")


# Syntax of later Pythons than the running one (PEP 695 `type X = ...`, `def f[T]`, `class C[T]`).
_PEP695 = re.compile(r"^\s*(?:type\s+[A-Za-z_]\w*\s*[\[=]|(?:async\s+)?def\s+[A-Za-z_]\w*\s*\[|class\s+[A-Za-z_]\w*\s*\[)")


def _newer_syntax_hint(text: str, e: SyntaxError) -> str:
    if sys.version_info >= (3, 12) or not e.lineno:
        return ""
    lines = text.split("\n")
    line = lines[e.lineno - 1] if 0 < e.lineno <= len(lines) else ""
    if _PEP695.match(line) or ("f-string" in (e.msg or "") and "{" in line):
        return (f" (this looks like Python 3.12+ syntax; compilelint is running on Python "
                f"{sys.version_info.major}.{sys.version_info.minor})")
    return ""


def _worker(args):
    path, data, debug, prefilter = args
    # One young-generation collection per file instead of the automatic ones: a file's analysis
    # allocates a tree and its indexes by the hundred thousand, and every automatic collection
    # it triggers traverses the summaries of the files before it too (a third of the CPU, measured).
    # The cycles left in a file's analysis (recursive closures, mostly) are freed at its end.
    with _no_collection():
        result = analyze_bytes(path, data, debug, prefilter)
        gc.collect(0)  # inside: enabled with garbage pending, Python would collect older generations too
    return result


@contextmanager
def _no_collection():
    """No automatic cycle collection inside (the caller says when to collect)."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


def analyze_files(paths: List[str], settings: Settings, debug: bool = False,
                  stdin: Optional[Tuple[str, bytes]] = None,
                  signatures: Optional[Dict[str, tuple]] = None) -> Tuple[List[FileSummary], List[FileError]]:
    """Every file's summary, from the cache where the file is unchanged. `signatures`: the files'
    `_signature`s where the caller already took them (the run's key did)."""
    cache = None
    if settings.cache:  # stdin's text is cached by its content, never by the file's signature
        cache = Cache(settings.cache_dir or default_directory(settings.project_root))
    summaries: Dict[str, FileSummary] = {}
    errors: List[FileError] = []
    todo = []  # (path, data, key)
    # Last run's {path: ((size, mtime, inode, module), content key)}: an unchanged file is not read.
    manifest_key = "files-" + hashlib.blake2b(repr((paths, settings.prefilter)).encode("utf-8", "surrogateescape"),
                                              digest_size=20).hexdigest()
    manifest = (cache.get(manifest_key) or {}) if cache else {}
    new_manifest = {}
    with _no_collection():  # unpickled summaries make no cycles: collections would only traverse them
        _load_known(paths, cache, manifest, new_manifest, summaries, errors, todo, stdin, settings, signatures or {})
    if cache and new_manifest != manifest:
        cache.put_run(manifest_key, new_manifest)
    jobs = settings.jobs or os.cpu_count() or 1
    work = [(p, d, debug, settings.prefilter) for p, d, _ in todo]
    if jobs > 1 and len(todo) >= POOL_THRESHOLD:
        try:
            with ProcessPoolExecutor(max_workers=min(jobs, len(todo))) as pool, _no_collection():
                # unpickling the summaries makes no cycles: collections there only traverse them
                results = list(pool.map(_worker, work, chunksize=max(1, len(work) // (jobs * 8))))
        except BrokenProcessPool:  # a worker was killed (out of memory, a signal): finish in-process
            results = [_worker(w) for w in work]
    else:
        results = [_worker(w) for w in work]
    for (path, _, key), (status, value) in zip(todo, results):
        if status == "ok":
            summaries[path] = value
            if cache:
                cache.put(key, value)
        else:
            errors.append(FileError(path, value))
    ordered = [summaries[p] for p in paths if p in summaries]
    return ordered, errors


def _load_known(paths, cache, manifest, new_manifest, summaries, errors, todo, stdin, settings, signatures):
    """The cached summary of every unchanged file; the others are read into `todo`."""
    for path in paths:
        signature = None
        if cache and not (stdin is not None and path == stdin[0]):
            signature = signatures[path] if path in signatures else _signature(path)
        known = manifest.get(path)
        if known is not None and signature is not None and known[0] == signature:
            hit = cache.get(known[1])
            if hit is not None:
                hit.path = path
                summaries[path] = hit
                new_manifest[path] = known
                continue
        if stdin is not None and path == stdin[0]:
            data = stdin[1]
        else:
            try:
                data = read_bytes(path)
            except OSError as e:
                errors.append(FileError(path, _os_message(e)))
                continue
        key = Cache.key(data, module_name_for(path), path, settings.prefilter) if cache else None
        if signature is not None:
            new_manifest[path] = (signature, key)
        hit = cache.get(key) if cache else None
        if hit is not None:
            hit.path = path
            summaries[path] = hit
        else:
            todo.append((path, data, key))


def _signature(path: str):
    """What says a file is unchanged without reading it (Ruff trusts the same)."""
    try:
        st = os.stat(path)
    except OSError:
        return None
    return (st.st_size, st.st_mtime_ns, st.st_ino, module_name_for(path))


def _os_message(e: OSError) -> str:
    if isinstance(e, IsADirectoryError):
        return "is a directory"
    if isinstance(e, FileNotFoundError):
        return "no such file (it vanished during the run)"
    if isinstance(e, PermissionError):
        return "permission denied"
    return e.strerror or str(e)


def check_paths(paths: List[str], settings: Settings, debug: bool = False,
                stdin: Optional[Tuple[str, bytes]] = None) -> Report:
    if stdin is not None:
        files, missing = [stdin[0]], []
    else:
        found = discover(paths, settings.is_excluded, settings.respect_gitignore, settings.force_exclude)
        files, missing = found.files, found.missing
    analysed = with_context(files, settings)  # the rest of their projects: reach never depends on what was named
    signatures = {p: _signature(p) for p in analysed} if settings.cache and stdin is None else {}
    run_key, cache = _run_key(analysed, settings, signatures) if signatures else (None, None)
    result = cache.get(run_key) if run_key else None
    if result is not None:  # nothing changed since the last identical run: its result stands
        findings, errors = result
    else:
        summaries, errors = analyze_files(analysed, settings, debug, stdin, signatures)
        # The pass makes no cycles to speak of (31 objects left on the four corpora), and its
        # collections would traverse every summary again and again
        with _no_collection():
            findings = project_findings(summaries, settings, cache, trees=_trees(stdin))
        if run_key:
            cache.put_run(run_key, (findings, errors))
    findings, errors = named_only(findings, errors, files)
    errors = [FileError(p, "no such file or directory") for p in missing] + list(errors)
    if stdin is None:
        errors = [FileError(p, f"cannot list folder: {why}") for p, why in found.errors] + errors
    return Report(findings=findings, errors=errors, files_checked=len(files))


def _trees(stdin: Optional[Tuple[str, bytes]]) -> Trees:
    """The project pass's parsed modules: stdin's text in place of its file's."""
    if stdin is None:
        return Trees()
    path, data = stdin
    tree = parse_bytes(path, data)
    return Trees(lambda p: tree if p == path else ON_DISK)


def _run_key(files: List[str], settings: Settings, signatures: Dict[str, tuple]):
    """A key for the whole run: every file's path, size and modification time (Ruff's test for
    "unchanged": no file is read), and the settings that shape results."""
    cache = Cache(settings.cache_dir or default_directory(settings.project_root))
    h = hashlib.blake2b(digest_size=20)
    shaping = {k: v for k, v in vars(settings).items() if k not in ("jobs", "cache", "cache_dir")}
    h.update(repr((sorted(shaping.items()), settings.configs_key(files))).encode())
    for path in files:
        signature = signatures[path]
        if signature is None:
            return None, None  # let the normal path report it
        h.update(f"{path}\0{signature}\0".encode("utf-8", "surrogateescape"))
    return "run-" + h.hexdigest(), cache


def project_findings(summaries: List[FileSummary], settings: Settings,
                     cache: Optional[Cache] = None, project: Optional[Project] = None,
                     judges: Optional[Dict[str, tuple]] = None, trees: Optional[Trees] = None,
                     frames_memo: Optional[FramesMemo] = None) -> List[Finding]:
    """`project`: one built before from the same summaries and settings (reused across entries).
    `judges`: `FindingBuilder.judge`'s answers, kept between passes with the same settings.
    `trees`: the parsed modules of the summaries' texts (default: parsed from disk when needed);
    `frames_memo`: what the previous pass left (frames, calls resolved), over a project index
    answering name questions as `project` does."""
    project = project or Project(summaries, settings.extra_roots, settings.extra_stops)
    project.follow_misuse = settings.follow_misuse  # a project reused across settings follows what these ask
    project.follow_swapped = settings.follow_swapped
    entries = []
    for entry in settings.entries:
        resolved = resolve_entry(project, entry)  # (function id, the class it runs for)
        if resolved is None:
            raise UsageError(f"--entry {entry}: no such function or class among the checked files")
        entries.append(resolved)
    frames_memo = frames_memo if frames_memo is not None else FramesMemo()
    roots, reached, disabled = _reach_cached(project, summaries, entries, settings, cache, frames_memo.calls)
    builder = FindingBuilder(settings, judges)
    root_ids = {project.display(fid): fid for fid, *_ in roots if fid in project.functions}
    incoming = passed_args.Incoming(project, reached, root_ids.values(), frames_memo.calls)
    for summary in summaries:
        for qual, info in summary.with_candidates():  # most functions have nothing to place
            r = reached.get(f"{summary.module}.{qual}")
            if r is None:
                continue
            skips = _frame_skips(info.candidates, builder.rules)
            for c in info.candidates:
                mode = meet(r.mode, edge_mode(c.guards))
                if mode == "never" or project.dead(c.guards):
                    continue
                if settings.mode != "any" and mode not in ("any", settings.mode):
                    continue
                allowed, config_note = config_flags.decide(project, root_ids.get(r.root, ""), c.flags)
                if not allowed:
                    continue  # the compiled model's config class rules the path out
                if incoming.unpassed(f"{summary.module}.{qual}", c.needs) or incoming.unreached(f"{summary.module}.{qual}"):
                    continue  # needs an optional argument no traced call gives
                if c.fix_if_tensors and not incoming.gives_tensors(f"{summary.module}.{qual}", c.fix_if_tensors):
                    c = replace(c, fix=None)  # a call may pass something else than a tensor
                when = f"{c.when} ({config_note})" if c.when and config_note else c.when
                if (MISUSE, True) in c.guards and MISUSE_NOTE not in r.condition:
                    when = f"{MISUSE_NOTE} ({when})" if when else MISUSE_NOTE
                region = Region(r.root, r.reason, mode, " and ".join(x for x in (r.condition, when) if x),
                                _hidden_by(c, skips, info))
                if c.condition == "cudagraph" and not (r.cudagraph or settings.profile == "vllm"):
                    continue
                builder.add(summary, qual, c, region)
        for c in summary.anywhere:
            builder.add(summary, summary.enclosing_function(c.span.row), c, None)
    enabled = builder.enabled_anywhere(summaries)
    hooked = [rule for rule in registry().values() if rule.has_project_hook() and rule.code in enabled]
    trees = trees if trees is not None else Trees()
    context = EngineProjectContext(project, summaries, roots, reached, disabled, builder, trees, frames_memo)
    for phase in ("reach", "after_suppressions"):
        for rule in hooked:
            if rule.project_phase == phase:
                rule.check_project(context)
    return locate(builder.finish(summaries), summaries)  # notebooks: which cell


def _frame_skips(candidates, rules) -> list:
    """Break candidates after which Dynamo runs the rest of the frame eager: those inside a loop
    (it cannot resume inside a loop: "frame-skipped", measured in the truth corpus, e.g. wav2vec2's
    `_compute_mask_indices`), and those of rules whose break has no point to resume at (`skips_frame`)."""
    out = []
    for c in candidates:
        rule = rules.get(c.code)
        if getattr(rule, "kind", "") == "break" and (c.in_loop or getattr(rule, "skips_frame", False)):
            out.append(c)
    return out


def _hidden_by(c, skips, info) -> int:
    """The row of a frame-skipping break that Dynamo meets before `c` whenever it would meet `c`,
    or 0: an earlier break that runs whenever `c` does (its guards and condition are part of c's);
    else, for `c` in a loop, the break of the same outermost loop Dynamo meets first on the first
    iteration: the one that needs no condition in the loop, else the first in the source
    (measured in the truth corpus: BigBird's random-block plan breaks at the `if i == 1:` branch
    and its `elif`s are never traced; a break after a nested loop that its first iteration skips
    hides the one inside)."""
    for s in skips:
        if s.span.row < c.span.row and set(s.guards) <= set(c.guards) and (not s.when or s.when in c.when):
            return s.span.row
    loops = [(info.row + lo, info.row + hi) for lo, hi in info.loops if lo <= c.span.row - info.row <= hi]
    if not loops:
        return 0
    lo, hi = min(loops, key=lambda span: span[0] - span[1])  # the outermost: the widest
    group = [s for s in skips if lo <= s.span.row <= hi and set(s.guards) <= set(c.guards)]
    first = min(group, key=lambda s: (bool(s.when), s.span.row), default=None)
    return first.span.row if first is not None and first is not c and first.span.row != c.span.row else 0


def _reach_cached(project: Project, summaries: List[FileSummary], entries: List[str], settings: Settings,
                  cache: Optional[Cache], calls: ResolvedCalls):
    """Roots and reach, reused when no file's graph changed (an edit inside a function body).
    The language server's memo may also know the roots still hold (an edit that changed calls
    only): then reach alone is made again."""
    key = None
    if cache is not None:
        h = hashlib.blake2b(digest_size=20)
        h.update(repr((entries, settings.scope, settings.extra_roots, settings.extra_stops,
                       settings.follow_swapped, settings.follow_misuse)).encode())
        for summary in summaries:
            h.update(f"{summary.path}\0{summary.graph_key}\0".encode("utf-8", "surrogateescape"))
        key = "reach-" + h.hexdigest()
        hit = cache.get(key)
        if hit is not None:
            roots, reached, refs = hit
            disabled = []
            for caller, index, callee in refs:
                summary, info = project.functions[caller]
                disabled.append(DisabledCall(summary, info, info.calls[index], callee, index))
            return roots, reached, disabled
    # Only the language server's `ReachMemo` has `roots` (set when they still hold); the disk cache has none.
    roots = getattr(cache, "roots", None) or compile_roots(project, entries, settings.scope, settings.follow_swapped)
    reached, disabled = reach(project, roots, settings.follow_swapped, calls)
    if key is not None:
        refs = [(f"{d.summary.module}.{d.function.qualname}", d.index, d.callee) for d in disabled]
        cache.put_run(key, (roots, reached, refs))
    return roots, reached, disabled


class FindingBuilder:
    """Candidates → Findings: rule metadata, selection, per-file ignores and noqa, in that order,
    each decided by the settings of the finding's own file (its nearest configuration)."""

    def __init__(self, settings: Settings, judges: Optional[Dict[str, tuple]] = None):
        self.settings = settings
        self.rules = registry()
        self.findings: Dict[tuple, Finding] = {}
        self.used_noqa: set = set()  # (path, row, code) that suppressed something
        self._judges: Dict[str, tuple] = {} if judges is None else judges
        self._codes: Dict[int, tuple] = {}

    def judge(self, path: str):
        """(settings, enabled codes, codes ignored for this file, fixable codes) for `path`."""
        if path not in self._judges:
            s = self.settings.for_path(path)
            if id(s) not in self._codes:
                self._codes[id(s)] = (s, s.enabled_codes(), s.fixable_codes())
            _, enabled, fixable = self._codes[id(s)]
            self._judges[path] = (s, enabled, s.ignored_for(path), fixable)
        return self._judges[path]

    def enabled_anywhere(self, summaries: List[FileSummary]) -> set:
        """The codes some file's settings enable (a project-wide rule runs if any file wants it)."""
        out = set()
        for summary in summaries:
            out |= self.judge(summary.path)[1]
        return out

    def add(self, summary: FileSummary, function: str, c: Candidate, region: Optional[Region], distinct: str = ""):
        """`distinct` tells apart findings of one rule at one span (one per unused noqa code)."""
        rule = self.rules.get(c.code)
        path = summary.path
        settings, enabled, ignored, fixable = self.judge(path)
        if rule is None or c.code not in enabled:
            return
        if rule.noqa_applies:
            if c.code in ignored:
                return
            if not settings.ignore_noqa and self._suppressed(summary, c.code, c.span.row):
                return
        severity = rule.severity
        if rule.kind == "recompile" and settings.profile == "vllm":
            severity = "error"  # vLLM runs under fail_on_recompile: every recompile is fatal
        if severity == "info" and self.settings.profile == "vllm":
            severity = "error"  # a deliberate break still splits vLLM's single graph
        key = (path, c.span, c.code + distinct)
        if key in self.findings:
            return
        tv = settings.torch_version
        self.findings[key] = Finding(
            code=c.code, name=rule.name, message=rule.render(c.message, tv), path=path, span=c.span, function=function,
            fix=c.fix if c.code in fixable else None, gb_type=rule.gb_types[0] if rule.gb_types else "",
            url=rule.url(tv), noqa_row=c.span.row, region=region, severity=severity,
        )

    def _suppressed(self, summary: FileSummary, code: str, row: int) -> bool:
        if summary.file_noqa is not None:
            if summary.file_noqa == () or any(code.startswith(p) for p in summary.file_noqa):
                return True
        if row in summary.noqa:
            codes = summary.noqa[row]
            if codes is None:
                return True
            for listed in codes:
                if code.startswith(listed):
                    self.used_noqa.add((summary.path, row, listed))
                    return True
        return False

    def finish(self, summaries: List[FileSummary]) -> List[Finding]:
        return sorted(self.findings.values(), key=lambda f: f.sort_key)


class EngineProjectContext(ProjectContext):
    """The project pass as rules' `check_project` hooks see it."""

    def __init__(self, project: Project, summaries: List[FileSummary], roots, reached, disabled,
                 builder: FindingBuilder, trees: Trees, frames_memo: Optional[FramesMemo] = None):
        self._project = project
        self._summaries = summaries
        self._roots = roots
        self._reached = reached
        self._disabled = disabled
        self._builder = builder
        self._trees = trees
        self._frames_memo = frames_memo
        self._frames: Optional[Dict[str, Frames]] = None

    @property
    def summaries(self) -> List[FileSummary]:
        return self._summaries

    @property
    def roots(self):
        return self._roots

    @property
    def disabled_calls(self) -> List[DisabledCall]:
        return self._disabled

    def function(self, fid: str):
        return self._project.functions.get(fid)

    def region(self, fid: str) -> Optional[Region]:
        r = self._reached.get(fid)
        return Region(r.root, r.reason) if r is not None else None

    @property
    def graph(self) -> Project:
        return self._project

    @property
    def reached(self):
        return self._reached

    @property
    def torch_version(self) -> str:
        return self._builder.settings.torch_version

    def dead(self, guards) -> bool:
        return self._project.dead(guards)

    def frames(self, mode: str) -> Frames:
        if self._frames is None:  # both modes at once, for every rule that asks
            self._frames = all_frames(self._project, self._reached, [r[0] for r in self._roots],
                                      self._frames_memo)
        return self._frames[mode]

    @property
    def trees(self) -> Trees:
        return self._trees

    def unused_noqa(self):
        if self._builder.settings.ignore_noqa:
            return []  # nothing was suppressed, so nothing can be told unused
        used = self._builder.used_noqa
        return [(summary, row, code) for summary in self._summaries for row, codes in summary.noqa.items()
                for code in codes or () if code.startswith("CL") and (summary.path, row, code) not in used]

    def findings_of(self, code: str):
        return [f for f in self._builder.findings.values() if f.code == code]

    def withdraw(self, finding) -> None:
        self._builder.findings = {k: f for k, f in self._builder.findings.items() if f is not finding}

    def report(self, rule, summary, function, span, message=None, region=None, *, guards=(), distinct=""):
        self._builder.add(summary, function, Candidate(rule.code, message or rule.message, span, None, tuple(guards)),
                          region, distinct)

