"""Settings: defaults, `[tool.compilelint]` in pyproject.toml, then command-line flags on top."""
from __future__ import annotations

import fnmatch
import os
import sys
from dataclasses import dataclass, field, fields
from typing import Dict, List, Optional

from compilelint.rule import DEFAULT_TORCH_VERSION, KNOWN_TORCH_VERSIONS, expand_selection, registry

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - exercised on older Pythons only
    import tomli as tomllib

SCOPES = ("modules", "compiled", "all")
PROFILES = ("default", "vllm")


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
    extra_roots: List[str] = field(default_factory=list)
    extra_stops: List[str] = field(default_factory=list)
    torch_version: str = DEFAULT_TORCH_VERSION
    entries: List[str] = field(default_factory=list)
    respect_gitignore: bool = True
    force_exclude: bool = False
    ignore_noqa: bool = False
    jobs: Optional[int] = None
    cache: bool = True
    cache_dir: Optional[str] = None
    prefilter: bool = True
    config_path: Optional[str] = None  # the pyproject.toml the settings came from
    project_root: Optional[str] = None  # its folder: per-file-ignores and excludes are relative to it

    def enabled_codes(self) -> set:
        rules = registry()
        codes = list(rules)
        if self.select is None:
            enabled = {c for c, r in rules.items() if r.default_enabled}
            if self.profile == "vllm":
                enabled |= {c for c, r in rules.items() if r.kind == "recompile"}
        else:
            enabled = expand_selection(self.select, codes)
        enabled |= expand_selection(self.extend_select, codes + ["CL900"])
        enabled -= expand_selection(self.ignore, codes + ["CL900"])
        return enabled

    def ignored_for(self, path: str) -> set:
        """Codes switched off for `path` by per-file-ignores (globs relative to the project root)."""
        if not self.per_file_ignores:
            return set()
        rel = os.path.relpath(os.path.abspath(path), self.project_root or os.getcwd()).replace(os.sep, "/")
        out = set()
        codes = list(registry()) + ["CL900"]
        for pattern, ignored in self.per_file_ignores.items():
            if fnmatch.fnmatchcase(rel, pattern) or fnmatch.fnmatchcase(os.path.basename(rel), pattern) \
                    or fnmatch.fnmatchcase(rel, pattern.rstrip("/") + "/*"):
                out |= expand_selection(ignored, codes)
        return out

    @property
    def all_excludes(self) -> List[str]:
        return list(self.exclude) + list(self.extend_exclude)


# pyproject key → (Settings field, expected type)
KEYS = {
    "select": ("select", list), "ignore": ("ignore", list), "extend-select": ("extend_select", list),
    "per-file-ignores": ("per_file_ignores", dict), "exclude": ("exclude", list),
    "extend-exclude": ("extend_exclude", list), "scope": ("scope", str), "profile": ("profile", str),
    "extra-roots": ("extra_roots", list), "extra-stops": ("extra_stops", list),
    "torch-version": ("torch_version", str), "respect-gitignore": ("respect_gitignore", bool),
    "force-exclude": ("force_exclude", bool), "cache-dir": ("cache_dir", str),
}


def find_pyproject(paths: List[str]) -> Optional[str]:
    """The nearest pyproject.toml with a [tool.compilelint] table, upward from the first path."""
    start = os.path.abspath(paths[0] if paths else os.getcwd())
    directory = start if os.path.isdir(start) else os.path.dirname(start)
    while True:
        candidate = os.path.join(directory, "pyproject.toml")
        if os.path.isfile(candidate):
            try:
                with open(candidate, "rb") as f:
                    data = tomllib.load(f)
            except (OSError, tomllib.TOMLDecodeError):
                data = {}
            if "compilelint" in data.get("tool", {}):
                return candidate
        parent = os.path.dirname(directory)
        if parent == directory:
            return None
        directory = parent


def load(path: str) -> Settings:
    try:
        with open(path, "rb") as f:
            data = tomllib.load(f)
    except OSError as e:
        raise ConfigError(f"cannot read {path}: {e.strerror}") from None
    except tomllib.TOMLDecodeError as e:
        raise ConfigError(f"{path} is not valid TOML: {e}") from None
    table = data.get("tool", {}).get("compilelint", {})
    settings = Settings(config_path=path, project_root=os.path.dirname(os.path.abspath(path)))
    apply(settings, table, source=f"[tool.compilelint] in {path}")
    return settings


def apply(settings: Settings, table: dict, source: str) -> None:
    for key, value in table.items():
        if key not in KEYS:
            raise ConfigError(f"unknown key '{key}' in {source} (known: {', '.join(sorted(KEYS))})")
        attr, kind = KEYS[key]
        if not isinstance(value, kind):
            raise ConfigError(f"'{key}' in {source} must be a {kind.__name__}")
        setattr(settings, attr, value)
    validate(settings, source)


def validate(settings: Settings, source: str = "settings") -> None:
    if settings.scope not in SCOPES:
        raise ConfigError(f"'scope' in {source} must be one of {', '.join(SCOPES)}, not '{settings.scope}'")
    if settings.profile not in PROFILES:
        raise ConfigError(f"'profile' in {source} must be one of {', '.join(PROFILES)}, not '{settings.profile}'")
    if settings.torch_version not in KNOWN_TORCH_VERSIONS:
        raise ConfigError(f"'torch-version' in {source} must be one of {', '.join(KNOWN_TORCH_VERSIONS)}")
    codes = set(registry()) | {"CL900"}
    for key in ("select", "ignore", "extend_select"):
        for pattern in getattr(settings, key) or []:
            p = pattern.strip().upper()
            if p != "ALL" and not any(c.startswith(p) for c in codes):
                raise ConfigError(f"unknown rule selector '{pattern}' in {source}")


def settings_for(paths: List[str], config: Optional[str] = None, isolated: bool = False, **overrides) -> Settings:
    """Defaults, then the project's pyproject.toml (unless isolated), then the given overrides."""
    if isolated:
        settings = Settings()
    elif config:
        settings = load(config)
    else:
        found = find_pyproject(paths)
        settings = load(found) if found else Settings()
    names = {f.name for f in fields(Settings)}
    for key, value in overrides.items():
        if key not in names:
            raise TypeError(key)
        if value is None or value == [] or value == {}:
            continue
        setattr(settings, key, value)
    validate(settings, "the command line")
    return settings
