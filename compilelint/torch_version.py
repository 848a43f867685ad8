"""Which torch the findings speak of, and which measured Dynamo behaviours hold on it.

The version is `torch-version` where the settings give one, else the installed torch's, read from
its package metadata (the `torch-*.dist-info` on `sys.path`; torch is never imported), else the
newest measured version. A torch between two measured versions is judged as the newest measured
one before it.

`data/torch_behaviour.toml` lists the behaviours that differ between the measured versions and
from which version each holds; a finding that relies on one is reported only where it holds. A
behaviour measured call by call names a table instead (`data/<table>-<version>.json`, one per
measured version): `behaviour:name` holds where that version's row `name` has the verdict.
"""
from __future__ import annotations

import functools
import json
import os
import sys
from typing import Dict, Optional, Tuple

from compilelint.rule import KNOWN_TORCH_VERSIONS, torch_at_least, version_key

try:
    import tomllib
except ModuleNotFoundError:  # Python < 3.11
    import tomli as tomllib

BEHAVIOURS = os.path.join(os.path.dirname(__file__), "data", "torch_behaviour.toml")


@functools.lru_cache(maxsize=None)
def behaviours() -> Dict[str, dict]:
    with open(BEHAVIOURS, "rb") as f:
        return tomllib.load(f)


@functools.lru_cache(maxsize=None)
def measured_table(table: str, version: str) -> Dict[str, dict]:
    """The rows of `data/<table>-<version>.json` (a measured major.minor), by name; empty when that
    version was not measured."""
    try:
        with open(os.path.join(os.path.dirname(__file__), "data", f"{table}-{version}.json"), encoding="utf-8") as f:
            return json.load(f)["calls"]
    except FileNotFoundError:
        return {}


def holds(behaviour: str, version: str) -> bool:
    """Does the measured `behaviour` hold on torch `version` (major.minor)? `behaviour:name` asks
    the row `name` of the behaviour's per-version table (`table` in torch_behaviour.toml)."""
    behaviour, _, name = behaviour.partition(":")
    row = behaviours().get(behaviour)
    if row is None:
        raise KeyError(f"unknown torch behaviour {behaviour!r} (compilelint/data/torch_behaviour.toml)")
    if name:
        return measured_table(row["table"], version).get(name, {}).get("verdict") == row["verdict"]
    return (not row.get("since") or torch_at_least(version, row["since"])) and \
        (not row.get("before") or not torch_at_least(version, row["before"]))


def measured_for(version: str) -> str:
    """The measured version whose behaviour `version` ("2.12.1+cu126") is judged by: the newest one
    not newer than it, the oldest for an older torch."""
    older = [v for v in KNOWN_TORCH_VERSIONS if torch_at_least(version, v)]
    ordered = sorted(older or KNOWN_TORCH_VERSIONS, key=version_key)
    return ordered[-1] if older else ordered[0]


def _metadata_version(folder: str) -> Optional[str]:
    """The `Version:` of a dist-info's METADATA (an egg-info's PKG-INFO)."""
    for name in ("METADATA", "PKG-INFO"):
        try:
            with open(os.path.join(folder, name), encoding="utf-8", errors="replace") as f:
                for line in f:
                    if line.startswith("Version:"):
                        return line.split(":", 1)[1].strip()
                    if not line.strip():
                        break  # the headers end at the first blank line
        except OSError:
            continue
    return None


@functools.lru_cache(maxsize=None)
def installed_torch() -> Optional[str]:
    """The version of the torch this Python would import, from its package metadata, or None.
    Looked up as `importlib.metadata.version("torch")` does (the first `sys.path` entry holding
    its metadata wins), without importing `importlib.metadata`: its import costs a third of
    compilelint's own start."""
    for entry in sys.path:
        try:
            names = os.listdir(entry or ".")
        except OSError:
            continue
        for name in names:
            stem, dot, kind = name.rpartition(".")
            if kind not in ("dist-info", "egg-info") or stem.split("-", 1)[0].lower() != "torch":
                continue
            version = _metadata_version(os.path.join(entry or ".", name))
            if version:
                return version
    return None


@functools.lru_cache(maxsize=None)
def default_torch_version() -> Tuple[str, str]:
    """(the measured version findings speak of when no setting names one, where it came from)."""
    installed = installed_torch()
    newest = max(KNOWN_TORCH_VERSIONS, key=version_key)
    if installed is None:
        return newest, "no torch installed: the newest measured version"
    version = measured_for(installed)
    exact = installed.split("+", 1)[0].split(".")[:2] == version.split(".")
    return version, f"the installed torch {installed} (package metadata)" + \
        ("" if exact else f": judged by the measured {version}")
