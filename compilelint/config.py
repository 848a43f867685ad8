"""Settings: defaults, the nearest configuration file, then command-line flags on top.

A configuration file is `.compilelint.toml` or `compilelint.toml` (top-level keys) or a `pyproject.toml`
with a `[tool.compilelint]` table; in one folder they take that precedence (Ruff's). Every file is
judged by the nearest configuration above it, so `check a b` and `check b a` agree; `--config FILE`
or `--isolated` gives every file the same settings. Paths in a configuration (excludes,
per-file-ignores, cache-dir) are relative to its folder.
"""
from __future__ import annotations

import fnmatch
import os
import sys
from dataclasses import dataclass, field, fields
from typing import Dict, List, Optional, Tuple

from compilelint.rule import KNOWN_TORCH_VERSIONS, expand_selection, registry
from compilelint.torch_version import default_torch_version

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - exercised on older Pythons only
    import tomli as tomllib

SCOPES = ("modules", "compiled", "all")
PROFILES = ("default", "vllm")
MODES = ("any", "eval", "train")


class ConfigError(Exception):
    """A setting the user wrote that we can't use; the message names the key and the file."""


@dataclass
class Settings:
    select: Optional[List[str]] = None  # None: every rule that is on by default
    ignore: List[str] = field(default_factory=list)
    extend_select: List[str] = field(default_factory=list)
    per_file_ignores: Dict[str, List[str]] = field(default_factory=dict)
    exclude: List[str] = field(default_factory=list)
    extend_exclude: List[str] = field(default_factory=list)
    scope: str = "modules"
    profile: str = "default"
    mode: str = "any"  # "eval" / "train": keep only the findings that can run in that mode
    # follow forwards a decorator may replace (@use_experts_implementation), and flash attention
    follow_swapped: bool = False
    follow_misuse: bool = False  # follow branches taken only on a deprecated or unexpected argument
    extra_roots: List[str] = field(default_factory=list)
    extra_stops: List[str] = field(default_factory=list)
    # The measured torch whose behaviour the findings speak of; by default the installed torch's.
    torch_version: str = field(default_factory=lambda: default_torch_version()[0])
    torch_version_from: str = ""  # where `torch_version` came from (`--show-settings` says it)
    entries: List[str] = field(default_factory=list)
    # Judge the named files alone: the rest of their projects is not read, so nothing reaches them
    # from other files (`--isolated`, the fixture tests). Off: reach never depends on what was named.
    named_alone: bool = False
    respect_gitignore: bool = True
    force_exclude: bool = False
    ignore_noqa: bool = False
    jobs: Optional[int] = None
    cache: bool = True
    cache_dir: Optional[str] = None
    prefilter: bool = True
    fixable: List[str] = field(default_factory=lambda: ["ALL"])  # codes whose fixes may be applied
    unfixable: List[str] = field(default_factory=list)
    config_path: Optional[str] = None  # the configuration file the settings came from
    project_root: Optional[str] = None  # its folder: per-file-ignores and excludes are relative to it
    # (extend-select, ignore) applied after select/extend-select/ignore above, in order: what the
    # command line adds on top of the configuration when it does not `--select` afresh.
    selection_overrides: List[Tuple[List[str], List[str]]] = field(default_factory=list)
    # How `settings_for` made these settings, to make each file's own settings the same way:
    # (explicit config file, isolated, inline `--config KEY=VALUE` pairs, flag overrides). None for
    # settings built by hand, which judge every file alike.
    cli: Optional[tuple] = field(default=None, repr=False)

    def __post_init__(self):
        if not self.torch_version_from:
            version, source = default_torch_version()
            self.torch_version_from = source if self.torch_version == version else "given by the caller"

    def for_path(self, path: str) -> "Settings":
        """The settings that judge `path`: those of the nearest configuration above it, with the
        command line on top; these very settings when they are the same (or fixed by `--config`)."""
        if self.cli is None:
            return self
        config, isolated, inline, overrides = self.cli
        if config or isolated:
            return self
        found = find_config(path)
        if found == self.config_path:
            return self
        key = (found, self.cli)  # a configuration is read once per run, like `find_config` answers
        if key not in _RESOLVED:
            _RESOLVED[key] = _made(load(found) if found else Settings(), inline, dict(overrides), self.cli)
        return _RESOLVED[key]

    def configs_key(self, paths: List[str]) -> tuple:
        """The configurations judging `paths` (files), with their sizes and times: part of a run's
        cache key. Asked per folder: a file's configuration is its folder's."""
        if self.cli is None or self.cli[0] or self.cli[1]:
            return ()
        folders = {os.path.join(os.path.abspath(d), "") for d in {os.path.dirname(p) for p in paths}}
        return tuple(sorted({(c, _stamp(c)) for c in map(find_config, folders) if c}))

    def is_excluded(self, path: str) -> bool:
        """Whether the excludes of the configuration governing `path`'s folder match it; patterns
        are relative to that configuration's folder (Ruff), or to the working directory."""
        from compilelint.discover import matches_any

        s = self
        if self.cli is not None:  # the walk asks for every file: one resolution per folder
            folder = os.path.dirname(path)
            if _FOLDERS_OF[0] is not self.cli:  # the same options object: no hash of it per file
                _FOLDERS_OF[:] = [self.cli, _FOLDERS.setdefault(self.cli, {})]
            folders = _FOLDERS_OF[1]
            s = folders.get(folder)
            if s is None:
                s = folders[folder] = self.for_path(os.path.abspath(folder) + os.sep)
        patterns = s.all_excludes
        if not patterns:
            return False
        if matches_any(path, patterns):
            return True
        rel = os.path.relpath(os.path.abspath(path), s.project_root or os.getcwd())
        return not rel.startswith("..") and matches_any(rel, patterns)

    def fixable_codes(self) -> set:
        """Codes whose fixes `--fix` may apply (`fixable` minus `unfixable`, most specific wins)."""
        codes = list(registry())
        return {c for c in codes if _specificity(c, self.fixable) > _specificity(c, self.unfixable)}

    def enabled_codes(self) -> set:
        """Ruff's resolution: the base is `select` (or the defaults); each layer (the file's
        select/extend-select/ignore, then each override) switches codes on or off, the most specific
        selector deciding within a layer (`ignore = ["CL2"]` with `extend-select = ["CL201"]` keeps
        CL201), `ignore` winning a tie; later layers win over earlier ones."""
        rules = registry()
        codes = list(rules)
        if self.select is None:
            enabled = {c for c, r in rules.items() if r.default_enabled}
            if self.profile == "vllm":
                enabled |= {c for c, r in rules.items() if r.kind == "recompile"}
            on = list(self.extend_select)
        else:
            enabled = set()
            on = list(self.select) + list(self.extend_select)
        layers = [(on, list(self.ignore))] + [(list(e), list(i)) for e, i in self.selection_overrides]
        for on, off in layers:
            for code in codes:
                s_on, s_off = _specificity(code, on), _specificity(code, off)
                if s_on < 0 and s_off < 0:
                    continue
                if s_on > s_off:
                    enabled.add(code)
                else:
                    enabled.discard(code)
        return enabled

    def ignored_for(self, path: str) -> set:
        """Codes switched off for `path` by per-file-ignores (globs relative to the project root)."""
        if not self.per_file_ignores:
            return set()
        rel = os.path.relpath(os.path.abspath(path), self.project_root or os.getcwd()).replace(os.sep, "/")
        out = set()
        codes = list(registry())
        for pattern, ignored in self.per_file_ignores.items():
            if fnmatch.fnmatchcase(rel, pattern) or fnmatch.fnmatchcase(os.path.basename(rel), pattern) \
                    or fnmatch.fnmatchcase(rel, pattern.rstrip("/") + "/*"):
                out |= expand_selection(ignored, codes)
        return out

    @property
    def all_excludes(self) -> List[str]:
        return list(self.exclude) + list(self.extend_exclude)


