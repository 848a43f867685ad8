"""Fuzzing: `check` never hits an internal error, and `--fix --unsafe-fixes` output always re-parses,
is idempotent, and leaves files it has nothing to fix byte-identical.

Inputs:

* generated valid Python (`hypothesmith`: from the grammar, and from libcst nodes), as a module and
  indented into the body of a `@torch.compile`d function (so the compiled-region analysis and every
  rule see it);
* real model files (`fixtures/catalogue`, `fixtures/regions`, `fixtures/fix`) with random lines
  deleted, duplicated, swapped or cut short; also a mutated file inside the cross-file package.

The number of examples is bounded for CI (the whole module runs in about 25 s on 2 cores). For a
longer run set COMPILELINT_FUZZ_EXAMPLES (examples per test), e.g.

    COMPILELINT_FUZZ_EXAMPLES=2000 .venv/bin/python -m pytest tests/test_fuzz.py -q

and COMPILELINT_FUZZ_SEED to replay another derandomized sequence (CI runs are derandomized, so a
failure in CI reproduces locally with the same command).
"""
import os
import shutil
import tempfile
import textwrap
import warnings

import hypothesmith
import pytest
from hypothesis import HealthCheck, given, seed, settings, strategies as st

from compilelint.config import Settings
from compilelint.engine import analyze_bytes, check_paths, project_findings
from compilelint.fix_files import applicable, run_fixes
from compilelint.source import decode

from conftest import FIXTURES

pytestmark = pytest.mark.slow  # end to end (CLI subprocesses, Dynamo runs, fuzzing): seconds a test

LONG = int(os.environ.get("COMPILELINT_FUZZ_EXAMPLES", "0"))
SEED = int(os.environ.get("COMPILELINT_FUZZ_SEED", "0"))


def fuzz_settings(ci_examples: int):
    return settings(max_examples=LONG or ci_examples, deadline=None, derandomize=not SEED, database=None,
                    suppress_health_check=list(HealthCheck))


def _seeded(fn):
    return seed(SEED)(fn) if SEED else fn


def _model_files():
    out = []
    for sub in ("catalogue", "regions", "fix"):
        folder = os.path.join(FIXTURES, sub)
        for name in sorted(os.listdir(folder)):
            if name.endswith(".py") and not name.endswith((".fixed.py", ".unsafe-fixed.py")):
                out.append(os.path.join(folder, name))
    return out


MODEL_FILES = _model_files()
CROSSFILE = os.path.join(FIXTURES, "regions", "crossfile")
ALL = dict(select=["ALL"])


# ----- properties ------------------------------------------------------------------------------------
def assert_no_internal_error(report, where=""):
    bad = [f"{e.path}: {e.message}" for e in report.errors if "internal error" in e.message]
    assert not bad, f"{where}\n" + "\n".join(bad)


def check_bytes(data: bytes, name: str = "m.py"):
    """analyze_bytes with and without the prefilter, then the project pass with every function a root."""
    summaries = []
    for prefilter in (True, False):
        status, value = analyze_bytes(name, data, prefilter=prefilter)
        assert status == "ok" or "internal error" not in value, value
        if status == "ok":
            summaries = [value]
    for scope in ("modules", "all"):
        project_findings(summaries, Settings(cache=False, scope=scope, **ALL))
        project_findings(summaries, Settings(cache=False, scope=scope, profile="vllm", **ALL))


def _parses(data: bytes) -> bool:
    try:
        text = decode("m.py", data).text
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            compile(text, "m.py", "exec", dont_inherit=True)
        return True
    except Exception:
        return False


def _fix(paths, folder):
    s = Settings(cache=False, jobs=1, **ALL)
    report = check_paths(paths, s)
    assert_no_internal_error(report)
    outcome = run_fixes(report, s, unsafe=True, write=True, add_noqa=False, paths=paths)
    internal = [m for m in outcome.messages if "internal error" in m]
    assert not internal, internal
    return report, outcome


