"""The last project pass reused after an edit (`pass_memo`): whatever the edit, a cached run after
it finds what a run from scratch finds, and the pass runs again unless the edit left every summary
it read as it was."""
import os
import shutil
import subprocess

import pytest

import compilelint.engine as engine
from compilelint.config import Settings, settings_for
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
    # a line added above the finding moves it: only the rows differ, the pass's findings move with them
    (repo / "helpers.py").write_text("# moved\n" + HELPERS)
    del passes[:]
    moved, scratch = both(["helpers.py"], cache_dir)
    assert moved == scratch and moved[0][1] == first[0][1] + 1 and len(passes) == 1


def test_a_cache_copied_to_another_cache_dir_keeps_its_pass(repo, tmp_path, passes):
    """`--cache-dir` and `--jobs` decide where and how a run works, not what it reports: the
    kept pass and run of a cache copied elsewhere still answer (the memo's key held the path)."""
    first_dir, copy_dir = str(tmp_path / "first"), str(tmp_path / "copy")
    def cli(cache_dir, jobs):
        return check_paths(["helpers.py"], settings_for(["helpers.py"], cache_dir=cache_dir, jobs=jobs))
    first = found(cli(first_dir, 1))
    shutil.copytree(first_dir, copy_dir)
    del passes[:]
    assert found(cli(copy_dir, 2)) == first and passes == []  # the copy's run stands
    (repo / "run.py").write_text(RUN + "# a comment at the end\n")
    del passes[:]
    assert found(cli(copy_dir, 2)) == first and passes == []  # its kept pass stands too


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


@pytest.mark.parametrize("edit, reused", [
    # the comment in QuietAttention.forward only: the pass read DroppingAttention.forward's lines alone
    (lambda t: t.replace("is_updated = False", "is_updated = False  # not yet", 1), True),
    # a line inside QuietDecoder.__init__, above them: they moved as a whole, and the findings with them
    (lambda t: t.replace("        self.layers = nn.ModuleList([QuietAttention",
                         "        unused = 1\n        self.layers = nn.ModuleList([QuietAttention"), True),
    # the same inside DroppingAttention.forward: lines it read moved apart
    (lambda t: t.replace("        return self.proj(x)\n", "        unused = 1\n        return self.proj(x)\n"), False),
])
def test_a_parsed_file_edited_outside_the_functions_the_pass_read(write_tree, monkeypatch, tmp_path, passes,
                                                                  edit, reused):
    tree = write_tree({})
    shutil.copy(os.path.join(FIXTURES, "precision", "frames_by_default_config.py"), tree / "model.py")
    subprocess.run(["git", "init", "-q"], cwd=str(tree), check=True)
    monkeypatch.chdir(tree)
    cache_dir = str(tmp_path / "cache")
    first, scratch = both(["model.py"], cache_dir)
    assert first == scratch and "CL412" in [f[3] for f in first]
    text = (tree / "model.py").read_text()
    (tree / "model.py").write_text(edit(text))
    assert (tree / "model.py").read_text() != text
    del passes[:]
    again, scratch = both(["model.py"], cache_dir)
    assert again == scratch and len(passes) == (1 if reused else 2)
    # and back: the kept questions moved with the text, so undoing the edit reuses the pass too
    (tree / "model.py").write_text(text)
    del passes[:]
    back, scratch = both(["model.py"], cache_dir)
    assert back == scratch == first and len(passes) == (1 if reused else 2)


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


BODY = """\
import logging

import torch

logger = logging.getLogger(__name__)


def scale(x):
    y = x.abs()
    return x / y.max().item()


def warn(x):
    for i in range(2):
        x = x + i
    logger.warning("twice")
    return x


def quiet(x):
    return x.sum().item()  # noqa: CL101


@torch.compile
def run(x):
    return warn(scale(x)) + quiet(x)
"""


def full(report):
    """Every field of every finding, its fix's edits included."""
    return [(f.path, f.span, f.code, f.message, f.noqa_row, f.region, f.fix, f.function) for f in report.findings]


def body_checked(repo, cache_dir, text):
    (repo / "body.py").write_text(text)
    cached = check_paths(["body.py"], Settings(cache=True, cache_dir=cache_dir))
    scratch = check_paths(["body.py"], Settings(cache=False))
    assert full(cached) == full(scratch)
    return full(cached)


