"""Which torch the findings speak of (`torch-version`, else the installed torch's package metadata,
else the newest measured version) and the measured behaviours that change findings with it
(`compilelint/data/torch_behaviour.toml`)."""
import json
import os
import subprocess
import sys

import pytest

from compilelint import torch_version as TV
from compilelint.config import Settings
from compilelint.rule import KNOWN_TORCH_VERSIONS

from helpers import check_source

# A configuration object deep-copied in forward: torch 2.11 breaks there, 2.13 traces it
# (bench/measure/snippets_deepcopy.out); a copied tensor breaks on both. The config copy sits in
# a loop, so on 2.11 its break skips the rest of the frame and hides the `.item()` after it.
CONFIG_COPY = """\
import copy
import torch
from torch import nn

class Block(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.config = config

    def forward(self, x):
        for _ in range(2):
            cfg = copy.deepcopy(self.config)
            x = x * cfg.scale
        shadow = copy.deepcopy(x)
        return shadow + x.sum().item()
"""


def rows(report):
    return sorted((f.span.row, f.code) for f in report.findings)


def test_the_same_code_has_other_findings_on_another_torch():
    old = check_source(CONFIG_COPY, torch_version="2.11")
    new = check_source(CONFIG_COPY, torch_version="2.13")
    assert rows(old) == [(12, "CL207"), (14, "CL207"), (15, "CL101")]
    assert rows(new) == [(14, "CL207"), (15, "CL101")]
    # on 2.11 the loop's break skips the rest of the frame: Dynamo meets the .item() only once it is fixed
    assert {f.span.row: f.region.hidden_by for f in old.findings} == {12: 0, 14: 12, 15: 12}
    assert {f.span.row: f.region.hidden_by for f in new.findings} == {14: 0, 15: 0}
    assert "whatever it copies (GB0179" in old.findings[0].message


def test_a_class_attribute_store_breaks_before_2_13():
    """fixtures/precision/class_attribute_store.py: stores to class objects, traced by 2.13 (measured
    there, so the precision test sees nothing) and reported for 2.11 (the truth corpus)."""
    path = os.path.join(os.path.dirname(__file__), "..", "fixtures", "precision", "class_attribute_store.py")
    with open(path, encoding="utf-8") as fh:
        source = fh.read()
    lines = source.splitlines()
    stores = [i for i, line in enumerate(lines, 1) if line.strip() in
              ("cls._state = state", "type(self).calls += 1", 'Registry.last = "registered"')]
    assert len(stores) == 3
    assert rows(check_source(source, torch_version="2.11")) == [(row, "CL206") for row in stores]
    assert rows(check_source(source, torch_version="2.13")) == []
    assert TV.holds("class-attribute-store-breaks", "2.11") and not TV.holds("class-attribute-store-breaks", "2.13")


def test_a_finding_for_another_torch_is_cached_apart(tmp_path):
    (tmp_path / "m.py").write_text(CONFIG_COPY)
    cache = str(tmp_path / "cache")

    def found(version):
        out = subprocess.run([sys.executable, "-m", "compilelint", "check", "m.py", "--exit-zero", "--cache-dir",
                              cache, "--torch-version", version, "--output-format", "json"], cwd=tmp_path,
                             capture_output=True, text=True)
        return sorted(f["location"]["row"] for f in json.loads(out.stdout))  # shown, not hidden

    assert [found("2.11"), found("2.13"), found("2.11")] == [[12], [14, 15], [12]]


def _fake_torch(folder, version: str) -> str:
    meta = folder / f"torch-{version}.dist-info"
    meta.mkdir(parents=True)
    (meta / "METADATA").write_text(f"Metadata-Version: 2.1\nName: torch\nVersion: {version}\n\nA description.\n")
    return str(folder)


@pytest.fixture
def installed(monkeypatch, tmp_path):
    """Put a fake torch's metadata first on sys.path; the lookups are memoised, so clear them."""
    def install(version):
        folder = tmp_path / version
        monkeypatch.setattr(sys, "path", [_fake_torch(folder, version)] if version else [str(tmp_path)])
        TV.installed_torch.cache_clear()
        TV.default_torch_version.cache_clear()
    yield install
    TV.installed_torch.cache_clear()
    TV.default_torch_version.cache_clear()


def test_the_default_is_the_installed_torch_read_from_its_metadata(installed):
    installed("2.11.0+cu130")
    assert TV.installed_torch() == "2.11.0+cu130"
    assert TV.default_torch_version() == ("2.11", "the installed torch 2.11.0+cu130 (package metadata)")
    s = Settings()
    assert (s.torch_version, s.torch_version_from) == ("2.11", "the installed torch 2.11.0+cu130 (package metadata)")
    assert rows(check_source(CONFIG_COPY)) == [(12, "CL207"), (14, "CL207"), (15, "CL101")]