def fix_roundtrip(files: dict, target: str):
    """Write {relative path: bytes}, run check + `--fix --unsafe-fixes` twice on the folder, and check
    the fix properties for every file."""
    with tempfile.TemporaryDirectory() as tmp:
        for rel, data in files.items():
            os.makedirs(os.path.dirname(os.path.join(tmp, rel)), exist_ok=True)
            with open(os.path.join(tmp, rel), "wb") as f:
                f.write(data)
        paths = [tmp]
        report, _ = _fix(paths, tmp)
        fixable = {f.path for f in report.findings if applicable(f.fix, True)}
        after = {}
        for rel, before in files.items():
            path = os.path.join(tmp, rel)
            with open(path, "rb") as f:
                now = f.read()
            after[rel] = now
            if path not in fixable:
                assert now == before, f"{rel}: nothing to fix, yet the file changed"
            elif now != before:
                assert _parses(now), f"{rel}: --fix wrote a file that does not parse:\n{now.decode('utf-8', 'replace')}"
                assert _parses(before), f"{rel}: --fix changed a file that did not parse"
                assert decode(path, now).newline == decode(path, before).newline, "line endings changed"
        _fix(paths, tmp)  # again: nothing left to do
        for rel in files:
            with open(os.path.join(tmp, rel), "rb") as f:
                again = f.read()
            assert again == after[rel], f"{rel}: --fix is not idempotent:\n--- first\n{after[rel].decode('utf-8', 'replace')}\n--- second\n{again.decode('utf-8', 'replace')}"


# ----- generated Python ----------------------------------------------------------------------------------
def _in_compiled_function(source: str) -> str:
    body = textwrap.indent(source, "    ", lambda line: True) if source.strip() else "    pass\n"
    return "import torch\n\n\n@torch.compile\ndef compiled(x, *args, **kwargs):\n" + body + "\n    return x\n"


@_seeded
@fuzz_settings(150)
@given(source=hypothesmith.from_grammar())
def test_generated_source_from_grammar(source):
    check_bytes(source.encode("utf-8", "surrogatepass"))
    wrapped = _in_compiled_function(source).encode("utf-8", "surrogatepass")
    check_bytes(wrapped)


@_seeded
@fuzz_settings(60)
@given(source=hypothesmith.from_node())
def test_generated_source_from_nodes(source):
    data = source.encode("utf-8", "surrogatepass")
    check_bytes(data)
    wrapped = _in_compiled_function(source).encode("utf-8", "surrogatepass")
    check_bytes(wrapped)
    if _parses(wrapped):
        fix_roundtrip({"m.py": wrapped}, "m.py")


# ----- mutated real model files ----------------------------------------------------------------------------
MUTATION = st.tuples(st.sampled_from(["delete", "duplicate", "swap", "cut", "splice", "indent", "dedent"]),
                     st.integers(0, 10_000), st.integers(0, 100_000))


def _all_model_lines():
    out = []
    for path in MODEL_FILES:
        with open(path, "rb") as f:
            out += [line for line in f.read().splitlines(keepends=True) if line.strip()]
    return out


MODEL_LINES = _all_model_lines()


def mutate(data: bytes, ops) -> bytes:
    """Delete, duplicate, swap or cut short lines; splice in a line of another model file; indent or
    dedent a line by four spaces."""
    lines = data.splitlines(keepends=True) or [b""]
    for op, i, j in ops:
        if op == "splice":
            lines.insert(i % (len(lines) + 1), MODEL_LINES[j % len(MODEL_LINES)])
            continue
        if op == "indent":
            lines[i % len(lines)] = b"    " + lines[i % len(lines)]
            continue
        if op == "dedent":
            line = lines[i % len(lines)]
            lines[i % len(lines)] = line[4:] if line.startswith(b"    ") else line
            continue
        i %= len(lines)
        j %= len(lines)
        if op == "delete" and len(lines) > 1:
            del lines[i]
        elif op == "duplicate":
            lines.insert(i, lines[i])
        elif op == "swap":
            lines[i], lines[j] = lines[j], lines[i]
        elif op == "cut":  # a line cut short, its ending kept
            line = lines[i]
            body = line.rstrip(b"\r\n")
            lines[i] = body[: j % (len(body) + 1)] + line[len(body):]
    return b"".join(lines)