def _specificity(code: str, selectors) -> int:
    """How specifically the best of `selectors` names `code`: -1 none, 0 `ALL`, else its length."""
    best = -1
    for p in selectors:
        p = p.strip().upper()
        if p == "ALL":
            best = max(best, 0)
        elif p and code.startswith(p):
            best = max(best, len(p))
    return best


# pyproject key → (Settings field, expected type)
KEYS = {
    "select": ("select", list), "ignore": ("ignore", list), "extend-select": ("extend_select", list),
    "per-file-ignores": ("per_file_ignores", dict), "exclude": ("exclude", list),
    "extend-exclude": ("extend_exclude", list), "scope": ("scope", str), "profile": ("profile", str),
    "mode": ("mode", str), "follow-swapped": ("follow_swapped", bool),
    "follow-misuse": ("follow_misuse", bool),
    "extra-roots": ("extra_roots", list), "extra-stops": ("extra_stops", list),
    "torch-version": ("torch_version", str), "respect-gitignore": ("respect_gitignore", bool),
    "force-exclude": ("force_exclude", bool), "cache-dir": ("cache_dir", str),
    "fixable": ("fixable", list), "unfixable": ("unfixable", list),
}


CONFIG_FILES = (".compilelint.toml", "compilelint.toml", "pyproject.toml")  # precedence in one folder
_NEAREST: Dict[str, Optional[str]] = {}  # folder -> its nearest configuration (one run, one answer)
_RESOLVED: Dict[tuple, "Settings"] = {}
_FOLDERS: Dict[tuple, Dict[str, "Settings"]] = {}  # cli -> folder as spelled -> the settings governing it
_FOLDERS_OF: list = [None, None]  # the cli last asked about, and its folders' table


