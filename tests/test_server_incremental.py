"""The language server's incremental re-analysis gives what a fresh full analysis gives.

`reparse` against `ast.parse`, `analyze_edit` against `engine.analyze_bytes` (fixes aside: the
server builds them on request), and a whole project kept by `ProjectContext` through edits of a
callee's file against `check`'s project pass over freshly analysed files."""
import ast
import dataclasses
import random
from pathlib import Path

import pytest

from compilelint.config import settings_for
from compilelint.engine import analyze_bytes, project_findings
from compilelint.server.incremental import analyze_edit
from compilelint.server.project import ProjectContext
from compilelint.server.reparse import reparse
from compilelint.source import lines_with_ends

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = sorted(p for folder in ("fixtures/regions", "fixtures/precision") for p in (ROOT / folder).glob("*.py"))
SNIPPETS = ["pass", "y = x.item()", "print(x)", "self.helper(x)", "z = (", "import numpy as np", "return x.sum()",
            "if x.any():", "    x = x + 1", "logger.info('%s', x)", "from torch import compile as c", "'''",
            "print(x)  # noqa: CL201", "s = '# noqa'", "# noqa"]


def _edits(text: str, seed: int, count: int):
    """`count` successive random edits of `text` (whole texts), like typing in several places; an
    edit that does not parse is yielded, and the next one starts again from the last that did."""
    rng = random.Random(seed)
    for _ in range(count):
        lines = list(lines_with_ends(text))
        for _ in range(rng.choice((1, 1, 2))):
            if not lines:
                break
            row = rng.randrange(len(lines))
            indent = lines[row][:len(lines[row]) - len(lines[row].lstrip())]
            op = rng.random()
            if op < 0.3:
                lines[row] = lines[row].rstrip("\n") + "  # typed\n"
            elif op < 0.55:
                lines.insert(row, indent + rng.choice(SNIPPETS) + "\n")
            elif op < 0.7:
                del lines[row]
            elif op < 0.85:
                lines[row] = indent + rng.choice(SNIPPETS) + "\n"
            else:
                lines.insert(row, "\n")
        edited = "".join(lines)
        yield edited
        try:
            ast.parse(edited)
            text = edited
        except SyntaxError:
            pass


def _without_fixes(summary):
    for info in summary.functions.values():
        info.candidates = [dataclasses.replace(c, fix=None) for c in info.candidates]
    summary.anywhere = [dataclasses.replace(c, fix=None) for c in summary.anywhere]
    return summary


@pytest.mark.parametrize("path", FIXTURES, ids=lambda p: p.name)
def test_reparse_is_a_full_parse(path):
    text = path.read_text()
    spliced = 0
    for edited in _edits(text, seed=len(text), count=40):
        tree, old, new = ast.parse(text), lines_with_ends(text), lines_with_ends(edited)
        try:
            want = ast.dump(ast.parse(edited), include_attributes=True)
        except SyntaxError:
            want = None
        got = reparse(tree, old, new, edited)
        if got is not None:
            spliced += 1
            assert ast.dump(got, include_attributes=True) == want
        if want is not None:
            text = edited
    assert spliced > 0  # the edits did exercise the splice


@pytest.mark.parametrize("path", FIXTURES, ids=lambda p: p.name)
def test_incremental_analysis_is_a_full_analysis(path):
    name = str(path)
    memo, reused = None, 0
    for edited in _edits(path.read_text(), seed=7, count=30):
        status, value, memo = analyze_edit(name, edited, memo)
        want_status, want = analyze_bytes(name, edited.encode())
        assert status == want_status
        assert value == (_without_fixes(want) if want_status == "ok" else want)
        reused += memo.reused if memo is not None and status == "ok" else 0
    methods = any(isinstance(m, ast.FunctionDef) for c in ast.walk(ast.parse(path.read_text()))
                  if isinstance(c, ast.ClassDef) for m in c.body)
    assert reused > 0 or not methods  # some methods' walks were reused


