"""`check --show-settings` and `check --show-files`: what a run would use, without running it."""
from __future__ import annotations

import json
import os
from typing import List

from compilelint.config import KEYS, Settings
from compilelint.discover import discover
from compilelint.project import project_root


_UNSET = {"select": "(the rules on by default)", "cache-dir": ".compilelint_cache in the project root"}


def _toml(value, key: str = "") -> str:
    if value is None:
        return json.dumps(_UNSET.get(key, "(unset)"))
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, dict):
        return "{ " + ", ".join(f"{json.dumps(k)} = {_toml(v)}" for k, v in value.items()) + " }"
    return json.dumps(value)


def settings_text(settings: Settings, path: str) -> str:
    """The settings that judge `path`: their file, every key as TOML, and the rules they enable."""
    s = settings.for_path(path if os.path.isdir(path) else os.path.abspath(path))
    out = [f"Resolved settings for: {path}", f"Settings path: {s.config_path or '(none: defaults)'}",
           f"Paths relative to: {s.project_root or os.getcwd()}  (excludes, per-file-ignores)",
           f"Project: {_project(path, s)}", ""]
    for key, (attr, _) in KEYS.items():
        line = f"{key} = {_toml(getattr(s, attr), key)}"
        out.append(f"{line}  # from {s.torch_version_from}" if attr == "torch_version" else line)
    if s.selection_overrides:
        out.append(f"# from the command line, on top: {_toml([list(o) for o in s.selection_overrides])}")
    out += ["", "Enabled rules: " + ", ".join(sorted(s.enabled_codes()))]
    return "\n".join(out) + "\n"


def _project(path: str, settings: Settings) -> str:
    """The folder whose files are read with `path`, so that reach through them decides what is reported."""
    if settings.named_alone:
        return "(none: the named files are judged alone)"
    root = project_root(os.path.abspath(path), settings)
    return f"{root}  (every file in it is read for reach)" if root else \
        "(none: no configuration or git checkout above it; the named files are judged together)"


def files_text(paths: List[str], settings: Settings) -> str:
    """Every file a run would check, as absolute paths, sorted (what `ruff --show-files` prints)."""
    found = discover(paths, settings.is_excluded, settings.respect_gitignore, settings.force_exclude)
    return "".join(f"{p}\n" for p in sorted(os.path.abspath(f) for f in found.files))