@_seeded
@fuzz_settings(600)
@given(path=st.sampled_from(MODEL_FILES), ops=st.lists(MUTATION, min_size=1, max_size=6))
def test_mutated_model_files(path, ops):
    with open(path, "rb") as f:
        data = mutate(f.read(), ops)
    check_bytes(data, os.path.basename(path))
    fix_roundtrip({os.path.basename(path): data}, os.path.basename(path))


def _crossfile_files():
    out = {}
    for dirpath, _, names in os.walk(CROSSFILE):
        for name in names:
            if name.endswith(".py"):
                full = os.path.join(dirpath, name)
                with open(full, "rb") as f:
                    out[os.path.relpath(full, CROSSFILE)] = f.read()
    return out


CROSSFILE_FILES = _crossfile_files()


@_seeded
@fuzz_settings(150)
@given(rel=st.sampled_from(sorted(CROSSFILE_FILES)), ops=st.lists(MUTATION, min_size=1, max_size=4))
def test_mutated_file_in_a_package(rel, ops):
    files = dict(CROSSFILE_FILES)
    files[rel] = mutate(files[rel], ops)
    fix_roundtrip(files, rel)


def test_unmutated_fixtures_round_trip():
    """The properties hold on the fixtures themselves (and the fix ones do get fixed)."""
    changed = 0
    for path in MODEL_FILES:
        with open(path, "rb") as f:
            data = f.read()
        check_bytes(data, os.path.basename(path))
        with tempfile.TemporaryDirectory() as tmp:
            target = os.path.join(tmp, os.path.basename(path))
            shutil.copy(path, target)
            _fix([target], tmp)
            with open(target, "rb") as f:
                changed += f.read() != data
        fix_roundtrip({os.path.basename(path): data}, os.path.basename(path))
    assert changed >= 5, "the fix fixtures should be fixable: the round-trip checks would test nothing"


# ----- bytes: encodings, BOMs, line ends, garbage ----------------------------------------------------------
PREFIXES = [b"", b"\xef\xbb\xbf", b"# -*- coding: latin-1 -*-\n", b"# coding: utf-8\n", b"# coding: cp1252\r\n",
            b"\xef\xbb\xbf# coding: latin-1\n", b"# vim: set fileencoding=utf-16 :\n", b"#!/usr/bin/env python\n# coding: ascii\n"]
BYTE_EDIT = st.tuples(st.integers(0, 100_000), st.binary(min_size=0, max_size=4),
                      st.sampled_from([b"", b"\r", b"\r\n", b"\x0c", b"\xe9", b"\xc3", b"\0", "\u2028".encode(), b"\\"]))


@_seeded
@fuzz_settings(400)
@given(path=st.sampled_from(MODEL_FILES), prefix=st.sampled_from(PREFIXES), edits=st.lists(BYTE_EDIT, max_size=4),
       crlf=st.booleans())
def test_byte_level_mutations(path, prefix, edits, crlf):
    with open(path, "rb") as f:
        data = f.read()
    if crlf:
        data = data.replace(b"\r\n", b"\n").replace(b"\n", b"\r\n")
    data = prefix + data
    for at, junk, special in edits:
        at %= len(data) + 1
        data = data[:at] + junk + special + data[at:]
    check_bytes(data, os.path.basename(path))
    fix_roundtrip({os.path.basename(path): data}, os.path.basename(path))


@_seeded
@fuzz_settings(200)
@given(data=st.binary(max_size=2000))
def test_random_bytes(data):
    check_bytes(data)
