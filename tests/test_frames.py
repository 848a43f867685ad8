"""Frames (compilelint/project_pass/frames.py) and the recompile rules built on them: which reached
functions Dynamo runs as frames of their own, and the torch-version gate of CL411."""
import ast
import textwrap
from pathlib import Path

from compilelint.project_pass import frames as F
from compilelint.project_pass.regions import Project, compile_roots, reach
from compilelint.project_pass.trees import Trees
from compilelint.config import Settings
from compilelint.engine import analyze_bytes, check_paths
from compilelint.rule import break_codes
from compilelint.rules.repeated_frame_state import RepeatedFrameState

from helpers import check_source

ROOT = Path(__file__).resolve().parent.parent

MODEL = """
import torch
from torch import nn

class Layer(nn.Module):
    def forward(self, x):
        return x * 2

class Head(nn.Module):
    def forward(self, x):
        print(x)  # a break: Head.forward and Model.forward run as frames
        return x

class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.layers = nn.ModuleList([Layer(), Layer()])
        self.head = Head()

    def forward(self, x):
        for layer in self.layers:
            if self.training and x.sum() > 0:  # a train-only break in the loop: the frame is skipped
                x = x + 1
            x = layer(x)
        return self.head(x)
"""


def _frames(tmp_path, source, mode):
    path = tmp_path / "model.py"
    path.write_text(textwrap.dedent(source))
    status, summary = analyze_bytes(str(path), path.read_bytes())
    assert status == "ok", summary
    project = Project([summary])
    roots = compile_roots(project, [f"{summary.module}.Model.forward"], "compiled")
    reached, _ = reach(project, roots)
    return F.frames(project, reached, [r[0] for r in roots], mode, break_codes()), summary.module


def test_breaks_make_frames_of_the_path_and_a_loop_break_skips_the_frame(tmp_path):
    fr, mod = _frames(tmp_path, MODEL, "train")
    assert set(fr.why) == {f"{mod}.Model.forward", f"{mod}.Head.forward", f"{mod}.Layer.forward"}
    assert fr.repeated == {f"{mod}.Layer.forward"}  # called inside the skipped loop
    fr, mod = _frames(tmp_path, MODEL, "eval")  # no break in the loop: the layers are inlined
    assert set(fr.why) == {f"{mod}.Model.forward", f"{mod}.Head.forward"} and not fr.repeated


TRY_WRAPPER = """
import functools
import torch
import torch._dynamo
from torch import nn

def collect(func):
    @functools.wraps(func)
    def wrapper(self, *args, **kwargs):
        try:
            return func(self, *args, **kwargs)
        finally:
            pass
    return wrapper

class Encoder(nn.Module):
    @collect
    def forward(self, x):
        torch._dynamo.graph_break()
        return x * 2

class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.encoder = Encoder()

    @collect
    def forward(self, x):
        return self.encoder(x) * 2
"""


def test_a_wrapper_forwarding_inside_try_recompiles_on_2_11_only():
    rows = {v: {f.span.row for f in check_source(TRY_WRAPPER, select=["CL411"], torch_version=v).findings}
            for v in ("2.11", "2.13")}
    assert rows == {"2.11": {9}, "2.13": set()}


def test_a_def_is_found_from_its_header_rows_in_an_edited_tree_as_in_a_parsed_file(tmp_path):
    """`Trees.function`: down the statements of an in-memory tree (it changes between passes) and
    from an index of a file parsed from disk, the same `def` for every row of every fixture."""
    found = defs = 0
    for path in sorted((ROOT / "fixtures").rglob("*.py")):
        data = path.read_bytes()
        try:
            tree = ast.parse(data)
        except (SyntaxError, ValueError):
            continue
        copy = tmp_path / "file.py"
        copy.write_bytes(data)
        defs += sum(isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)) for n in ast.walk(tree))
        in_memory, on_disk = Trees(lambda p: tree), Trees()
        for row in range(1, data.count(b"\n") + 2):
            a, b = in_memory.function(str(copy), row), on_disk.function(str(copy), row)
            assert (a.lineno, a.name) == (b.lineno, b.name) if a is not None else b is None, (path, row)
            found += a is not None
    assert found >= defs > 100  # every def has a header row


def test_stdin_text_is_what_the_frames_read_not_the_file_on_disk(tmp_path):
    """`check -` reads the functions' loops and state reads from stdin's text, as the findings."""
    source = textwrap.dedent(RepeatedFrameState.INVALID[0])
    path = tmp_path / "model.py"
    path.write_text("# an older text\n")
    report = check_paths([str(path)], Settings(cache=False), stdin=(str(path), source.encode()))
    rows = [f.span.row for f in report.findings if f.code == "CL412"]
    assert rows == [i for i, line in enumerate(source.splitlines(), 1) if "# <-" in line]


