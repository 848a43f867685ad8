"""The engine's shortcuts (prefilter, cache, process pool) never change what is found."""
import json
import os
import shutil
import subprocess
import sys

import pytest


from compilelint.config import Settings
from compilelint.engine import check_paths

from conftest import FIXTURES

CORPUS = [os.path.join(FIXTURES, d) for d in ("catalogue", "regions")]


def _keys(report):
    return sorted((f.path, f.span.row, f.span.col, f.code, f.message, f.region and f.region.reason)
                  for f in report.findings)


def test_prefilter_pool_and_cache_agree_with_the_plain_run(tmp_path):
    plain = check_paths(CORPUS, Settings(named_alone=True, cache=False, prefilter=False, jobs=1, select=["ALL"]))
    assert plain.findings, "the fixtures must produce findings for this comparison to mean anything"
    fast = check_paths(CORPUS, Settings(named_alone=True, cache=False, prefilter=True, jobs=2, select=["ALL"]))
    assert _keys(fast) == _keys(plain)
    cache_dir = str(tmp_path / "cache")
    cold = check_paths(CORPUS, Settings(named_alone=True, cache=True, cache_dir=cache_dir, select=["ALL"]))
    warm = check_paths(CORPUS, Settings(named_alone=True, cache=True, cache_dir=cache_dir, select=["ALL"]))
    assert _keys(cold) == _keys(plain) == _keys(warm)


def test_cache_survives_truncated_entries(tmp_path):
    cache_dir = tmp_path / "cache"
    first = check_paths(CORPUS, Settings(named_alone=True, cache=True, cache_dir=str(cache_dir)))
    entries = [p for p in cache_dir.rglob("*") if p.is_file() and p.name != ".gitignore"]
    assert entries
    for p in entries:
        p.write_bytes(p.read_bytes()[:7])  # truncated by a crash
    again = check_paths(CORPUS, Settings(named_alone=True, cache=True, cache_dir=str(cache_dir)))
    assert _keys(again) == _keys(first)
    assert (cache_dir / ".gitignore").read_text().strip().endswith("*")


def test_changed_file_is_rechecked(tmp_path):
    src = tmp_path / "m.py"
    src.write_text("import torch\n\n@torch.compile\ndef f(x):\n    return x\n")
    settings = Settings(cache=True, cache_dir=str(tmp_path / "c"))
    assert not check_paths([str(src)], settings).findings
    src.write_text("import torch\n\n@torch.compile\ndef f(x):\n    print(x)\n    return x\n")
    assert [f.code for f in check_paths([str(src)], settings).findings] == ["CL201"]


@pytest.mark.slow
def test_two_concurrent_runs_agree_and_leave_a_valid_cache(tmp_path):
    tree = tmp_path / "tree"
    shutil.copytree(os.path.join(FIXTURES, "catalogue"), tree)
    cmd = [sys.executable, "-m", "compilelint", "check", str(tree), "--output-format", "json",
           "--cache-dir", str(tmp_path / "cache"), "--exit-zero"]
    procs = [subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE) for _ in range(2)]
    outs = [p.communicate(timeout=120) for p in procs]
    assert all(p.returncode == 0 for p in procs), [o[1] for o in outs]
    a, b = (json.loads(o[0]) for o in outs)
    assert a == b and a
    third = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
    assert json.loads(third.stdout) == a
    _assert_valid_cache(tmp_path / "cache", [str(p) for p in tree.rglob("*.py")])


def _assert_valid_cache(cache_dir, paths):
    """Every entry loads and equals a fresh analysis of its file; no temporary files are left."""
    from compilelint.cache import Cache
    from compilelint.engine import analyze_bytes
    from compilelint.analysis.names import module_name_for

    files = [p for p in cache_dir.rglob("*") if p.is_file() and p.name != ".gitignore"]
    assert not [p for p in files if p.name.startswith(".tmp-")], "a temporary cache file was left"
    cache = Cache(str(cache_dir))
    assert {p.parent.parent for p in files} == {cache_dir / os.path.basename(cache.directory)}
    for path in paths:
        with open(path, "rb") as f:
            data = f.read()
        entry = cache.get(Cache.key(data, module_name_for(path), path, True))
        assert entry is not None, f"no valid cache entry for {path}"
        status, fresh = analyze_bytes(path, data)
        assert status == "ok"
        entry.path = path
        assert entry == fresh, f"stale or corrupt cache entry for {path}"


