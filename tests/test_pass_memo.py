"""The last project pass reused after an edit (`pass_memo`): whatever the edit, a cached run after
it finds what a run from scratch finds, and the pass runs again unless the edit left every summary
it read as it was."""
import os
import shutil
import subprocess

import pytest

import compilelint.engine as engine
from compilelint.config import Settings
from compilelint.engine import check_paths

from conftest import FIXTURES

RUN = """\
import torch

from helpers import scale


@torch.compile
def run(x):
    return scale(x)
"""
HELPERS = """\
def scale(x):
    return x / x.abs().max().item()
"""


@pytest.fixture
def repo(write_tree, monkeypatch):
    files = {"run.py": RUN, "helpers.py": HELPERS}
    files.update({f"other_{i:02}.py": f"def f_{i}(x):\n    return x + {i}\n" for i in range(10)})
    tree = write_tree(files)
    subprocess.run(["git", "init", "-q"], cwd=str(tree), check=True)
    monkeypatch.chdir(tree)
    return tree


@pytest.fixture
def passes(monkeypatch):
    """How many project passes ran."""
    count = []
    real = engine.project_findings

    def counted(*args, **kwargs):
        count.append(1)
        return real(*args, **kwargs)

    monkeypatch.setattr(engine, "project_findings", counted)
    return count


def found(report):
    return sorted((f.path, f.span.row, f.span.col, f.code, f.message) for f in report.findings)


def both(paths, cache_dir):
    """(the cached run's findings, a run's from scratch)."""
    cached = check_paths(paths, Settings(cache=True, cache_dir=cache_dir))
    scratch = check_paths(paths, Settings(cache=False))
    assert (cached.errors, cached.files_checked) == (scratch.errors, scratch.files_checked)
    return found(cached), found(scratch)


def test_an_edit_that_changes_a_cross_file_finding_both_ways(repo, tmp_path, passes):
    cache_dir = str(tmp_path / "cache")
    first, scratch = both(["helpers.py"], cache_dir)
    assert first == scratch and [f[3] for f in first] == ["CL101"]
    # run.py no longer calls scale: helpers.py's finding goes (its own text did not change)
    (repo / "run.py").write_text(RUN.replace("return scale(x)", "return x * 2"))
    del passes[:]
    gone, scratch = both(["helpers.py"], cache_dir)
    assert gone == scratch == [] and len(passes) == 2  # the cached run made the pass again
    # and back: the finding returns
    (repo / "run.py").write_text(RUN)
    del passes[:]
    back, scratch = both(["helpers.py"], cache_dir)
    assert back == scratch == first and len(passes) == 2


def test_an_edit_the_summary_does_not_show_reuses_the_pass(repo, tmp_path, passes):
    cache_dir = str(tmp_path / "cache")
    first, _ = both(["run.py", "helpers.py"], cache_dir)
    (repo / "run.py").write_text(RUN + "# a comment at the end\n")
    (repo / "helpers.py").write_text(HELPERS.replace("def scale(x):", "def scale(x):  # normalise"))
    del passes[:]
    again, scratch = both(["run.py", "helpers.py"], cache_dir)
    assert again == scratch == first
    assert len(passes) == 1  # the run from scratch's only
    # a line added above the finding moves it: the summary differs, the pass runs
    (repo / "helpers.py").write_text("# moved\n" + HELPERS)
    del passes[:]
    moved, scratch = both(["helpers.py"], cache_dir)
    assert moved == scratch and moved[0][1] == first[0][1] + 1 and len(passes) == 2


def test_a_file_whose_text_the_pass_parsed_is_compared_by_its_text(write_tree, monkeypatch, tmp_path, passes):
    """The frames' questions parse this file's functions (the loop a break skips): a comment-only
    edit of it still makes the pass run again."""
    tree = write_tree({})
    shutil.copy(os.path.join(FIXTURES, "precision", "frames_by_default_config.py"), tree / "model.py")
    subprocess.run(["git", "init", "-q"], cwd=str(tree), check=True)
    monkeypatch.chdir(tree)
    cache_dir = str(tmp_path / "cache")
    first, scratch = both(["model.py"], cache_dir)
    assert first == scratch and "CL412" in [f[3] for f in first]
    text = (tree / "model.py").read_text()
    (tree / "model.py").write_text(text.replace("is_updated = False", "is_updated = False  # not yet"))
    del passes[:]
    again, scratch = both(["model.py"], cache_dir)
    assert again == scratch == first and len(passes) == 2