def config_in(directory: str) -> Optional[str]:
    """The configuration file of `directory` itself, or None."""
    for name in CONFIG_FILES:
        candidate = os.path.join(directory, name)
        if not os.path.isfile(candidate):
            continue
        if name != "pyproject.toml":
            return candidate
        try:
            with open(candidate, "rb") as f:
                data = tomllib.load(f)
        except OSError:
            continue
        except (tomllib.TOMLDecodeError, UnicodeDecodeError) as e:  # it may hold our table: don't guess past it (Ruff)
            raise ConfigError(f"{candidate} is not valid TOML: {e}") from None
        tool = data.get("tool", {})
        if isinstance(tool, dict) and "compilelint" in tool:
            return candidate
    return None


def find_config(path: str) -> Optional[str]:
    """The nearest configuration at or above `path` (a folder, or a file's folder)."""
    start = os.path.abspath(path)
    directory = start if path.endswith(os.sep) or os.path.isdir(start) else os.path.dirname(start)
    seen = []
    found = None
    while True:
        if directory in _NEAREST:
            found = _NEAREST[directory]
            break
        seen.append(directory)
        found = config_in(directory)
        if found:
            break
        parent = os.path.dirname(directory)
        if parent == directory:
            break
        directory = parent
    for d in seen:
        _NEAREST[d] = found
    return found


def _stamp(path: Optional[str]):
    try:
        st = os.stat(path) if path else None
    except OSError:
        return None
    return (st.st_size, st.st_mtime_ns) if st else None


def load(path: str) -> Settings:
    try:
        with open(path, "rb") as f:
            data = tomllib.load(f)
    except OSError as e:
        raise ConfigError(f"cannot read {path}: {e.strerror}") from None
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as e:
        raise ConfigError(f"{path} is not valid TOML: {e}") from None
    if os.path.basename(path) == "pyproject.toml":
        tool = data.get("tool", {})
        table = tool.get("compilelint", {}) if isinstance(tool, dict) else {}
        source = f"[tool.compilelint] in {path}"
    else:  # compilelint.toml, .compilelint.toml or any file named by --config: top-level keys
        table, source = data, path
        if "tool" in data and "compilelint" in (data.get("tool") or {}) and len(data) == 1:
            table, source = data["tool"]["compilelint"], f"[tool.compilelint] in {path}"
    if not isinstance(table, dict):
        raise ConfigError(f"[tool.compilelint] in {path} must be a table")
    root = os.path.dirname(os.path.abspath(path))
    settings = Settings(config_path=path, project_root=root)
    apply(settings, table, source=source)
    if settings.cache_dir and not os.path.isabs(settings.cache_dir):
        settings.cache_dir = os.path.join(root, settings.cache_dir)
    return settings


_TYPE_NAMES = {list: "a list of strings", dict: "a table", str: "a string", bool: "true or false"}


def apply(settings: Settings, table: dict, source: str) -> None:
    for key, value in table.items():
        if key not in KEYS:
            import difflib  # only to say what was meant: 0.01 s of imports on every run otherwise
            close = difflib.get_close_matches(key, list(KEYS), n=1)
            hint = f"; did you mean '{close[0]}'?" if close else f" (known keys: {', '.join(sorted(KEYS))})"
            raise ConfigError(f"unknown key '{key}' in {source}{hint}")
        attr, kind = KEYS[key]
        if not isinstance(value, kind) or (kind is list and not all(isinstance(v, str) for v in value)):
            raise ConfigError(f"'{key}' in {source} must be {_TYPE_NAMES[kind]}, not {value!r}")
        if kind is dict:
            for pattern, codes in value.items():
                if not isinstance(codes, list) or not all(isinstance(c, str) for c in codes):
                    raise ConfigError(f"'{key}' in {source}: the value for '{pattern}' must be a list of "
                                      f"rule codes, not {codes!r}")
        setattr(settings, attr, list(value) if kind is list else dict(value) if kind is dict else value)
        if attr == "torch_version":
            settings.torch_version_from = source
    validate(settings, source)