# A module function whose parameter its caller types (call_sites.py): `t` holds a tensor because
# `Model.forward` passes one, so `if t.sum() > 0:` is a finding; its walk depends on the caller's lines.
TYPED_BY_CALLER = """\
import torch
from torch import nn


def scale(t):
    if t.sum() > 0:
        return t
    return -t


def outer(t):
    return scale(t)


class Model(nn.Module):
    def forward(self, x):
        y = torch.ones(3)
        return x * scale(y) + outer(y)

    def extra(self, x):
        return x
"""
CALLER_EDITS = [
    TYPED_BY_CALLER.replace("return x\n", "return x + 1\n"),  # an edit elsewhere: scale's walk is reused
    TYPED_BY_CALLER.replace("torch.ones(3)", "3"),  # the caller's argument is no tensor now, its call line unchanged
    TYPED_BY_CALLER.replace("torch.ones(3)", "3").replace("return x\n", "return x + 2\n"),
    TYPED_BY_CALLER,  # a tensor again
    TYPED_BY_CALLER.replace("scale(y) + ", ""),  # scale typed through outer only
    TYPED_BY_CALLER.replace("scale(y) + ", "").replace("torch.ones(3)", "3"),  # and not through it now
]


def test_a_module_function_is_walked_again_when_a_caller_changes_and_reused_otherwise(tmp_path):
    name = str(tmp_path / "model.py")
    _, _, memo = analyze_edit(name, TYPED_BY_CALLER, None)
    findings = []
    for edited in CALLER_EDITS:
        status, value, memo = analyze_edit(name, edited, memo)
        assert status == "ok" and value == _without_fixes(analyze_bytes(name, edited.encode())[1])
        findings.append(len(value.functions["scale"].candidates))
        if edited is CALLER_EDITS[0]:
            assert memo.reused == 3  # scale, outer and forward: only `extra` changed
    assert findings[0] > 0 and findings[1] == findings[2] == 0 and findings[3] == findings[4] == findings[0]
    assert findings[5] == 0


# A method annotated to take a tensor that every `self.` call passes an int (call_sites.py): the
# annotation is not trusted, so `int(n)` is no finding; its walk depends on its callers' lines.
ANNOTATION_CONTRADICTED = """\
import torch
from torch import nn


class Base(nn.Module):
    def out_len(self, n: torch.Tensor):
        return int(n / 2)


class Model(Base):
    def forward(self, x):
        return x[:, :self.out_len(x.shape[-1])]

    def extra(self, x):
        return x
"""
METHOD_CALLER_EDITS = [
    ANNOTATION_CONTRADICTED.replace("return x\n", "return x + 1\n"),  # an edit elsewhere: out_len's walk is reused
    ANNOTATION_CONTRADICTED.replace("x.shape[-1]", "x.sum()"),  # a tensor passed now: the annotation holds
    ANNOTATION_CONTRADICTED,  # an int again
    ANNOTATION_CONTRADICTED.replace("return x\n", "return x + self.out_len(x)\n"),  # a second caller, a tensor
]


def test_a_method_is_walked_again_when_a_self_call_of_it_changes_and_reused_otherwise(tmp_path):
    name = str(tmp_path / "model.py")
    _, first, memo = analyze_edit(name, ANNOTATION_CONTRADICTED, None)
    findings = [len(first.functions["Base.out_len"].candidates)]
    for edited in METHOD_CALLER_EDITS:
        status, value, memo = analyze_edit(name, edited, memo)
        assert status == "ok" and value == _without_fixes(analyze_bytes(name, edited.encode())[1])
        findings.append(len(value.functions["Base.out_len"].candidates))
        if edited is METHOD_CALLER_EDITS[0]:
            assert memo.reused == 2  # out_len and forward: only `extra` changed
    assert findings == [0, 0, 1, 0, 1]