def test_lines_moved_inside_a_function_reuse_the_pass_with_its_findings_moved(repo, tmp_path, passes):
    """A local assignment the analysis records nothing about, added inside `scale` above both
    findings (one with a fix, a noqa below them): the findings, their fix and the noqa move."""
    cache_dir = str(tmp_path / "cache")
    first = body_checked(repo, cache_dir, BODY)
    assert [(f[2], f[1].row) for f in first] == [("CL101", 10), ("CL202", 16)] and first[1][6] is not None
    del passes[:]
    grown = body_checked(repo, cache_dir, BODY.replace("    y = x.abs()\n", "    y = x.abs()\n    unused = 1\n\n"))
    assert [f[1].row for f in grown] == [12, 18] and len(passes) == 1  # the run from scratch's only
    assert grown[1][6].edits[0].span.row == first[1][6].edits[0].span.row + 2
    # a line removed
    del passes[:]
    shrunk = body_checked(repo, cache_dir, BODY.replace("    y = x.abs()\n", "    y = x.abs()\n    unused = 1\n"))
    assert [f[1].row for f in shrunk] == [11, 17] and len(passes) == 1
    # that line removed and one added in `warn`, below the first finding: two points, the pass runs
    del passes[:]
    both_ways = body_checked(repo, cache_dir, BODY.replace('    logger.warning("twice")\n',
                                                           '    logger.warning("twice")\n    unused = 1\n'))
    assert [f[1].row for f in both_ways] == [10, 16] and len(passes) == 2


@pytest.mark.parametrize("edit", [
    ("    y = x.abs()\n", "    y = x.abs()\n    print(y)\n"),  # a break inside a reached function
    ("    return x / y.max().item()\n", "    return x / y.max()\n"),  # a finding's call gone
    ("    return x.sum().item()  # noqa: CL101\n", "    x = x.sum()\n    return x.item()  # noqa: CL101\n"),
    ("def quiet(x):\n", "@torch.no_grad()\ndef quiet(x):\n"),  # a decorator
    ("    y = x.abs()\n", "    y = warn(x)\n"),  # a call: what it reaches
    ("    return x\n", "    return torch.nn.Linear(2, 2)\n"),  # what warn returns
    ('    logger.warning("twice")\n', '        logger.warning("twice")\n'),  # a break into the loop
    ("def warn(x):\n", "def warn(x, times=2):\n"),  # its parameters
    ("def scale(x):\n", "def scale(x) -> torch.Tensor:\n"),  # its return annotation
])
def test_an_edit_inside_a_function_the_summary_shows_runs_the_pass(repo, tmp_path, passes, edit):
    cache_dir = str(tmp_path / "cache")
    body_checked(repo, cache_dir, BODY)
    del passes[:]
    old, new = edit
    assert old in BODY
    body_checked(repo, cache_dir, BODY.replace(old, new))
    assert len(passes) == 2  # the cached run's and the run from scratch's


UNREACHED = BODY + """

def report(x):
    total = x.sum()
    return total
"""


@pytest.mark.parametrize("edit, reused", [
    (("    total = x.sum()\n", "    total = x.sum()\n    print(total)\n"), True),  # a break nothing compiled runs
    (("    total = x.sum()\n", "    total = x.sum().item()\n"), True),
    (("    total = x.sum()\n", "    total = scale(x)\n"), False),  # a call: the call graph changed
    (("    total = x.sum()\n", "    total = x.sum()  # noqa: CL101\n"), False),  # the noqa table changed
    (("    y = x.abs()\n", "    y = x.abs()\n    print(y)\n"), False),  # a break in a reached function
])
def test_an_edit_inside_a_function_nothing_compiled_reaches(repo, tmp_path, passes, edit, reused):
    """Candidates of a function the pass did not reach yield nothing: the pass stands (findings
    below the edit moved) while the call graph and everything else but rows stayed."""
    cache_dir = str(tmp_path / "cache")
    body_checked(repo, cache_dir, UNREACHED)
    del passes[:]
    body_checked(repo, cache_dir, UNREACHED.replace(*edit))
    assert len(passes) == (1 if reused else 2)


def test_a_function_edited_while_unreached_and_then_reached(repo, tmp_path, passes):
    cache_dir = str(tmp_path / "cache")
    body_checked(repo, cache_dir, UNREACHED)
    edited = UNREACHED.replace("    total = x.sum()\n", "    total = x.sum()\n    print(total)\n")
    del passes[:]
    assert len(body_checked(repo, cache_dir, edited)) == 2 and len(passes) == 1  # scale's and warn's
    del passes[:]
    reached = body_checked(repo, cache_dir, edited.replace("quiet(x)\n", "quiet(x) + report(x)\n"))
    assert len(passes) == 2 and len(reached) == 3  # the print, now compiled, is found


def test_two_files_edited_at_once_one_moved_one_added_to(repo, tmp_path, passes):
    cache_dir = str(tmp_path / "cache")
    (repo / "body.py").write_text(BODY)
    first, _ = both(["body.py", "helpers.py"], cache_dir)
    (repo / "body.py").write_text(BODY.replace("    y = x.abs()\n", "    y = x.abs()\n    unused = 1\n"))
    (repo / "helpers.py").write_text(HELPERS + HELPER_ADDED)
    del passes[:]
    again, scratch = both(["body.py", "helpers.py"], cache_dir)
    assert again == scratch and len(passes) == 1
    assert [f[1] for f in again if f[0] == "body.py"] == [f[1] + 1 for f in first if f[0] == "body.py"]


