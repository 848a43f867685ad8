"""Per-file result cache: a summary is a pure function of the file's bytes, its module name and
compilelint's version, so that is the key. Entries are written atomically (temp file + rename);
a truncated or unreadable entry is treated as a miss, never as an error.
"""
from __future__ import annotations

import gc
import hashlib
import io
import os
import pickle
import shutil
import tempfile
from typing import Dict, Iterable, Optional, Tuple

from compilelint import __version__
from compilelint.summary import ClassInfo, FunctionInfo, packed_record

# Bump when the summary format changes in a way the version number would not show.
FORMAT = "1"
KEEP_RUNS = 8


def _code_fingerprint() -> str:
    """Changes whenever compilelint's own code or data does (an edited rule or table must not read
    stale entries)."""
    import compilelint
    import compilelint.rules

    h = hashlib.blake2b(digest_size=6)
    for top in (os.path.dirname(compilelint.__file__), os.path.dirname(compilelint.rules.__file__)):
        for folder, dirs, files in os.walk(top):
            dirs.sort()
            for name in sorted(files):
                if name.endswith((".py", ".toml", ".json")):  # rules, tables of measured behaviour
                    st = os.stat(os.path.join(folder, name))
                    h.update(f"{folder}/{name}:{st.st_size}:{st.st_mtime_ns};".encode("utf-8", "surrogateescape"))
    return h.hexdigest()


class Store:
    """Where the project pass keeps results between runs under a key (`engine.project_findings`'
    `cache`): the on-disk `Cache`, or the language server's in-memory `ReachMemo`."""

    # The compile roots of the project at hand when the store knows they still hold (the server,
    # after an edit that changed calls only): the pass then makes reach again, not the roots.
    known_roots = None

    def get(self, key: str):
        """The value put under `key`, or None (a miss, never an error)."""
        raise NotImplementedError

    def put_run(self, key: str, value) -> None:
        """Keep `value` under `key` (only the newest few results of a kind are kept)."""
        raise NotImplementedError


class Cache(Store):
    def __init__(self, directory: str):
        self.root = directory
        self.directory = os.path.join(directory, f"v{__version__}-{FORMAT}-{_code_fingerprint()}")
        self._ready = False

    @staticmethod
    def key(data: bytes, module: str, path: str, prefilter: bool = True) -> str:
        h = hashlib.blake2b(digest_size=20)
        name = os.path.basename(path)  # surrogateescape: a file name that is not UTF-8 is still a name
        h.update(module.encode("utf-8", "surrogateescape") + b"\0" + name.encode("utf-8", "surrogateescape")
                 + b"\0" + bytes([prefilter]))
        h.update(data)
        return h.hexdigest()

    def get(self, key: str):
        # Unpickling builds many small objects and no cycles: the cyclic collector would only
        # rescan them over and over (it made a warm run three times slower).
        enabled = gc.isenabled()
        gc.disable()
        try:
            with open(os.path.join(self.directory, key[:2], key), "rb") as f:
                return pickle.load(f)
        except Exception:  # missing, truncated, written by another version: a miss
            return None
        finally:
            if enabled:
                gc.enable()

    def has(self, key: str) -> bool:
        """Whether an entry is under `key` (not read: it may still turn out unreadable)."""
        return os.path.exists(os.path.join(self.directory, key[:2], key))

    def get_many(self, pack: str, keys: Iterable[str]) -> Tuple[Dict[str, object], int]:
        """(the cached entries of `keys`, how many of them the pack did not hold). The pack named
        `pack` (`put_pack`) holds many entries in one file, read at once: a file per entry costs an
        open and a load each (a 3,231-file checkout's summaries: 0.42 s one by one, 0.28 s packed)."""
        packed = self.get("pack-" + pack) or {}
        found: Dict[str, object] = {}
        unpacked = 0
        for key in keys:
            value = packed.get(key)
            if value is None:
                unpacked += 1
                value = self.get(key)
            if value is not None:
                found[key] = value
        return found, unpacked

    def put_pack(self, pack: str, entries: Dict[str, object]) -> None:
        """Keep `entries` (summaries) in one file, their function and class records each pickled
        apart, unpickled on first use (`summary.Unpacked`)."""
        out = io.BytesIO()
        _PackPickler(out, protocol=pickle.HIGHEST_PROTOCOL).dump(entries)
        self.put_pickled("pack-" + pack, out.getvalue())
        self._keep_newest("pack-" + pack)

    def put(self, key: str, value) -> None:
        self.put_pickled(key, pickle.dumps(value, protocol=pickle.HIGHEST_PROTOCOL))

    def put_pickled(self, key: str, data: bytes) -> None:
        """`put` of a value pickled already (a worker's summary: it came pickled)."""
        try:
            self._prepare()
            folder = os.path.join(self.directory, key[:2])
            os.makedirs(folder, exist_ok=True)
            fd, tmp = tempfile.mkstemp(dir=folder, prefix=".tmp-")
            with os.fdopen(fd, "wb") as f:
                f.write(data)
            os.replace(tmp, os.path.join(folder, key))
        except OSError:
            pass  # a read-only tree still gets checked, just not cached

    def put_run(self, key: str, value) -> None:
        """A whole run's (or project pass's) result; only the newest few of a kind are kept."""
        self.put(key, value)
        self._keep_newest(key)

    def _keep_newest(self, key: str) -> None:
        folder = os.path.join(self.directory, key[:2])
        try:
            prefix = key.split("-", 1)[0] + "-"  # "run-…", "reach-…", "pack-…"
            runs = sorted((e for e in os.scandir(folder) if e.name.startswith(prefix)),
                          key=lambda e: e.stat().st_mtime, reverse=True)
            for old in runs[KEEP_RUNS:]:
                os.unlink(old.path)
        except OSError:
            pass

    def _prepare(self) -> None:
        if self._ready:
            return
        os.makedirs(self.root, exist_ok=True)
        for name in os.listdir(self.root):  # entries of other compilelint builds are dead weight
            old = os.path.join(self.root, name)
            if name.startswith("v") and old != self.directory and os.path.isdir(old):
                shutil.rmtree(old, ignore_errors=True)
        ignore = os.path.join(self.root, ".gitignore")
        if not os.path.exists(ignore):
            with open(ignore, "w") as f:
                f.write("# Automatically created by compilelint.\n*\n")
        self._ready = True


