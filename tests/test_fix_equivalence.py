"""The rewrites RUN: each fix fixture's `make()` builds the same seeded modules from the original file
and from its `--fix --unsafe-fixes` golden; outputs and gradients must match, and Dynamo must report
breaks before and none after (CPU, small tensors, backend="eager")."""
import importlib.util
import os

import pytest

from compilelint.verify.prove import breaks

from fix_helpers import FIX_DIR

torch = pytest.importorskip("torch")

pytestmark = pytest.mark.slow  # every case runs torch.compile

from compilelint.verify.child import reset_dynamo  # noqa: E402
from compilelint.verify.events import Capture, dedupe, metrics_events  # noqa: E402
from compilelint.verify.prove_child import compare, flatten  # noqa: E402

# (fixture, modes): a fixture without parameters has no train run of its own.
CASES = [("moe_expert_loop", "eval"), ("moe_expert_loop", "train"), ("tensor_assert", "eval"),
         ("checks_and_masks", "eval"), ("raise_checks", "eval"), ("empty_mask", "eval"), ("warn_check", "eval"), ("item_raise", "eval"), ("where_comment", "eval"), ("where_unpacked", "eval"), ("requires_grad_input", "train"),
         ("item_name", "eval"), ("item_name", "train"), ("assert_split", "eval"), ("assert_split", "train"),
         ("buffer_local", "eval"), ("buffer_local", "train"), ("buffer_flag", "eval"), ("buffer_flag_list", "eval"), ("cast_alias", "eval"), ("where_keyed", "eval"), ("where_rebound", "eval"),
         ("equal_shortcut", "eval"), ("numpy_constant", "eval"),
         ("raise_negated_and", "eval"), ("where_truthy_return", "eval"), ("sparse_densified", "eval"), ("raise_python_or", "eval")]


def _load(path, name):
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _targets(case, suffix):
    path = os.path.join(FIX_DIR, f"{case}{suffix}.py")
    return _load(path, f"fixture_{case}_{suffix.strip('.').replace('-', '_') or 'before'}").make()


def _values(module, args, train, fn=None):
    module.train(train)
    module.zero_grad(set_to_none=True)
    with torch.set_grad_enabled(train):
        out = (fn if fn is not None else module)(*args)
    values = {p: t.detach().clone() for p, t in flatten(out)}
    if train:
        torch.stack([t.float().sum() for _, t in flatten(out) if t.requires_grad]).sum().backward()
        values.update({f"grad.{n}": p.grad.clone() for n, p in module.named_parameters() if p.grad is not None})
    return values


def _compiled(module, args, train):
    reset_dynamo()
    with Capture() as cap:
        values = _values(module, args, train, fn=torch.compile(module, backend="eager"))
    return values, breaks(dedupe(cap.events + metrics_events()))


@pytest.mark.parametrize("case,mode", CASES)
def test_fixed_code_computes_the_same_without_breaks(case, mode):
    train = mode == "train"
    before, after = _targets(case, ""), _targets(case, ".unsafe-fixed")
    for n, ((m0, args0, _), (m1, args1, _)) in enumerate(zip(before, after)):
        name = f"{case} #{n}"
        ref = _values(m0, args0, train)
        eager = compare(ref, _values(m1, args1, train))
        assert eager["equal"] in ("bitwise", "allclose"), (name, eager)
        _, n_before = _compiled(m0, args0, train)
        got, n_after = _compiled(m1, args1, train)
        assert n_before > 0, f"{name}: the original no longer breaks, the test proves nothing"
        assert n_after == 0, f"{name}: {n_after} breaks left after the fix"
        compiled = compare(ref, got)
        assert compiled["equal"] in ("bitwise", "allclose"), (name, compiled)


def test_assert_async_still_raises():
    after = _targets("tensor_assert", ".unsafe-fixed")
    module, (ids, _), _ = after[0]
    with pytest.raises(RuntimeError):
        module(ids, 1)  # a row has 2 or 3 tokens: lengths.max() <= 1 is false


def test_split_assert_raises_as_before():
    """Eager, a NaN still fails the first check with AssertionError and the same message."""
    module, (x,), _ = _targets("assert_split", ".fixed")[0]
    with torch.no_grad():
        module.proj.bias.fill_(float("nan"))
    with pytest.raises(AssertionError, match="NaN detected"):
        module(x)


def test_raise_check_still_raises_on_bad_data():
    module, (x,), _ = _targets("checks_and_masks", ".unsafe-fixed")[0]
    with pytest.raises(RuntimeError, match="NaN in the input"):
        module(torch.full_like(x, float("nan")))