def test_a_method_no_call_can_type_is_reused_when_its_caller_changes(tmp_path):
    """`scale(self, n, k: int)` has no parameter a call could contradict (no tensor annotation, not
    `forward`, not decorated): its walk does not depend on its callers (`typed_by_callers`)."""
    text = ANNOTATION_CONTRADICTED.replace("def out_len(self, n: torch.Tensor):", "def out_len(self, n, k: int = 2):")
    name = str(tmp_path / "model.py")
    _, _, memo = analyze_edit(name, text, None)
    status, value, memo = analyze_edit(name, text.replace("x.shape[-1]", "x.sum()"), memo)
    assert status == "ok" and memo.reused == 2  # out_len and extra: only forward changed


# A module's `forward` typed by the `self.attr(...)` calls of the class holding it (call_sites.py):
# `Decoder` passes sizes, so `int(inputs_shape[1] + 1)` reads no tensor; its walk depends on those calls.
SUBMODULE_CALLER = """\
import torch
from torch import nn


class Positions(nn.Module):
    def forward(self, inputs_shape):
        return torch.arange(int(inputs_shape[1] + 1))


class Decoder(nn.Module):
    def __init__(self):
        super().__init__()
        self.positions = Positions()

    def forward(self, x):
        return x + self.positions(x.shape[:2])[:x.shape[1]]

    def extra(self, x):
        return x
"""


def test_a_forward_is_walked_again_when_the_call_of_its_holder_changes(tmp_path):
    name = str(tmp_path / "model.py")
    _, first, memo = analyze_edit(name, SUBMODULE_CALLER, None)
    findings = [len(first.functions["Positions.forward"].candidates)]
    for edited in (SUBMODULE_CALLER.replace("self.positions(x.shape[:2])", "self.positions(x)"),  # a tensor now
                   SUBMODULE_CALLER):
        status, value, memo = analyze_edit(name, edited, memo)
        assert status == "ok" and value == _without_fixes(analyze_bytes(name, edited.encode())[1])
        findings.append(len(value.functions["Positions.forward"].candidates))
    assert findings == [0, 1, 0]


MODEL = """\
import torch
from torch import nn

from helpers import route


class Router(nn.Module):
    def forward(self, x):
        return route(x)
"""

HELPERS = """\
import torch


def route(x):
    return x * 2
"""

# Successive texts of helpers.py (the callee's file) and model.py, each an edit of the one before.
EDITS = [
    ("helpers.py", HELPERS.replace("    return x * 2", "    print(x)\n    return x * 2")),  # a break in the callee
    ("helpers.py", HELPERS.replace("def route", "def scale(t):\n    return t.item()\n\n\ndef route")),  # unreached
    ("helpers.py", HELPERS.replace("def route", "def scale(t):\n    return t.item()\n\n\ndef route")
     .replace("x * 2", "x * scale(x)")),  # now reached through route: reach changes
    ("helpers.py", "# moved down\n\n" + HELPERS.replace("def route", "def scale(t):\n    return t.item()\n\n\ndef route")
     .replace("x * 2", "x * scale(x)")),  # rows move
    ("model.py", MODEL.replace("return route(x)", "x = self.extra(x)\n        return route(x)")),  # no such method
    ("model.py", MODEL.replace("return route(x)", "x = self.extra(x)\n        return route(x)")
     + "\n    def extra(self, x):\n        print(x)\n        return x\n"),  # now there is
    ("helpers.py", "# moved down\n\ndef route(x):\n    import numpy as np\n    return np.asarray(x"),  # mid-edit
    ("helpers.py", "# moved down\n\ndef route(x):\n    import numpy as np\n    return np.asarray(x)\n"),
    ("helpers.py", HELPERS),
]


def _fresh(root: Path, settings):
    summaries = []
    for path in sorted(root.glob("*.py")):
        status, summary = analyze_bytes(str(path), path.read_bytes())
        if status == "ok":
            summaries.append(summary)
    return _shown(project_findings(summaries, settings))


