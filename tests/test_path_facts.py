"""What a finding's path needs, read at walk time: config flags (`config_flags`) and optional
arguments (`passed_args`); and parameters typed by their same-file callers (`call_sites`)."""
import ast

from compilelint.analysis.astutil import walk
from compilelint.analysis.config_flags import condition_flags
from compilelint.analysis.passed_args import needed_params, passes
from compilelint.engine import analyze_bytes
from compilelint.summary import Call, FunctionInfo


def conditions_of(src, marker="MARK"):
    """The (test, branch) pairs around the line holding `marker`, outermost first."""
    tree = ast.parse(src)
    fn = tree.body[0]
    row = next(i for i, line in enumerate(src.splitlines(), 1) if marker in line)
    out = []

    def walk(stmts):
        for stmt in stmts:
            if isinstance(stmt, ast.If):
                for branch, body in ((True, stmt.body), (False, stmt.orelse)):
                    if body and body[0].lineno <= row <= body[-1].end_lineno:
                        out.append((stmt.test, branch))
                        walk(body)
    walk(fn.body)
    return fn, out


def test_config_flags_from_and_chains_and_else_branches():
    fn, conds = conditions_of(
        "def get(self, decoder=False):\n"
        "    if decoder and config_to_return.is_encoder_decoder and not self.config.tie and cfg.other:\n"
        "        if not config.use_cache or n > 2:\n"
        "            pass\n"
        "        else:\n"
        "            x = 1  # MARK\n")
    assert condition_flags(conds) == (("is_encoder_decoder", True), ("tie", False), ("use_cache", True))


def test_self_is_a_config_only_inside_a_config_class():
    fn, conds = conditions_of("def get(self):\n    if self.is_encoder_decoder:\n        x = 1  # MARK\n")
    assert condition_flags(conds, "BartConfig") == (("is_encoder_decoder", True),)
    assert condition_flags(conds, "BartModel") == ()


def test_optional_parameters_the_path_needs():
    fn, conds = conditions_of(
        "def __init__(self, data=None, config=None, size=4):\n"
        "    if config is not None:\n"
        "        if data is None:\n"
        "            pass\n"
        "        elif size:\n"
        "            x = 1  # MARK\n")
    assert needed_params(conds, fn, walk) == ("config", "data")


def test_a_rebound_parameter_is_always_given():
    fn, conds = conditions_of(
        "def f(x, mask=None):\n"
        "    mask = mask if mask is not None else 1\n"
        "    if mask is not None:\n"
        "        y = 1  # MARK\n")
    assert needed_params(conds, fn, walk) == ()


def test_passes_counts_the_receiver_of_a_bound_call():
    init = FunctionInfo("Cache.__init__", 1, 2, params=("self", "data", "config"))
    plain = FunctionInfo("helper", 1, 2, params=("data", "config"))
    by_keyword = Call.of("name", "pkg.Cache", "", 1, 1, "Cache", (), (0, ("config",)))
    one_positional = Call.of("name", "pkg.Cache", "", 1, 1, "Cache", (), (1, ()))
    unknown = Call.of("name", "pkg.Cache", "", 1, 1, "Cache", (), None)
    assert not passes(by_keyword, init, "data") and passes(by_keyword, init, "config")
    assert passes(one_positional, init, "data") and not passes(one_positional, init, "config")
    assert passes(one_positional, plain, "data") and not passes(one_positional, plain, "config")
    assert passes(unknown, init, "data")


def test_callers_type_a_helpers_parameters():
    src = (b"import torch\nfrom torch import nn\n\n"
           b"def helper(values, mask):\n    return values[mask]\n\n"
           b"def listed(values, mask):\n    return values[mask]\n\n"
           b"class M(nn.Module):\n"
           b"    def forward(self, x):\n"
           b"        a = helper(x, x > 0)\n"
           b"        b = listed([1, 2], [True, False])\n"
           b"        return a, b\n")
    status, summary = analyze_bytes("m.py", src)
    assert status == "ok", summary
    assert [c.code for c in summary.functions["helper"].candidates] == ["CL302"]
    assert summary.functions["listed"].candidates == []


def test_submodules_built_under_config_flags():
    from compilelint.analysis.config_flags import submodule_flags

    init = ast.parse(
        "def __init__(self, config):\n"
        "    self.adapter = Adapter(config) if config.add_adapter else None\n"
        "    self.pool = None if not config.use_pool else Pool()\n"
        "    if config.use_head and n > 1:\n"
        "        self.head = Head()\n"
        "    else:\n"
        "        self.head = None\n"
        "    if config.do_stable_layer_norm:\n"
        "        self.encoder = StableEncoder()\n"
        "    else:\n"
        "        self.encoder = Encoder()\n"
        "    self.norm = Norm() if config.tie else Other()\n"
        "    self.norm = Norm()  # built without a flag as well: no flag decides it\n").body[0]
    classes = lambda value: [value.func.id] if isinstance(value, ast.Call) else []  # noqa: E731
    assert submodule_flags(init, classes) == {
        "adapter": {"Adapter": (("add_adapter", True),)}, "pool": {"Pool": (("use_pool", True),)},
        "head": {"Head": (("use_head", True),)},
        "encoder": {"StableEncoder": (("do_stable_layer_norm", True),), "Encoder": (("do_stable_layer_norm", False),)},
        "norm": {"Other": (("tie", False),)}}


def test_numeric_config_comparisons_and_copied_attributes():
    from compilelint.analysis.config_flags import holds

    fn, conds = conditions_of(
        "def forward(self, x):\n"
        "    if self.training and self.layerdrop > 0.0 and not self.config.rate <= 1:\n"
        "        x = 1  # MARK\n")
    flags = condition_flags(conds, "Encoder", {"layerdrop": "encoder_layerdrop"})
    assert flags == (("encoder_layerdrop", True, ">", 0.0), ("rate", False, "<=", 1))
    assert not holds(0.0, flags[0]) and holds(0.1, flags[0]) and holds(True, ("use_cache", True))
    assert condition_flags(conds, "Encoder") == (("rate", False, "<=", 1),)  # self.layerdrop: unknown source