def test_raise_checks_still_raise_on_bad_data():
    """The f-string message names its fields; the Python flag before `and` still switches the check off."""
    module, (x, labels), _ = _targets("raise_checks", ".unsafe-fixed")[0]
    with pytest.raises(RuntimeError, match="got {labels}"):
        module(x, labels + 2)
    with pytest.raises(RuntimeError, match="values out of range"):
        module(x * 1000, labels)
    module.strict = False
    module(x * 1000, labels)


def test_kept_empty_mask_computes_the_same_with_padding():
    """With pad tokens the mask was never dropped: both versions take the same masked path."""
    (before, _, _), = _targets("empty_mask", "")
    (after, _, _), = _targets("empty_mask", ".unsafe-fixed")
    ids = torch.tensor([[3, 4, 0, 0, 5], [1, 2, 3, 4, 5]])
    assert torch.equal(before(ids), after(ids))


def test_warning_check_still_warns_in_eager():
    module, (x,), _ = _targets("warn_check", ".unsafe-fixed")[0]
    x = x.clone()
    x[0, 0] = float("nan")
    with pytest.warns(UserWarning, match="NaN in the input"):
        module(x)


def test_where_branch_still_warns_in_eager():
    """The warning that led the rewritten branch still runs eagerly, and the clamp still applies."""
    module, (x,), _ = _targets("where_comment", ".unsafe-fixed")[0]
    x = x.clone()
    x[0, 0] = -10.0
    with pytest.warns(UserWarning, match="clipping very negative values"):
        out = module(x)
    (before, _, _) = _targets("where_comment", "")[0]
    assert torch.equal(out, before(x))


def test_item_check_still_raises():
    module, _, _ = _targets("item_raise", ".unsafe-fixed")[0]
    with pytest.raises(RuntimeError, match="Only {self.n_tasks} tasks"):
        module(torch.tensor([0, 4]))


def test_mixed_python_tensor_condition_gets_no_fix():
    with open(os.path.join(FIX_DIR, "layerdrop_mixed.py"), "rb") as f:
        source = f.read()
    for mode in ("fixed", "unsafe-fixed"):
        with open(os.path.join(FIX_DIR, f"layerdrop_mixed.{mode}.py"), "rb") as f:
            assert f.read() == source


def test_requires_grad_guard_keeps_eager_behaviour():
    """Eager, the guarded write still runs: the input of the first conv requires grad as before."""
    module, (x,), _ = _targets("requires_grad_input", ".unsafe-fixed")[0]
    seen = []
    module.conv.register_forward_pre_hook(lambda m, args: seen.append(args[0].requires_grad))
    module.train()(x)
    assert seen[0] is True


def _seeded(module, args, compiled):
    import numpy as np

    np.random.seed(0)
    torch.manual_seed(0)
    if not compiled:
        return _values(module, args, True), 0
    return _compiled(module, args, True)


def test_numpy_planner_run_eagerly_matches_eager_under_compile():
    """SpecAugment planned with np.random: compiled, Dynamo draws NumPy's numbers from torch's generator
    (the masks differ from eager); with the planner disabled the compiled run equals eager, with
    fewer breaks (one at the call instead of those inside)."""
    (m0, args0, _), = _targets("numpy_planner", "")
    (m1, args1, _), = _targets("numpy_planner", ".fixed")
    ref, _ = _seeded(m0, args0, False)
    assert compare(ref, _seeded(m1, args1, False)[0])["equal"] == "bitwise"
    before, n_before = _seeded(m0, args0, True)
    after, n_after = _seeded(m1, args1, True)
    assert compare(ref, before)["equal"] not in ("bitwise", "allclose"), "the original now draws as eager does"
    assert compare(ref, after)["equal"] == "bitwise"
    assert 0 < n_after < n_before, (n_before, n_after)


# torch version → whether a submodule conversion that changes nothing graph-breaks: 2.11 measured in
# the truth corpus (switch_transformers' router, GB0264), 2.13 in bench/measure/snippets_module_cast.out.
NOOP_CONVERSION_BREAKS = {"2.11": True, "2.13": False}


def _torch_minor():
    return ".".join(torch.__version__.split("+")[0].split(".")[:2])


@pytest.mark.parametrize("mode", ["eval", "train"])
def test_guarded_module_conversion_computes_the_same_without_breaks(mode):
    """The dtype already matches: the guarded conversion computes the same, eager and compiled, with no
    break; the original breaks there on the torch versions that break on a conversion that changes
    nothing (2.11), and not on 2.13."""
    version = _torch_minor()
    if version not in NOOP_CONVERSION_BREAKS:
        pytest.skip(f"no measurement of a no-op module conversion on torch {version}")
    train = mode == "train"
    before, after = _targets("module_cast", ""), _targets("module_cast", ".unsafe-fixed")
    for n, ((m0, args0, _), (m1, args1, _)) in enumerate(zip(before, after)):
        name = f"module_cast #{n}"
        ref = _values(m0, args0, train)
        assert compare(ref, _values(m1, args1, train))["equal"] == "bitwise", name
        _, n_before = _compiled(m0, args0, train)
        got, n_after = _compiled(m1, args1, train)
        assert n_after == 0, f"{name}: {n_after} breaks left after the fix"
        assert (n_before > 0) == NOOP_CONVERSION_BREAKS[version], (name, n_before)
        assert compare(ref, got)["equal"] in ("bitwise", "allclose"), name