def _shown(findings):
    """What a diagnostic shows of a finding (its fix is offered by a code action instead)."""
    return sorted(repr((f.path, f.span, f.code, f.message, f.region, f.severity, f.function)) for f in findings)


def test_callee_file_edit_updates_the_project_as_a_fresh_analysis_does(tmp_path):
    (tmp_path / "model.py").write_text(MODEL)
    (tmp_path / "helpers.py").write_text(HELPERS)
    settings = settings_for([str(tmp_path)])
    settings.project_root, settings.cache = str(tmp_path), False
    context = ProjectContext(str(tmp_path), settings)
    context.load()
    seen = set()
    for name, text in EDITS:
        path = tmp_path / name
        context.update(str(path), text)
        path.write_text(text)  # the fresh analysis reads the files
        if str(path) in context.errors:
            assert analyze_bytes(str(path), text.encode())[0] == "error"
            continue
        shown = _shown(f for findings in context.findings.values() for f in findings)
        assert shown == _fresh(tmp_path, settings)
        seen |= {(f.function, f.code) for fs in context.findings.values() for f in fs}
    # the edits did change what is reached: the callee's new helper, the model's new method
    assert {"scale", "Router.extra"} <= {function for function, _ in seen}


# The recompile rules CL411/CL412 read function bodies again in the project pass (frames.py: a
# skipped frame's loops, the wrapper `__init_subclass__` installs, an argument's state read): the
# server must read them from the texts it analysed, never from the disk's older text.
LAYERS = """\
import functools
import torch
from torch import nn


class CheckpointingLayer(nn.Module):
    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        forward = cls.forward

        @functools.wraps(forward)
        def forward_with_checkpointing(self, *args, **kwargs):
            return forward(self, *args, **kwargs)

        cls.forward = forward_with_checkpointing


class EncoderLayer(CheckpointingLayer):
    def forward(self, x, mask):
        return x * 2


class DecoderLayer(CheckpointingLayer):
    def __init__(self, layer_idx):
        super().__init__()
        self.layer_idx = layer_idx

    def forward(self, x, mask, cache):
        is_updated = cache.is_updated.get(self.layer_idx)
        if is_updated:
            return x
        cache.is_updated[self.layer_idx] = True
        return x + 1
"""

STACK = """\
import torch
from torch import nn

from layers import DecoderLayer, EncoderLayer


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.encoder = nn.ModuleList([EncoderLayer(), EncoderLayer()])
        self.decoder = nn.ModuleList([DecoderLayer(i) for i in range(2)])

    def forward(self, x, cache):
        for encoder_layer in self.encoder:
            x = encoder_layer(x, None)
        for decoder_layer in self.decoder:
            x = decoder_layer(x, None, cache)
        return x
"""

BREAK_IN_LOOP = STACK.replace("            x = decoder_layer(", "            print(x)\n            x = decoder_layer(")
LAYERS_MOVED = LAYERS.replace("class CheckpointingLayer", "def unused(t):\n    return t\n\n\nclass CheckpointingLayer")
LAYERS_READ_IN_IF = LAYERS_MOVED.replace("        is_updated = cache.is_updated.get(self.layer_idx)\n        if is_updated:",
                                         "        if cache.is_updated.get(self.layer_idx):")
RECOMPILE_EDITS = [
    ("model.py", BREAK_IN_LOOP),  # the decoder's loop breaks: its frame is skipped, every layer a frame
    ("layers.py", LAYERS_MOVED),  # rows move under both findings
    ("layers.py", LAYERS_READ_IN_IF),  # the state read moves into the `if`
    ("layers.py", LAYERS_READ_IN_IF.replace("return x + 1", "return (x + 1")),  # mid-edit
    ("layers.py", LAYERS_MOVED.replace("return x * 2", "return x * 3")),  # an edit in the other layer
    ("model.py", STACK),  # no break: one frame, nothing recompiles
    ("layers.py", LAYERS),
]


