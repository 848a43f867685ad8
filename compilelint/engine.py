"""check, end to end: files → per-file summaries (parallel, cached) → project pass → findings.

Data flows one way: nothing in the per-file stage (`analysis`) knows about other files or about
settings; the project pass (`project_pass`) decides what is compiled, and suppressions and
selection come last. This module only orchestrates: reading files, the process pool, the caches.
"""
from __future__ import annotations

import ast
import copy
import gc
import os
import pickle
import re
import sys
import traceback
import warnings
from contextlib import contextmanager
from typing import Dict, List, Optional, Tuple

from compilelint.analysis import analyze
from compilelint.analysis.names import module_name_for
from compilelint.cache import Cache, Store, default_directory, edges_key, files_key, judging, run_key
from compilelint.config import Settings
from compilelint.discover import discover
from compilelint.finding import FileError, Finding, Report
from compilelint.notebook import decode_any, locate
from compilelint.kept_placement import place_changed, placement_of
from compilelint.pass_memo import PassMemo
from compilelint.project import named_only, with_context
from compilelint.project_pass.context import PassContext
from compilelint.project_pass.findings import FindingBuilder
from compilelint.project_pass.frames import FramesMemo
from compilelint.project_pass.placement import place
from compilelint.project_pass.regions import Project, resolve_entries
from compilelint.project_pass.stored_reach import disabled_calls, roots_and_reach
from compilelint.project_pass.trees import ON_DISK, Trees, parse_bytes
from compilelint.rule import registry
from compilelint.source import SourceError, read_bytes
from compilelint.text_read import ReadTrees
from compilelint.summary import FileSummary

# Below this many files to parse, a process pool costs more than it saves.
POOL_THRESHOLD = 6
# The summaries are packed again when more than this share of them is missing from the pack.
PACK_STALE = 0.05


class UsageError(Exception):
    """Bad command-line input (an --entry that names nothing): exit 2 with this one line."""


def analyze_bytes(path: str, data: bytes, debug: bool = False, prefilter: bool = True, graph_key: bool = True,
                  unasked: frozenset = frozenset()):
    """('ok', FileSummary) or ('error', one-line message). Never raises. `graph_key`: make the
    summary's call-graph hash now (a run that keeps no cache never reads it); `unasked`: codes of
    rules not to run (`unasked_rules`)."""
    try:
        source = decode_any(path, data)  # a notebook's code cells as one module
        with warnings.catch_warnings():  # `"\d"` warns; under PYTHONWARNINGS=error it would raise
            warnings.simplefilter("ignore")
            tree = ast.parse(source.text, filename=path)
        summary = analyze(path, source, tree, prefilter, graph_key, unasked)
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
    path, data, debug, prefilter, graph_key, unasked = args
    # One young-generation collection per file instead of the automatic ones: a file's analysis
    # allocates a tree and its indexes by the hundred thousand, and every automatic collection
    # it triggers traverses the summaries of the files before it too (a third of the CPU, measured).
    # The cycles left in a file's analysis (recursive closures, mostly) are freed at its end.
    with _no_collection():
        result = analyze_bytes(path, data, debug, prefilter, graph_key, unasked)
        gc.collect(0)  # inside: enabled with garbage pending, Python would collect older generations too
    return result