@pytest.mark.slow
def test_concurrent_runs_with_a_cold_cache_on_a_larger_tree(tmp_path):
    """Four processes (each with its own process pool) fill the same cold cache at once."""
    tree = tmp_path / "tree"
    for sub in ("catalogue", "regions", "fix"):
        shutil.copytree(os.path.join(FIXTURES, sub), tree / sub)
    cmd = [sys.executable, "-m", "compilelint", "check", str(tree), "--output-format", "json", "--select", "ALL",
           "--cache-dir", str(tmp_path / "cache"), "--exit-zero", "-j", "2"]
    procs = [subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE) for _ in range(4)]
    outs = [p.communicate(timeout=180) for p in procs]
    assert all(p.returncode == 0 for p in procs), [o[1] for o in outs]
    results = [json.loads(o[0]) for o in outs]
    assert results[0] and all(r == results[0] for r in results)
    uncached = subprocess.run(cmd + ["--no-cache"], capture_output=True, text=True, timeout=180)
    assert json.loads(uncached.stdout) == results[0]
    _assert_valid_cache(tmp_path / "cache", [str(p) for p in tree.rglob("*.py")])


@pytest.mark.slow
def test_check_never_imports_torch(tmp_path):
    code = ("import sys; from compilelint.cli import main; sys.argv=['compilelint','check','--no-cache',"
            f"{os.path.join(FIXTURES, 'catalogue')!r},'--exit-zero','-q'];\n"
            "try:\n    main()\nexcept SystemExit:\n    pass\n"
            "assert 'torch' not in sys.modules, 'check imported torch'\nprint('no torch')")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert "no torch" in out.stdout


def test_the_project_pass_leaves_no_cycles_holding_summaries():
    """The index, constructor-argument flow (regions/builder_returns) and the module-settings
    deciders (precision/config_layerdrop) are freed by reference counting: a cycle through the
    project index would leave every summary to the cyclic collector (0.25 s in a 3,231-file
    checkout, on each run that loads the summaries)."""
    import gc

    from compilelint.project_pass.regions import Project
    from compilelint.summary import FileSummary

    paths = [os.path.join(FIXTURES, d) for d in ("regions", "precision")]
    gc.collect()
    gc.disable()
    try:
        check_paths(paths, Settings(named_alone=True, cache=False, jobs=1, select=["ALL"]))
        gc.set_debug(gc.DEBUG_SAVEALL)
        gc.collect()
        held = [type(o).__name__ for o in gc.garbage if isinstance(o, (Project, FileSummary))]
    finally:
        gc.set_debug(0)
        gc.garbage.clear()
        gc.enable()
    assert held == []


def test_files_of_one_content_and_module_name_keep_their_own_paths(write_tree, monkeypatch, tmp_path):
    """Two copies of a package share their summaries' cache entries (the same bytes, module name
    and file name); read back at once (`Cache.get_many`), each file keeps its own path."""
    source = "import torch\n\n\n@torch.compile\ndef run(x):\n    return x.item()\n"
    tree = write_tree({f"{copy}/pkg/{name}": text for copy in ("one", "two")
                       for name, text in (("__init__.py", ""), ("m.py", source))})
    monkeypatch.chdir(tree)
    settings = dict(named_alone=True, cache=True, cache_dir=str(tmp_path / "cache"))
    paths = ["one/pkg/m.py", "two/pkg/m.py"]
    cold = check_paths(paths, Settings(**settings))
    (tree / "one" / "pkg" / "unrelated.py").write_text("X = 1\n")  # the run's own result is not reused
    warm = check_paths(paths + ["one/pkg/unrelated.py"], Settings(**settings))
    assert sorted(f.path for f in warm.findings) == sorted(f.path for f in cold.findings) == paths