def test_recompile_findings_in_the_server_are_a_fresh_checks(tmp_path):
    (tmp_path / "model.py").write_text(STACK)
    (tmp_path / "layers.py").write_text(LAYERS)
    settings = settings_for([str(tmp_path)])
    settings.project_root, settings.cache = str(tmp_path), False
    context = ProjectContext(str(tmp_path), settings)
    context.load()
    texts = {"model.py": STACK, "layers.py": LAYERS}
    seen = set()
    for name, text in RECOMPILE_EDITS:
        path = tmp_path / name
        context.update(str(path), text)  # the editor's text: the disk still holds the previous one
        shown = _shown(f for findings in context.findings.values() for f in findings)
        path.write_text(text)
        if str(path) in context.errors:
            assert analyze_bytes(str(path), text.encode())[0] == "error"
            continue
        texts[name] = text
        assert shown == _fresh(tmp_path, settings)
        for f in (f for fs in context.findings.values() for f in fs):  # at the text's own lines
            line = texts[Path(f.path).name].splitlines()[f.span.row - 1]
            if f.code == "CL412":  # the state read, quoted in the message
                assert f"`{line[f.span.col - 1:f.span.end_col - 1]}`" in f.message
            elif f.code == "CL411":  # the call forwarding *args
                assert "*args" in line
        seen |= {(f.code, f.span) for fs in context.findings.values() for f in fs if f.code in ("CL411", "CL412")}
    # both rules fired, and at more than one place as the edits moved their lines and text
    assert len({span for code, span in seen if code == "CL411"}) >= 2
    assert len({span for code, span in seen if code == "CL412"}) >= 3


def test_a_comment_in_place_of_a_methods_def_line_is_not_spliced():
    """The stand-in class header would take the body's deeper indentation as its own; the whole
    file does not parse (unexpected indent), so neither may the splice."""
    text = "class M:\n    x = 1\n\n    def f(self):\n        return 1\n"
    edited = text.replace("    def f(self):\n", "    # noqa\n")
    with pytest.raises(SyntaxError):
        ast.parse(edited)
    assert reparse(ast.parse(text), text.splitlines(True), edited.splitlines(True), edited) is None



SHARED = """\
import torch


def shared(x):
    return x.item()


def other(x):
    return x + 1
"""

SHARED_CALLERS = """\
import torch
from torch import nn

from shared import other, shared


class Block(nn.Module):
    def first(self, x):
        return shared(x)

    def second(self, x):
        return other(shared(x))

    def third(self, x):
        y = other(x)
        return shared(y)

    def forward(self, x):
        return self.first(x) + self.second(x) + self.third(x)


@torch.compile
def run(x):
    return Block()(x) + shared(x)
"""

SHARED_CALLER_EDITS = [
    SHARED_CALLERS.replace("        return shared(x)\n\n    def second", "        return other(x)\n\n    def second"),
    SHARED_CALLERS.replace("        y = other(x)\n", "        y = other(x)\n        z = shared(y)\n"),  # a caller's second call
    SHARED_CALLERS.replace("        return other(shared(x))", "        return x"),  # no calls left
    SHARED_CALLERS.replace("        return other(shared(x))", "        return other(shared(x)) + (shared("),  # mid-edit
    SHARED_CALLERS,
]
# after each, the rows of some callers move (the same reach: what it keeps is made again for them)
SHARED_CALLER_EDITS = [moved for text in SHARED_CALLER_EDITS
                for moved in (text, text.replace("    def second", "    # moved\n\n    def second"))]