def test_a_file_added_or_broken_runs_the_pass(repo, tmp_path, passes):
    cache_dir = str(tmp_path / "cache")
    both(["helpers.py"], cache_dir)
    (repo / "broken.py").write_text("def f(:\n")
    del passes[:]
    with_broken, scratch = both(["helpers.py", "broken.py"], cache_dir)
    assert with_broken == scratch and len(passes) == 2
    (repo / "broken.py").write_text("def f(:\n# still broken\n")
    del passes[:]
    cached = check_paths(["broken.py"], Settings(cache=True, cache_dir=cache_dir))
    assert [e.path for e in cached.errors] == ["broken.py"] and len(passes) == 1


HELPER_ADDED = """

def later(x):
    return x.sum().item()
"""


def test_a_function_added_that_nothing_can_reach_reuses_the_pass(repo, tmp_path, passes):
    cache_dir = str(tmp_path / "cache")
    first, _ = both(["helpers.py"], cache_dir)
    (repo / "helpers.py").write_text(HELPERS + HELPER_ADDED)
    del passes[:]
    again, scratch = both(["helpers.py"], cache_dir)
    assert again == scratch == first and len(passes) == 1  # the run from scratch's only
    # a second one calling the first: neither is reached, the pass stands
    (repo / "helpers.py").write_text(HELPERS + HELPER_ADDED + "\n\ndef later_still(x):\n    return later(x)\n")
    del passes[:]
    again, scratch = both(["helpers.py"], cache_dir)
    assert again == scratch == first and len(passes) == 1
    # now the compiled function calls it: run.py's summary changed, the pass runs and finds its break
    (repo / "run.py").write_text(RUN.replace("from helpers import scale", "from helpers import scale, later_still")
                                 .replace("return scale(x)", "return later_still(scale(x))"))
    del passes[:]
    reached, scratch = both(["helpers.py"], cache_dir)
    assert reached == scratch and len(passes) == 2
    assert [f[1] for f in reached] == [2, 6]  # scale's .item() and the added later's


def test_an_added_function_a_call_already_named_is_reached(repo, tmp_path, passes):
    """run.py calls `later` before helpers.py defines it: the definition makes the call resolve."""
    cache_dir = str(tmp_path / "cache")
    (repo / "run.py").write_text(RUN.replace("from helpers import scale", "from helpers import scale, later")
                                 .replace("return scale(x)", "return later(scale(x))"))
    first, scratch = both(["helpers.py"], cache_dir)
    assert first == scratch and [f[1] for f in first] == [2]
    (repo / "helpers.py").write_text(HELPERS + HELPER_ADDED)
    del passes[:]
    added, scratch = both(["helpers.py"], cache_dir)
    assert added == scratch and [f[1] for f in added] == [2, 6] and len(passes) == 2


@pytest.mark.parametrize("text, scope", [
    ("\n\n@torch.compile\ndef later(x):\n    return x.sum().item()\n", "modules"),  # a root of its own
    (HELPER_ADDED, "all"),  # every function is a root
])
def test_an_added_function_that_is_a_root_is_reached(repo, tmp_path, passes, text, scope):
    cache_dir = str(tmp_path / "cache")
    (repo / "helpers.py").write_text("import torch\n" + HELPERS)
    settings = dict(scope=scope)
    first = found(check_paths(["helpers.py"], Settings(cache=True, cache_dir=cache_dir, **settings)))
    (repo / "helpers.py").write_text("import torch\n" + HELPERS + text)
    del passes[:]
    added = found(check_paths(["helpers.py"], Settings(cache=True, cache_dir=cache_dir, **settings)))
    scratch = found(check_paths(["helpers.py"], Settings(cache=False, **settings)))
    assert added == scratch and len(added) == len(first) + 1 and len(passes) == 2


@pytest.mark.parametrize("length", [5, 50, 65, 97, 122, 300])
def test_names_in_finds_a_name_at_either_end_of_a_string_of_any_length(length):
    """A pickle writes a short string's length as one byte (`a` for 97) and a letter opcode after
    it: a name read from there would run into them. The names come from the repr."""
    from compilelint.pass_memo import names_in
    from compilelint.summary import FileSummary
    padding = "x" * max(0, length - len("later.") - len(".first"))
    summary = FileSummary("m.py", "m", aliases={"a": f"later.{padding}.first", "b": "line\nafter"})
    assert {"later", "first", "after", "line"} <= names_in(summary)