def validate(settings: Settings, source: str = "settings") -> None:
    if settings.scope not in SCOPES:
        raise ConfigError(f"'scope' in {source} must be one of {', '.join(SCOPES)}, not '{settings.scope}'")
    if settings.profile not in PROFILES:
        raise ConfigError(f"'profile' in {source} must be one of {', '.join(PROFILES)}, not '{settings.profile}'")
    if settings.mode not in MODES:
        raise ConfigError(f"'mode' in {source} must be one of {', '.join(MODES)}, not '{settings.mode}'")
    if settings.torch_version not in KNOWN_TORCH_VERSIONS:
        raise ConfigError(f"'torch-version' in {source} must be one of {', '.join(KNOWN_TORCH_VERSIONS)}")
    codes = set(registry())
    selectors = [(key.replace("_", "-"), pattern) for key in ("select", "ignore", "extend_select", "fixable",
                                                                "unfixable")
                 for pattern in getattr(settings, key) or []]
    selectors += [(f"per-file-ignores '{glob}'", pattern) for glob, patterns in settings.per_file_ignores.items()
                  for pattern in patterns]
    for extend, ignore in settings.selection_overrides:
        selectors += [("extend-select", p) for p in extend] + [("ignore", p) for p in ignore]
    for key, pattern in selectors:
        p = pattern.strip().upper()
        if p != "ALL" and not (p and any(c.startswith(p) for c in codes)):
            raise ConfigError(f"unknown rule selector '{pattern}' in {key} ({source}); "
                              f"see `compilelint rules`")


def parse_inline(value: str) -> dict:
    """`--config "select = ['CL1']"`: one TOML `KEY = VALUE` pair, as Ruff takes it."""
    try:
        table = tomllib.loads(value)
    except tomllib.TOMLDecodeError as e:
        raise ConfigError(f"--config {value!r} is neither a configuration file nor a valid TOML "
                          f"`KEY = VALUE` pair ({e})") from None
    return table


def settings_for(paths: List[str], config: Optional[str] = None, isolated: bool = False,
                 inline: Tuple[str, ...] = (), **overrides) -> Settings:
    """Defaults, then the configuration of the first path (unless isolated), then inline
    `--config KEY=VALUE` pairs, then the given command-line overrides. Each file's own settings
    (`Settings.for_path`) are made the same way from its nearest configuration."""
    if isolated:
        settings = Settings(named_alone=True)
    elif config:
        settings = load(config)
    else:
        found = find_config(paths[0] if paths else os.getcwd())
        settings = load(found) if found else Settings()
    cli = (config, isolated, tuple(inline), tuple((k, _frozen(v)) for k, v in sorted(overrides.items())))
    return _made(settings, inline, overrides, cli)


def _frozen(value):
    return tuple(value) if isinstance(value, list) else value


def _made(settings: Settings, inline, overrides: dict, cli: tuple) -> Settings:
    overrides = {k: (list(v) if isinstance(v, tuple) else v) for k, v in overrides.items()}
    for value in inline:
        apply(settings, parse_inline(value), source=f"--config {value!r}")
    names = {f.name for f in fields(Settings)}
    select = overrides.pop("select", None)
    extend_select = list(overrides.pop("extend_select", None) or [])
    ignore = list(overrides.pop("ignore", None) or [])
    extend_exclude = list(overrides.pop("extend_exclude", None) or [])
    if select is not None:
        # A `--select` starts the resolution afresh (Ruff): the file's selection no longer applies.
        settings.select, settings.extend_select, settings.ignore = list(select), extend_select, ignore
    elif extend_select or ignore:
        settings.selection_overrides.append((extend_select, ignore))
    # `--exclude` replaces the file's `exclude`; `--extend-exclude` adds to both.
    settings.extend_exclude = list(settings.extend_exclude) + extend_exclude
    for key, value in overrides.items():
        if key not in names:
            raise TypeError(key)
        if value is None or value == [] or value == {}:
            continue
        setattr(settings, key, value)
        if key == "torch_version":
            settings.torch_version_from = "--torch-version"
    validate(settings, "the command line")
    settings.cli = cli
    return settings