def test_what_the_server_keeps_between_passes_is_what_a_fresh_pass_makes(tmp_path):
    """The calls reaching each function and the frames are kept between edits and made again only
    where an edit changed them (`ResolvedCalls.callers`, `FramesMemo`): after every edit they
    equal what a pass with nothing kept makes, lines moved by the edits included."""
    from compilelint.project_pass.frames import all_frames
    from compilelint.project_pass.resolved_calls import ResolvedCalls
    from compilelint.rule import break_codes

    (tmp_path / "shared.py").write_text(SHARED)
    (tmp_path / "callers.py").write_text(SHARED_CALLERS)
    for path in (ROOT / "fixtures/regions").glob("*.py"):
        (tmp_path / path.name).write_text(path.read_text())
    settings = settings_for([str(tmp_path)])
    settings.project_root, settings.cache = str(tmp_path), False
    context = ProjectContext(str(tmp_path), settings)
    context.load()
    roots, reached, _ = context._reach.last
    context._frames.calls.callers(context._project, reached)  # kept from here on
    layers = tmp_path / "vllm_layers.py"
    edits = [(tmp_path / "callers.py", text) for text in SHARED_CALLER_EDITS] + \
        [(layers, text) for text in _edits(layers.read_text(), seed=7, count=20)]
    for path, text in edits:
        context.update(str(path), text)
        roots, reached, _ = context._reach.last
        project, memo = context._project, context._frames
        assert memo.calls.callers(project, reached) == ResolvedCalls().callers(project, reached)
        kept = all_frames(project, reached, [r[0] for r in roots], break_codes(), memo)
        fresh = all_frames(project, reached, [r[0] for r in roots], break_codes())
        for mode, fr in kept.items():
            assert (fr.why, fr.edges, fr.callers, fr.repeated, fr.skipped) == \
                (fresh[mode].why, fresh[mode].edges, fresh[mode].callers, fresh[mode].repeated, fresh[mode].skipped)
    assert len(ResolvedCalls().callers(project, reached)["shared.shared"]) >= 4  # callers, and calls, in order


def test_every_rule_keeps_the_rule_state_contract():
    """What each rule keeps between the functions of a file compares by value (the rule-state
    contract, `compilelint.rule.OBJECT_ID_FLOOR`), after walking each of its own examples: a rule
    holding a tree node or a function would leave the server nothing to reuse."""
    import textwrap

    from compilelint.analysis.walker import FileAnalyzer
    from compilelint.notebook import decode_any
    from compilelint.rule import registry
    from compilelint.server.incremental import fingerprint_state

    for code, rule in registry().items():
        for example in rule.VALID + rule.INVALID:
            text = textwrap.dedent(example)
            analyzer = FileAnalyzer("example.py", decode_any("example.py", text.encode()), ast.parse(text),
                                    prefilter=False)
            analyzer.run()
            assert fingerprint_state(analyzer) is not None, f"{code}: {[r.walk_state() for r in analyzer.rules]}"


CALLS = """\
import torch
from torch import nn


class Block(nn.Module):
    def forward(self, x):
        return self.scale(x)

    def scale(self, x):
        return x * 2

    def shift(self, x):
        print(x)
        return x + 1


model = torch.compile(Block())
"""


def test_an_edit_of_calls_only_patches_the_project_index(tmp_path):
    """An edit that changes only which functions a file calls keeps the project index (patched by
    `with_file`) and the frames memo kept with it, and finds what a fresh analysis finds."""
    path = tmp_path / "block.py"
    path.write_text(CALLS)
    settings = settings_for([str(tmp_path)])
    settings.project_root, settings.cache = str(tmp_path), False
    context = ProjectContext(str(tmp_path), settings)
    context.load()
    assert context.findings == {}
    project, frames = context._project, context._frames
    edited = CALLS.replace("return self.scale(x)", "return self.shift(x)")
    context.update(str(path), edited)
    assert context._project is not project and context._frames is frames  # patched, not rebuilt
    path.write_text(edited)
    assert _shown(f for fs in context.findings.values() for f in fs) == _fresh(tmp_path, settings) != []