def test_guarded_module_conversion_still_converts():
    """A module held in another dtype (bfloat16): both convert it, to the same dtypes, with the same
    outputs, and both break on that call (the conversion itself, GB0264): the guard hides nothing."""
    def built():
        pairs = zip(_targets("module_cast", ""), _targets("module_cast", ".unsafe-fixed"))
        return [(m0.to(torch.bfloat16), m1.to(torch.bfloat16), args) for (m0, args, _), (m1, _, _) in pairs]

    for n, (m0, m1, args) in enumerate(built()):
        ref = _values(m0, args, False)
        assert compare(ref, _values(m1, args, False))["equal"] == "bitwise", n
        dtypes = [p.dtype for p in m0.parameters()]
        assert dtypes == [p.dtype for p in m1.parameters()] and torch.bfloat16 not in dtypes, (n, dtypes)
    for n, (m0, m1, args) in enumerate(built()):
        assert _compiled(m0, args, False)[1] > 0 and _compiled(m1, args, False)[1] > 0, n


def test_python_flag_follows_the_buffer():
    """The kept bool is set where the class sets the buffer and after load_state_dict (a lazily
    initialised module loading an initialised one's state does not initialise again); it pickles."""
    import io
    import sys

    fixed = _load(os.path.join(FIX_DIR, "buffer_flag.unsafe-fixed.py"), "fixture_buffer_flag_hook")
    sys.modules[fixed.__name__] = fixed  # importable by name, as a pickled class must be
    lazy = fixed.Codebook(lazy_init=True)
    assert not lazy._ready_flag
    x = torch.randn(8, 4)
    lazy(x)
    assert lazy._ready_flag and bool(lazy.ready) and torch.equal(lazy.codes, x)
    fresh = fixed.Codebook(lazy_init=True)
    fresh.load_state_dict(lazy.state_dict())
    assert fresh._ready_flag
    fresh(torch.randn(8, 4))
    assert torch.equal(fresh.codes, x)  # not initialised again from the new input
    buf = io.BytesIO()
    try:
        torch.save(fresh, buf)  # the hook is a method, not a lambda: the whole module still pickles
    finally:
        del sys.modules[fixed.__name__]


def test_equal_shortcut_still_taken_in_eager():
    """Eager evaluates `torch.equal` as before: equal inputs take the shortcut (an exact zero diagonal)."""
    module, (x, x2), _ = _targets("equal_shortcut", ".unsafe-fixed")[0]
    fixed = _load(os.path.join(FIX_DIR, "equal_shortcut.unsafe-fixed.py"), "fixture_equal_shortcut_eager")
    calls = []
    original = fixed.squared_distances
    fixed.squared_distances = lambda a, b, same=False: calls.append(same) or original(a, b, same)
    fixed.Similarity()(x, x2)
    assert calls == [True]


def test_data_loop_runs_eagerly_with_one_break_a_call():
    """`@torch.compiler.disable` on the looping functions: Dynamo breaks once at each call (two
    functions), where it broke at the `.tolist()` and in the iterations before; outputs equal."""
    (m0, args0, _), = _targets("data_loop", "")
    (m1, args1, _), = _targets("data_loop", ".fixed")
    ref = _values(m0, args0, False)
    assert compare(ref, _values(m1, args1, False))["equal"] == "bitwise"
    _, n_before = _compiled(m0, args0, False)
    got, n_after = _compiled(m1, args1, False)
    assert n_after == 2 < n_before, (n_before, n_after)
    assert compare(ref, got)["equal"] == "bitwise"


@pytest.mark.parametrize("n", [0, 1])
def test_masked_write_leaves_only_the_write_break(n):
    """The `if valid.any():` break goes; the boolean-mask write still breaks unless
    capture_dynamic_output_shape_ops is on, so both run with it: breaks before, none after; outputs
    equal with some and with no valid entry (#1: all-False mask, the write writes nothing)."""
    (m0, args0, _), (m1, args1, _) = _targets("masked_write", "")[n], _targets("masked_write", ".unsafe-fixed")[n]
    ref = _values(m0, args0, False)
    assert compare(ref, _values(m1, args1, False))["equal"] == "bitwise"
    with torch._dynamo.config.patch(capture_dynamic_output_shape_ops=True):
        _, n_before = _compiled(m0, args0, False)
        got, n_after = _compiled(m1, args1, False)
    assert n_before > 0 and n_after == 0, (n_before, n_after)
    assert compare(ref, got)["equal"] == "bitwise"