CLASS = """\
import torch


class Block(torch.nn.Module):
    def __init__(self, config):
        super().__init__()
        self.proj = torch.nn.Linear(4, 4)
        if config.gated:
            self.gate = torch.nn.Linear(4, 4)
        else:
            self.gate = None

    @torch.compile
    def forward(self, x):
        x = self.proj(x)
        if self.gate is not None:
            x = self.gate(x)
        return x.sum().item()
"""


@pytest.mark.parametrize("edit, reused", [
    (("        super().__init__()\n", "        super().__init__()\n        width = 4\n"), True),  # branch rows move
    (("        super().__init__()\n", "        super().__init__()\n        self.width = 4\n"), False),  # an attribute
    (("            self.gate = None\n", "            self.gate = torch.nn.Identity()\n"), False),
])
def test_an_edit_inside_a_constructor(repo, tmp_path, passes, edit, reused):
    cache_dir = str(tmp_path / "cache")
    body_checked(repo, cache_dir, CLASS)
    del passes[:]
    body_checked(repo, cache_dir, CLASS.replace(*edit))
    assert len(passes) == (1 if reused else 2)


@pytest.mark.parametrize("length", [5, 50, 65, 97, 122, 300])
def test_names_in_finds_a_name_at_either_end_of_a_string_of_any_length(length):
    """A pickle writes a short string's length as one byte (`a` for 97) and a letter opcode after
    it: a name read from there would run into them. The names come from the repr."""
    from compilelint.summary_change import names_in
    from compilelint.summary import FileSummary
    padding = "x" * max(0, length - len("later.") - len(".first"))
    summary = FileSummary("m.py", "m", aliases={"a": f"later.{padding}.first", "b": "line\nafter"})
    assert {"later", "first", "after", "line"} <= names_in(summary)


def _kept_name_counts(cache_dir):
    """The name counts the kept pass holds (`NameCounts`), counted, and a count over every summary."""
    import glob
    import pickle
    from collections import Counter

    from compilelint.cache import Cache
    from compilelint.pass_memo import NameCounts
    from compilelint.summary_change import names_in

    [entry] = glob.glob(os.path.join(cache_dir, "*", "pa", "pass-*"))
    with open(entry, "rb") as f:
        kept = pickle.load(f)
    counted = NameCounts(Cache(cache_dir), kept[4]).counted()
    files = sorted(p for p in os.listdir(".") if p.endswith(".py"))
    summaries, _ = engine.analyze_files(files, Settings(cache=False))
    every = Counter()
    for summary in summaries:
        every.update(names_in(summary))
    return (None if counted is None else +counted), +every, len(kept[4][1])


def test_name_counts_noted_as_changes_count_what_every_summary_holds(repo, tmp_path, passes, monkeypatch):
    """The kept pass holds a table of name counts and the summaries changed since (`NameCounts`),
    counted only when a run asks (a function appended): after edits that reuse the pass and edits
    that run it, past the changes a memo notes before it writes a new table, the counts are those of
    every summary, and the findings a run's from scratch; a table gone from the cache runs the pass."""
    from compilelint.pass_memo import NameCounts

    monkeypatch.setattr(NameCounts, "MAX_CHANGES", 2)
    cache_dir = str(tmp_path / "cache")
    both(["helpers.py"], cache_dir)
    noted = []
    for i in range(4):
        added = "".join(f"\n\ndef added_{j}(x):\n    return x\n" for j in range(i + 1))
        (repo / "helpers.py").write_text(HELPERS + added)  # a function appended: the counts asked
        del passes[:]
        again, scratch = both(["helpers.py"], cache_dir)
        assert again == scratch and len(passes) == 1
        counted, every, changes = _kept_name_counts(cache_dir)
        assert counted == every
        noted.append(changes)
        # a break in the compiled function: the pass runs, the change noted
        (repo / "run.py").write_text(RUN.replace("return scale(x)", "print(%d)\n    return scale(x)" % i))
        del passes[:]
        again, scratch = both(["helpers.py"], cache_dir)
        assert again == scratch and len(passes) == 2
        counted, every, changes = _kept_name_counts(cache_dir)
        assert counted == every
        noted.append(changes)
    assert max(noted) <= 3 and 0 in noted  # a new table once past MAX_CHANGES
    for folder, _, names in os.walk(cache_dir):  # the tables gone: the next added function runs the pass
        for name in names:
            if name.startswith("names-"):
                os.unlink(os.path.join(folder, name))
    (repo / "helpers.py").write_text(HELPERS + HELPER_ADDED)
    del passes[:]
    again, scratch = both(["helpers.py"], cache_dir)
    assert again == scratch and len(passes) == 2
    counted, every, _ = _kept_name_counts(cache_dir)
    assert counted == every  # the pass counted every summary again