class _PackPickler(pickle.Pickler):
    """Writes each function and class record as its fields pickled apart (`summary.packed_record`)."""

    def reducer_override(self, obj):
        if getattr(type(obj), "_unpacked_class", type(obj)) in (FunctionInfo, ClassInfo):  # or a packed twin
            state = obj.__dict__
            fields = state["_packed"] if len(state) == 1 and "_packed" in state else None  # read from a pack, unused since
            if fields is None:
                fields = pickle.dumps(obj.__getstate__(), protocol=pickle.HIGHEST_PROTOCOL)
            return packed_record, (getattr(type(obj), "_unpacked_class", type(obj)), fields)
        return NotImplemented


def files_key(paths, prefilter: bool) -> str:
    """The key of a run's manifest (last run's {path: (signature, content key)}): an unchanged
    file is not even read."""
    return "files-" + hashlib.blake2b(repr((paths, prefilter)).encode("utf-8", "surrogateescape"),
                                      digest_size=20).hexdigest()


def run_key(files, judged: str, signatures) -> Optional[str]:
    """A key for a whole run: every file's path and signature (size, modification time: Ruff's
    test for "unchanged", no file is read), and the settings that shape results (`judged`:
    `judging(files, settings)`); None when a file has no signature (let the normal path report it)."""
    h = hashlib.blake2b(digest_size=20)
    h.update(judged.encode())
    for path in files:
        signature = signatures[path]
        if signature is None:
            return None
        h.update(f"{path}\0{signature}\0".encode("utf-8", "surrogateescape"))
    return "run-" + h.hexdigest()


# Settings that decide where and how fast a run works, never what it reports.
_NOT_SHAPING = ("jobs", "cache", "cache_dir")


def judging(files, settings) -> str:
    """The settings that shape results and the configurations that judge `files`, as text. The
    command line's overrides (`Settings.cli`) are in it without the ones that shape nothing: a
    cache copied to another `--cache-dir` still holds its runs and kept passes."""
    shaping = {k: v for k, v in vars(settings).items() if k not in _NOT_SHAPING}
    if settings.cli is not None:
        config, isolated, inline, overrides = settings.cli
        shaping["cli"] = (config, isolated, inline, tuple((k, v) for k, v in overrides if k not in _NOT_SHAPING))
    return repr((sorted(shaping.items()), settings.configs_key(files)))


def reach_key(entries, settings, summaries) -> str:
    """A key for the project pass's roots and reach: the entries and settings that decide them,
    and every file's call graph (`FileSummary.graph_key`, rows left out)."""
    h = hashlib.blake2b(digest_size=20)
    h.update(repr((entries, settings.scope, settings.extra_roots, settings.extra_stops,
                   settings.follow_swapped, settings.follow_misuse)).encode())
    for summary in summaries:
        h.update(f"{summary.path}\0{summary.graph_key}\0".encode("utf-8", "surrogateescape"))
    return "reach-" + h.hexdigest()


def edges_key(entries, settings, summaries) -> str:
    """A key for the frames' call edges of the reached functions (`frames.FramesMemo.kept_edges`):
    what decides reach, and the torch whose behaviour decides which calls are live."""
    return "edges-" + reach_key(entries, settings, summaries)[len("reach-"):] + "-" + str(settings.torch_version)


def default_directory(project_root: Optional[str]) -> str:
    return os.path.join(project_root or os.getcwd(), ".compilelint_cache")