def test_an_unmeasured_torch_is_judged_by_the_newest_measured_one_before_it(installed):
    installed("2.12.1")
    assert TV.default_torch_version() == ("2.11", "the installed torch 2.12.1 (package metadata): judged by "
                                                  "the measured 2.11")
    installed("2.20.0")
    assert TV.default_torch_version()[0] == "2.13"
    installed("2.4.1")
    assert TV.default_torch_version()[0] == "2.11"  # older than any measured: the oldest


def test_without_torch_the_newest_measured_version(installed):
    installed("")
    assert TV.installed_torch() is None
    assert TV.default_torch_version() == ("2.13", "no torch installed: the newest measured version")


def test_an_explicit_setting_wins_and_says_so():
    assert Settings(torch_version="2.11").torch_version_from in ("given by the caller",
                                                                 TV.default_torch_version()[1])


@pytest.mark.slow
def test_show_settings_prints_the_version_and_where_it_came_from(tmp_path):
    (tmp_path / "m.py").write_text("x = 1\n")
    fake = _fake_torch(tmp_path / "site", "2.11.0")
    env = dict(os.environ, PYTHONPATH=fake)

    def shown(*args, config=""):
        (tmp_path / "pyproject.toml").write_text(f"[tool.compilelint]\n{config}")
        out = subprocess.run([sys.executable, "-m", "compilelint", "check", "m.py", "--show-settings", *args],
                             cwd=tmp_path, capture_output=True, text=True, env=env).stdout
        return next(line for line in out.splitlines() if line.startswith("torch-version"))

    assert shown() == 'torch-version = "2.11"  # from the installed torch 2.11.0 (package metadata)'
    assert shown("--torch-version", "2.13") == 'torch-version = "2.13"  # from --torch-version'
    assert shown(config='torch-version = "2.13"\n').startswith('torch-version = "2.13"  # from [tool.compilelint] in ')


def test_behaviours_hold_from_their_measured_versions():
    assert TV.holds("deepcopy-breaks-on-any-value", "2.11")
    assert not TV.holds("deepcopy-breaks-on-any-value", "2.13")
    assert not TV.holds("deepcopy-breaks-on-any-value", "2.14")
    with pytest.raises(KeyError):
        TV.holds("no-such-behaviour", "2.13")


def test_every_behaviour_says_what_and_where_it_was_measured():
    for name, row in TV.behaviours().items():
        assert row.get("what") and row.get("measured"), name
        if "table" in row:  # measured call by call: a table for every measured version
            assert all(TV.measured_table(row["table"], v) for v in KNOWN_TORCH_VERSIONS), name
            continue
        bounds = [row[k] for k in ("since", "before") if k in row]
        assert bounds and all(b in KNOWN_TORCH_VERSIONS for b in bounds), name
        assert {TV.holds(name, v) for v in KNOWN_TORCH_VERSIONS} == {True, False}, f"{name} differs nowhere"


# A module-level helper answering from the NumPy bounds of an object it is handed (CL106): its
# `assume_constant_result` fix compiles on torch 2.13, and on 2.11 fails to compile with such an
# object (bench/fix: truth-gpu-breadth-r4a), so it is offered only where it works.
NUMPY_HELPER = """\
import numpy as np
import torch
from torch import nn


class Space:
    def __init__(self, low, high):
        self.low, self.high = np.asarray(low, dtype=np.float32), np.asarray(high, dtype=np.float32)


def is_scaled(space: Space) -> bool:
    outside = np.any(space.low != 0) or np.any(space.high != 255)
    return not outside


class Policy(nn.Module):
    def __init__(self, space):
        super().__init__()
        self.space = space

    def forward(self, x):
        if is_scaled(self.space):
            return x / 255.0
        return x
"""


def test_a_fix_is_offered_only_on_a_torch_where_it_works_else_its_fallback():
    def fixes(version):
        return {f.code: f.fix for f in check_source(NUMPY_HELPER, torch_version=version).findings}

    new, old = fixes("2.13"), fixes("2.11")
    assert new.get("CL106") is not None and new["CL106"].behaviour == "assume-constant-result-takes-objects"
    assert "assume_constant_result" in new["CL106"].edits[-1].content
    # On 2.11 that rewrite would not compile: the one it names instead (`Fix.otherwise`) is offered, a
    # helper run in Python under compile (one break per call instead of the NumPy branches inside it).
    assert "CL106" in old and old["CL106"] is not None and not old["CL106"].behaviour
    assert old["CL106"].edits[-1].content.startswith("@torch.compiler.disable")