def _pool_worker(args):
    """`_worker` in a pool: the summary comes back pickled, and the cache keeps those bytes (the
    main process pickled each summary again to cache it)."""
    status, value = _worker(args)
    return status, pickle.dumps(value, protocol=pickle.HIGHEST_PROTOCOL) if status == "ok" else value


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
                  signatures: Optional[Dict[str, tuple]] = None,
                  keyed: Optional["ContentKeys"] = None,
                  unasked: frozenset = frozenset()) -> Tuple[List[FileSummary], List[FileError]]:
    """Every file's summary, from the cache where the file is unchanged. `signatures`: the files'
    `_signature`s where the caller already took them (the run's key did); `keyed`: the files'
    content keys where the caller already took them (`content_keys`); `unasked`: codes of rules
    not to run, for summaries no cache keeps (`unasked_rules`)."""
    cache = None
    if settings.cache:  # stdin's text is cached by its content, never by the file's signature
        cache = Cache(settings.cache_dir or default_directory(settings.project_root))
    if keyed is None:
        keyed = content_keys(paths, settings, cache, stdin, signatures)
    summaries: Dict[str, FileSummary] = {}
    errors: List[FileError] = list(keyed.errors)
    todo = []  # (path, data, key)
    with _no_collection():  # unpickled summaries make no cycles: collections would only traverse them
        _load_known(keyed, cache, summaries, errors, todo, settings)
    keyed.save(cache)
    jobs = settings.jobs or os.cpu_count() or 1
    if cache is not None:
        unasked = frozenset()  # a cached summary serves every later selection
    work = [(p, d, debug, settings.prefilter, cache is not None, unasked) for p, d, _ in todo]
    if jobs > 1 and len(todo) >= POOL_THRESHOLD:
        # imported here: a run that analyses a few files (an edit) needs no pool (0.02 s of imports)
        from concurrent.futures import ProcessPoolExecutor
        from concurrent.futures.process import BrokenProcessPool
        try:
            with ProcessPoolExecutor(max_workers=min(jobs, len(todo))) as pool, _no_collection():
                # unpickling the summaries makes no cycles: collections there only traverse them
                results = list(pool.map(_pool_worker, work, chunksize=max(1, len(work) // (jobs * 8))))
        except BrokenProcessPool:  # a worker was killed (out of memory, a signal): finish in-process
            results = [_worker(w) for w in work]
    else:
        results = [_worker(w) for w in work]
    for (path, _, key), (status, value) in zip(todo, results):
        if status != "ok":
            errors.append(FileError(path, value))
        elif isinstance(value, bytes):  # pickled by a pool's worker
            summaries[path] = pickle.loads(value)
            if cache:
                cache.put_pickled(key, value)
        else:
            summaries[path] = value
            if cache:
                cache.put(key, value)
    if cache and keyed.unpacked > PACK_STALE * len(summaries):  # the next run reads them in one file
        cache.put_pack(keyed.manifest_key, {keyed.keys[p]: s for p, s in summaries.items()})
    ordered = [summaries[p] for p in paths if p in summaries]
    return ordered, errors


class ContentKeys:
    """Each file's cache key (its content's) and, for the files read to take it, their bytes. Last
    run's manifest, {path: ((size, mtime, inode, module), content key)}, spares reading the files
    whose signature it holds; `save` writes this run's."""

    def __init__(self, manifest_key: str, manifest: dict):
        self.manifest_key = manifest_key
        self.manifest = manifest
        self.new_manifest: Dict[str, tuple] = {}
        self.keys: Dict[str, Optional[str]] = {}  # path → content key (None without a cache)
        self.data: Dict[str, bytes] = {}  # the files read
        self.errors: List[FileError] = []  # the files that could not be read
        self.unpacked = 0  # summaries found in the cache but not in its pack

    def save(self, cache: Optional[Cache]) -> None:
        if cache and self.new_manifest != self.manifest:
            cache.put_run(self.manifest_key, self.new_manifest)
            self.manifest = dict(self.new_manifest)

    def read(self, path: str, settings: Settings, signature) -> Optional[bytes]:
        """Read `path` (None: it cannot be, an error noted) and key it by its bytes."""
        try:
            data = self.data[path] = read_bytes(path)
        except OSError as e:
            self.errors.append(FileError(path, _os_message(e)))
            self.keys.pop(path, None)
            self.new_manifest.pop(path, None)
            return None
        self.keys[path] = key = Cache.key(data, module_name_for(path), path, settings.prefilter)
        if signature is not None:
            self.new_manifest[path] = (signature, key)
        return data


def content_keys(paths: List[str], settings: Settings, cache: Optional[Cache],
                 stdin: Optional[Tuple[str, bytes]] = None, signatures: Optional[Dict[str, tuple]] = None) -> ContentKeys:
    """Every file's content key: an unchanged file (its signature as last run's manifest has it) is not read."""
    manifest_key = files_key(paths, settings.prefilter)
    keyed = ContentKeys(manifest_key, (cache.get(manifest_key) or {}) if cache else {})
    signatures = signatures or {}
    for path in paths:
        if stdin is not None and path == stdin[0]:
            keyed.data[path] = stdin[1]
            keyed.keys[path] = Cache.key(stdin[1], module_name_for(path), path, settings.prefilter) if cache else None
            continue
        signature = None
        if cache:
            signature = signatures[path] if path in signatures else _signature(path)
        known = keyed.manifest.get(path)
        if known is not None and signature is not None and known[0] == signature:
            keyed.keys[path] = known[1]
            keyed.new_manifest[path] = known
        elif cache:
            keyed.read(path, settings, signature)
        else:
            try:
                keyed.data[path] = read_bytes(path)
                keyed.keys[path] = None
            except OSError as e:
                keyed.errors.append(FileError(path, _os_message(e)))
    return keyed


def _load_known(keyed: ContentKeys, cache, summaries, errors, todo, settings):
    """The cached summary of every file that has one; the others go into `todo`."""
    found, keyed.unpacked = cache.get_many(keyed.manifest_key, set(keyed.keys.values())) if cache else ({}, 0)
    taken = set()
    for path, key in list(keyed.keys.items()):
        hit = found.get(key)
        if hit is not None and key in taken:  # another file of the same content (an empty __init__.py)
            hit = copy.copy(hit)
        taken.add(key)
        if hit is None and path not in keyed.data:  # the manifest's entry outlived its summary: read the file
            errors_before = len(keyed.errors)
            keyed.read(path, settings, keyed.new_manifest.get(path, (None,))[0])
            if len(keyed.errors) > errors_before:
                errors.extend(keyed.errors[errors_before:])
                continue
            key = keyed.keys[path]
            hit = cache.get(key)
        if hit is not None:
            hit.path = path
            summaries[path] = hit
        else:
            todo.append((path, keyed.data[path], key))


def _signature(path: str, st: Optional[os.stat_result] = None):
    """What says a file is unchanged without reading it (Ruff trusts the same); `st`: its stat, taken already."""
    try:
        st = st or os.stat(path)
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
    stats: dict = {}  # the walk's stat of each file it found
    analysed = with_context(files, settings, stats)  # the rest of their projects: reach never depends on what was named
    signatures = {p: _signature(p, stats.get(p)) for p in analysed} if settings.cache and stdin is None else {}
    cache = Cache(settings.cache_dir or default_directory(settings.project_root)) if settings.cache else None
    judged = judging(analysed, settings) if cache is not None else ""
    # The whole run's key: none for stdin's text, or where a file has no signature (a fifo, a loop of links)
    whole_key = run_key(analysed, judged, signatures) if cache is not None and stdin is None else None
    result = cache.get(whole_key) if whole_key else None
    if result is not None:  # nothing changed since the last identical run: its result stands
        findings, errors = result
    else:
        # Neither the summaries nor the pass make cycles to speak of (31 objects left on the four
        # corpora), and a collection would only traverse every summary: none runs until they are
        # gone (freed with `_fresh_findings`' frame, by their reference counts).
        with _no_collection():
            findings, errors = _fresh_findings(analysed, settings, debug, stdin, signatures, cache, judged)
        if whole_key:
            cache.put_run(whole_key, (findings, errors))
    findings, errors = named_only(findings, errors, files)
    errors = [FileError(p, "no such file or directory") for p in missing] + list(errors)
    if stdin is None:
        errors = [FileError(p, f"cannot list folder: {why}") for p, why in found.errors] + errors
    return Report(findings=findings, errors=errors, files_checked=len(files))


def _fresh_findings(analysed, settings, debug, stdin, signatures, cache, judged):
    """(findings, errors) of the project pass: the last pass's when the files changed since leave
    their summaries as they were (`pass_memo`), else a pass over every summary."""
    memo = None
    if cache is not None and stdin is None:  # an added function is a root under scope "all", or as an entry
        memo = PassMemo(cache, analysed, judged, added_reach_nothing=not settings.entries and settings.scope != "all")
    keyed = content_keys(analysed, settings, cache, stdin, signatures)
    if memo is not None:
        reused = memo.reuse(keyed.keys, lambda path: _current_summary(path, keyed, cache, settings, debug),
                            keyed.data.get)
        if reused is not None:
            keyed.save(cache)
            return reused
    summaries, errors = analyze_files(analysed, settings, debug, stdin, signatures, keyed,
                                      unasked_rules(analysed, settings) if cache is None else frozenset())
    trees = _trees(stdin, cache if memo is not None else None)
    reached: set = set()
    placed: list = []
    findings = project_findings(summaries, settings, cache, trees=trees, reached_out=reached,
                                kept_placement=memo.kept_placement if memo is not None else None,
                                placed_out=placed, edges_store=cache, content_keys=keyed.keys)
    if memo is not None:
        memo.store(keyed.keys, trees.read(), findings, errors, summaries, reached, placed[0] if placed else None)
        trees.keep(cache)  # the defs the pass asked for anew, for the next pass to answer from
    return findings, errors


def unasked_rules(paths: List[str], settings: Settings) -> frozenset:
    """The codes of the rules whose candidates this run's project pass never reads: enabled by no
    file's settings (`enabled_codes`, asked per folder), and not breaks (a break candidate decides
    where Dynamo skips a frame, whatever its rule's selection: `placement.frame_skips`)."""
    enabled: set = set()
    for folder in {os.path.dirname(p) for p in paths}:
        enabled |= settings.for_path(os.path.join(folder, "")).enabled_codes()
    return frozenset(code for code, rule in registry().items() if code not in enabled and rule.kind != "break")


def _current_summary(path: str, keyed: ContentKeys, cache: Cache, settings: Settings, debug: bool):
    """The summary of `path`'s text as keyed (cached, else analysed and cached), None when it does not parse."""
    key = keyed.keys[path]
    hit = cache.get(key)
    if hit is None:
        data = keyed.data[path] if path in keyed.data else keyed.read(path, settings, None)
        if data is None or keyed.keys.get(path) != key:
            return None
        status, hit = _worker((path, data, debug, settings.prefilter, True, frozenset()))
        if status != "ok":
            return None
        cache.put(key, hit)
    hit.path = path
    return hit


def _trees(stdin: Optional[Tuple[str, bytes]], store: Optional[Cache] = None) -> Trees:
    """The project pass's parsed modules: stdin's text in place of its file's; without stdin,
    noting what the pass read of them (`text_read`, for the pass's memo), and answering from the
    defs an earlier pass asked of the same texts (kept in `store`, each text's by its bytes)."""
    if stdin is None:
        return ReadTrees(store=store)
    path, data = stdin
    tree = parse_bytes(path, data)
    return Trees(lambda p: tree if p == path else ON_DISK)


def project_findings(summaries: List[FileSummary], settings: Settings,
                     cache: Optional[Store] = None, project: Optional[Project] = None,
                     judges: Optional[Dict[str, tuple]] = None, trees: Optional[Trees] = None,
                     frames_memo: Optional[FramesMemo] = None, reached_out: Optional[set] = None,
                     kept_placement: Optional[tuple] = None, placed_out: Optional[list] = None,
                     edges_store: Optional[Cache] = None, content_keys: Optional[Dict[str, str]] = None) -> List[Finding]:
    """The project pass (`compilelint.project_pass`) over the summaries. `cache`: where roots and
    reach are kept between runs (`cache.Store`). `project`: one built before from the same
    summaries and settings (reused across entries). `judges`: `FindingBuilder.judge`'s answers,
    kept between passes with the same settings. `trees`: the parsed modules of the summaries'
    texts (default: parsed from disk when needed); `frames_memo`: what the previous pass left
    (frames, calls resolved), over a project index answering name questions as `project` does.
    `reached_out`: filled with the ids of the functions the compiled code reaches.
    `kept_placement`: (a pass's placement, the files changed since, in candidates only), reused
    where reach is the same (`kept_placement`); `placed_out`: given this pass's placement.
    `edges_store`: the on-disk cache, where the reached functions' calls resolved and what the
    frames took from each reached function (by its file's content key in `content_keys`) are
    kept per call graph (`ResolvedCalls.kept`, `FramesMemo.kept_frames`), with the roots' display
    names, one root per configuration class, and `execution_order`'s answers and walks (`FramesMemo.kept_roots`,
    `kept_chosen`, `kept_orders`).
    Long because each kept state (cache, memo, placement, edges) is handed to the pass here, one line each."""
    project = project or Project(summaries, settings.extra_roots, settings.extra_stops)
    project.follow_misuse = settings.follow_misuse  # a project reused across settings follows what these ask
    project.follow_swapped = settings.follow_swapped
    project.torch_version = settings.torch_version
    entries = []
    for entry in settings.entries:
        resolved = resolve_entries(project, entry)  # (function id, the class it runs for) each
        if not resolved:
            raise UsageError(f"--entry {entry}: no such function or class among the checked files")
        entries.extend(resolved)
    frames_memo = frames_memo if frames_memo is not None else FramesMemo()
    kept_key = None
    if edges_store is not None:  # the calls and frames' parts a process before made over this call graph
        # where the changed files changed in candidates only, the kept pass's: its graph answers
        # every name question as this one does (what `pass_memo` let stand of it did too)
        kept_key = kept_placement[0][5] if kept_placement is not None and kept_placement[0][5] else \
            edges_key(entries, settings, summaries)
        kept = edges_store.get(kept_key)
        if not (isinstance(kept, tuple) and len(kept) == 6):
            kept = ({}, {}, (None, None, None), {}, {}, {})
        frames_memo.calls.kept, frames_memo.kept_frames, frames_memo.kept_roots, frames_memo.kept_chosen, mros, \
            frames_memo.kept_orders = kept
        project.take_mros(mros)
        chosen_before = len(frames_memo.kept_chosen)
        orders_before = sum(map(len, frames_memo.kept_orders.values()))
        frames_memo.file_keys = content_keys or {}
    if kept_placement is not None:  # candidates decide no reach: the kept pass's stands
        roots, reached, refs, _, _, _, project.option_parts.user_built = kept_placement[0]
        disabled = disabled_calls(project, refs)
    else:
        roots, reached, disabled = roots_and_reach(project, summaries, entries, settings, cache, frames_memo.calls)
    if reached_out is not None:
        reached_out.update(reached)
    builder = FindingBuilder(settings, judges)
    if kept_placement is None or not place_changed(*kept_placement, project, summaries, roots, reached, disabled,
                                                   settings, builder, frames_memo.calls):
        place(project, summaries, roots, reached, settings, builder, frames_memo.calls)
    if placed_out is not None:
        placed_out.append(placement_of(builder, roots, reached, disabled, kept_key, project.option_parts.user_built))
    enabled = builder.enabled_anywhere(summaries)
    hooked = [rule for rule in registry().values() if rule.has_project_hook() and rule.code in enabled]
    trees = trees if trees is not None else Trees()
    context = PassContext(project, summaries, roots, reached, disabled, builder, trees, frames_memo)
    for phase in ("reach", "after_suppressions"):
        for rule in hooked:
            if rule.project_phase == phase:
                rule.check_project(context)
    kept_mros = project.kept_mros() if kept_key is not None else {}
    if kept_key is not None and (frames_memo.kept_grew or frames_memo.calls.kept_grew
                                 or len(frames_memo.kept_chosen) > chosen_before or len(kept_mros) > len(mros)
                                 or sum(map(len, frames_memo.kept_orders.values())) != orders_before):
        edges_store.put_run(kept_key, (frames_memo.calls.kept, frames_memo.kept_frames, frames_memo.kept_roots,
                                       frames_memo.kept_chosen, kept_mros, frames_memo.kept_orders))
    return locate(builder.finish(summaries), summaries)  # notebooks: which cell