def test_negated_and_raises_as_before():
    """The Python operand still raises the original exception; the tensor one raises RuntimeError."""
    module, (x, _), _ = _targets("raise_negated_and", ".unsafe-fixed")[0]
    with pytest.raises(RuntimeError, match="the diagonal needs"):
        module(x, x[:2])
    with pytest.raises(RuntimeError):
        module(x, x + 1)


def test_numpy_helper_fallback_for_older_torch(tmp_path):
    """`--torch-version 2.11`: the helper is marked `@torch.compiler.disable` instead of
    `assume_constant_result` (which does not compile there with objects). Run here (torch 2.13): the
    branches on traced NumPy go, one break per call is left; outputs equal."""
    from fix_helpers import prepare, run_cli

    path = prepare("numpy_constant", str(tmp_path))
    run_cli(["check", "--fix", "--unsafe-fixes", "--torch-version", "2.11", "--no-cache", "--isolated",
             "numpy_constant.py"], str(tmp_path))
    text = open(path, encoding="utf-8").read()
    assert "@torch.compiler.disable\ndef is_byte_range" in text and "\n@torch.compiler.assume_constant_result\n" not in text
    before = _targets("numpy_constant", "")
    after = _load(path, "fixture_numpy_constant_t211").make()
    for (m0, args0, _), (m1, args1, _) in zip(before, after):
        ref = _values(m0, args0, False)
        assert compare(ref, _values(m1, args1, False))["equal"] == "bitwise"
        _, n_before = _compiled(m0, args0, False)
        got, n_after = _compiled(m1, args1, False)
        assert n_after == 1 < n_before, (n_before, n_after)
        assert compare(ref, got)["equal"] == "bitwise"


def test_size_check_is_a_runtime_assert_with_the_setting():
    """With capture_dynamic_output_shape_ops the sizes are traced and the `if ...: raise` on them
    breaks ("Could not guard on data-dependent expression"); `torch._check` keeps it in the graph:
    breaks before, none after, outputs equal. Eager, a failed check raises the same RuntimeError."""
    (m0, args0, _), = _targets("size_check", "")
    (m1, args1, _), = _targets("size_check", ".fixed")
    ref = _values(m0, args0, False)
    assert compare(ref, _values(m1, args1, False))["equal"] == "bitwise"
    with torch._dynamo.config.patch(capture_dynamic_output_shape_ops=True):
        _, n_before = _compiled(m0, args0, False)
        got, n_after = _compiled(m1, args1, False)
    assert n_before > 0 and n_after == 0, (n_before, n_after)
    assert compare(ref, got)["equal"] == "bitwise"
    # without the setting the ops break as before, and the checks add none (a plain bool is checked)
    assert _compiled(m1, args1, False)[1] == _compiled(m0, args0, False)[1]
    ids, x = args1
    m1.n_buckets = 3
    m0.n_buckets = 3
    for module in (m0, m1):
        with pytest.raises(RuntimeError, match="found 6 distinct ids for 3 buckets"):
            module(ids, x)


@pytest.mark.parametrize("n", [0, 1])
def test_masked_count_writes_unconditionally_with_the_setting(n):
    """`n = x[mask].nelement()` / `if n:` around writes through the mask: without a setting the
    selection breaks; with capture_dynamic_output_shape_ops the original fails to compile ("Could not
    guard on data-dependent expression" at `if n:`). After the fix the writes run unconditionally and
    only the warning reads the count, under is_compiling(): with the setting no break, outputs equal
    (#0 with NaN shares, #1 without); eager still warns with the count."""
    import warnings

    (m0, args0, _), (m1, args1, _) = _targets("masked_count", "")[n], _targets("masked_count", ".unsafe-fixed")[n]
    ref = _values(m0, args0, False)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        assert compare(ref, _values(m1, args1, False))["equal"] == "bitwise"
    assert [str(w.message) for w in caught] == (["3 NaN shares replaced by zeros"] if n == 0 else [])
    assert _compiled(m0, args0, False)[1] > 0
    with torch._dynamo.config.patch(capture_dynamic_output_shape_ops=True):
        with pytest.raises(Exception, match="data-dependent"):
            _compiled(m0, args0, False)
        got, n_after = _compiled(m1, args1, False)
    assert n_after == 0, n_after
    assert compare(ref, got)["equal"] == "bitwise"