def test_settings_are_decided_by_the_config_class_defaults(tmp_path):
    """`self.layerdrop > 0.0` with `self.layerdrop = config.layerdrop`: a break under it makes frames
    only when the root's config class sets it above 0 (m2m_100's 0.05, not bart's 0.0)."""
    source = MODEL.replace("if self.training and x.sum() > 0:", "if self.training and self.layerdrop > 0.0 and x.sum() > 0:")
    source = source.replace("class Model(nn.Module):\n", "class Model(nn.Module):\n    config: Config\n")
    source = source.replace("        super().__init__()\n        self.layers", "        super().__init__()\n        self.layerdrop = config.layerdrop\n        self.layers")
    source = source.replace("def __init__(self):\n        super().__init__()\n        self.layerdrop", "def __init__(self, config):\n        super().__init__()\n        self.layerdrop")
    for default, repeated in (("0.05", True), ("0.0", False)):
        text = source.replace("class Layer(nn.Module):", f"class Config:\n    layerdrop: float = {default}\n\n\nclass Layer(nn.Module):")
        fr, mod = _frames(tmp_path, text, "train")
        assert (f"{mod}.Layer.forward" in fr.repeated) is repeated, (default, fr.why)


def test_the_project_pass_reads_loops_and_choosing_tests_from_the_summaries_without_parsing():
    """Loops, which `if` of `__init__` builds which class, and the prefilters of CL412/CL414 (their
    `function_facts`) are facts of the file analysis: the project pass no longer parses each frame's module again."""
    src = textwrap.dedent('''
        import torch
        from torch import nn

        class Block(nn.Module):
            def __init__(self, config):
                super().__init__()
                if config.sparse:
                    self.mlp = Sparse(config)
                else:
                    self.mlp = Dense(config)
                self.norm = Norm(config) if config.pre_norm else None

            def forward(self, x, cache):
                bias = None
                for i in range(3):
                    x, bias = self.mlp(x, bias)
                cache.is_updated[0] = True
                return x
        ''')
    _, summary = analyze_bytes("m.py", src.encode())
    block = summary.classes["Block"]
    assert block.built_under == {  # rows counted from `class Block` (row 5)
        "mlp": [(("Sparse",), ((3, True),)), (("Dense",), ((3, False),))],
        "norm": [(("Norm",), ((7, True),))],  # the `else None` side builds nothing
    }
    forward = summary.functions["Block.forward"]
    assert forward.loops == [(2, 3)]
    # CL412: it stores into an attribute's item; CL414: it sets a name to None before a loop
    assert forward.rule_facts == {"CL412": True, "CL414": True}
    init = summary.functions["Block.__init__"]
    assert not init.loops and init.rule_facts == {}


ASSERTED = '''
import functools
import torch
import torch._dynamo
from torch import nn

def plain(fn):
    @functools.wraps(fn)
    def inner(*args, **kwargs):
        return fn(*args, **kwargs)
    return inner

class SinePos(nn.Module):
    @plain
    def forward(self, t):
        return t.sin()

class CosinePos(nn.Module):
    @plain
    def forward(self, t):
        return t.cos()

class Stack(nn.Module):
    def __init__(self, sine=False, cosine=False, scaled_sine=False):
        super().__init__()
        sine = sine or scaled_sine
        assert {ASSERT}
        {REBIND}
        self.sine = SinePos() if sine else None
        self.cosine = CosinePos() if cosine else None
        self.layers = nn.ModuleList([nn.Linear(4, 4) for _ in range(2)])

    def forward(self, x):
        pos = torch.arange(x.shape[-1]).float()
        if self.sine is not None:
            x = x + self.sine(pos)
        if self.cosine is not None:
            x = x + self.cosine(pos)
        for layer in self.layers:
            torch._dynamo.graph_break()
            x = layer(x)
        return x
'''


def test_submodules_an_init_assert_keeps_apart_never_share_a_wrapper_frame():
    """`init_asserts`: decided from the assert's test with both flags true; a test that does not
    exclude both, or a flag rebound after the assert, or a flag whose value is not a bool, decides
    nothing (the wrapper recompiles when both are built: measured on torch 2.13, backend eager)."""
    def flagged(assert_test, rebind="pass"):
        source = ASSERTED.replace("{ASSERT}", assert_test).replace("{REBIND}", rebind)
        return bool(check_source(source, select=["CL411"], torch_version="2.13").findings)

    assert not flagged("not (sine and cosine)")
    assert not flagged("int(sine) + int(cosine) < 2")
    assert flagged("len([f for f in (sine, cosine) if f]) <= 1")  # a comprehension: undecided
    assert flagged("sine or cosine")
    assert flagged("not (sine and cosine)", rebind="cosine = scaled_sine or cosine")
    assert flagged("not (sine and cosine)", rebind="cosine = bool(cosine)")
    assert flagged("not (sine and cosine) or unknown_flag")