def test_a_files_analysis_leaves_no_cycles_holding_its_tree():
    """The bindings the call sites keep call back into them (what a call of the file returns):
    left as a cycle, every file's tree and facts waited for the cyclic collector (a tenth of the
    per-file time on vLLM's sources). Nor may a recursive closure of the per-class or per-function
    passes (the `if`s of `__init__`, an assignment's branches) hold a class's subtree."""
    import ast
    import gc

    from compilelint.analysis.facts import FileFacts
    from compilelint.engine import analyze_bytes

    source = (b"import torch\n\n\ndef should_stop(x):\n    return (x.abs() > 10).all()\n\n\n"
              b"class M(torch.nn.Module):\n    def __init__(self, kind='a', wide=False):\n        super().__init__()\n"
              b"        if kind == 'a':\n            self.proj = torch.nn.Linear(2, 2)\n"
              b"        elif wide:\n            self.proj = torch.nn.Linear(4, 4) if kind else None\n\n"
              b"    def forward(self, x):\n        if should_stop(x):\n            y = x + 1\n"
              b"            return y\n        return self.step(x)\n\n    def step(self, x):\n        return x * 2\n")
    gc.collect()
    gc.disable()
    try:
        status, _ = analyze_bytes("m.py", source)
        gc.set_debug(gc.DEBUG_SAVEALL)
        gc.collect()
        held = [type(o).__name__ for o in gc.garbage if isinstance(o, (FileFacts, ast.AST))]
    finally:
        gc.set_debug(0)
        gc.garbage.clear()
        gc.enable()
    assert status == "ok" and held == []


def test_classes_that_name_themselves_as_bases_are_walked_once(tmp_path):
    """`class Layer(Layer):` derives from an imported Layer, and a file that redefines classes can
    name them in a cycle (`class A(B)` after `class B(A)`): looking for a `self.name(...)` callee
    among a class's in-file bases walked them forever (a speculative-decoding model file hung the
    whole check). Run in a child so that a loop fails the test instead of hanging it."""
    source = ("import torch\nfrom elsewhere import Layer\n\n\n"
              "class Layer(Layer):\n    def forward(self, x):\n        y = self.inherited(x)\n        return y\n\n\n"
              "class A(torch.nn.Module):\n    pass\n\n\nclass B(A):\n    pass\n\n\n"
              "class A(B):\n    def forward(self, x):\n        y = self.missing(x)\n        return y\n\n\n"
              "class M(torch.nn.Module):\n    def forward(self, x):\n"
              "        return self.missing(x) + torch.bincount(x).tolist()[0]\n")
    (tmp_path / "m.py").write_text(source)
    code = ("import sys\nfrom compilelint.config import Settings\nfrom compilelint.engine import check_paths\n"
            "report = check_paths([sys.argv[1]], Settings(named_alone=True, cache=False, jobs=1))\n"
            "print(report.errors, sorted(f.code for f in report.findings))\n")
    out = subprocess.run([sys.executable, "-c", code, str(tmp_path / "m.py")], capture_output=True,
                         text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "[] ['CL103', 'CL301']"


def test_an_edited_data_table_changes_the_cache_fingerprint():
    """A measured table (compilelint/data/*.json, *.toml) decides findings as a rule does: editing
    one must not let a run read entries cached under the old one."""
    import os

    import compilelint
    from compilelint.cache import _code_fingerprint

    before = _code_fingerprint()
    table = os.path.join(os.path.dirname(compilelint.__file__), "data", "library_calls-2.13.json")
    st = os.stat(table)
    try:
        os.utime(table, ns=(st.st_atime_ns, st.st_mtime_ns + 1_000_000))
        assert _code_fingerprint() != before
    finally:
        os.utime(table, ns=(st.st_atime_ns, st.st_mtime_ns))
    assert _code_fingerprint() == before


def test_a_run_without_a_cache_leaves_out_only_rules_whose_candidates_nothing_reads(tmp_path):
    """`unasked_rules`: a run that keeps no summary skips the rules no file's settings enable, breaks
    aside (their candidates decide where a frame is skipped); what it finds is what a run that
    keeps every rule's candidates finds, under the default selection (a recompile rule off) and
    under one that turns that rule on."""
    from compilelint.engine import unasked_rules
    from compilelint.rule import registry

    default = Settings(named_alone=True, cache=False, jobs=1)
    unasked = unasked_rules([os.path.join(FIXTURES, "catalogue", "x.py")], default)
    assert "CL405" in unasked and unasked and all(registry()[c].kind != "break" for c in unasked)
    assert not unasked_rules([os.path.join(FIXTURES, "catalogue", "x.py")], Settings(select=["ALL"]))
    for n, select in enumerate((None, ["CL405"], ["CL4"])):
        fresh = check_paths(CORPUS, Settings(named_alone=True, cache=False, jobs=1, select=select))
        kept = check_paths(CORPUS, Settings(named_alone=True, cache=True, cache_dir=str(tmp_path / str(n)), jobs=1,
                                            select=select))
        assert fresh.findings and _keys(fresh) == _keys(kept)
        assert any(f.code == "CL405" for f in fresh.findings) == (select is not None)
