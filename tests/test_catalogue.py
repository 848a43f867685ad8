"""Whole-file golden cases for the rule catalogue: each fixtures/catalogue/<name>.py is checked with
every rule on, and must give exactly the findings listed in <name>.expected (`row:col CODE` lines)."""
import glob
import os

import pytest

from compilelint.config import Settings
from compilelint.engine import check_paths
from compilelint.rule import registry

from helpers import check_source

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CATALOGUE = os.path.join(ROOT, "fixtures", "catalogue")
FIXTURES = sorted(glob.glob(os.path.join(CATALOGUE, "*.py")))

CODES = {
    "CL103": "tensor-tolist", "CL105": "data-dependent-check", "CL203": "warnings-warn", "CL204": "debugger",
    "CL205": "tensor-to-string", "CL206": "untraceable-call", "CL207": "deepcopy", "CL208": "rng-state",
    "CL209": "autograd-in-region", "CL210": "explicit-break", "CL211": "generator-root",
    "CL212": "unsupported-tensor-method", "CL213": "cuda-sync", "CL301": "dynamic-shape-op",
    "CL302": "boolean-mask-index", "CL303": "one-hot-dynamic", "CL401": "module-scalar-mutation",
    "CL402": "global-scalar-mutation", "CL403": "container-growth", "CL404": "object-identity",
    "CL405": "shape-specialization", "CL406": "compile-in-loop", "CL501": "unused-compile-result",
    "CL502": "cudagraph-buffer-mutation", "CL900": "unused-noqa",
}


def _expected(path):
    with open(path[:-3] + ".expected", encoding="utf-8") as f:
        return {line.strip() for line in f if line.strip() and not line.startswith("#")}


def test_fixtures_exist():
    names = {os.path.basename(p) for p in FIXTURES}
    assert {"moe_router.py", "decoder_logging.py", "train_step.py", "cudagraph_cache.py"} <= names
    for path in FIXTURES:
        assert os.path.exists(path[:-3] + ".expected"), f"{path} has no .expected file"


@pytest.mark.parametrize("path", FIXTURES, ids=[os.path.basename(p) for p in FIXTURES])
def test_fixture_findings(path):
    report = check_paths([path], Settings(cache=False, named_alone=True, select=["ALL"]))
    assert not report.errors, report.errors
    got = {f"{f.span.row}:{f.span.col} {f.code}" for f in report.findings}
    want = _expected(path)
    assert got == want, f"unexpected: {sorted(got - want)}; missing: {sorted(want - got)}"


def test_catalogue_registered():
    rules = registry()
    for code, name in CODES.items():
        assert code in rules, f"{code} is not registered"
        assert rules[code].name == name


def test_recompile_rules_are_warnings_without_gb_ids():
    for code, rule in registry().items():
        if rule.kind == "recompile":
            assert rule.severity == "warning", code
            assert not any(rule.gb_ids.values()), code
            # says it recompiles; the ones that recompile on every call also name the limit they reach
            assert "recompile" in rule.message, code
            if code in ("CL401", "CL402", "CL403", "CL404"):
                assert "recompile_limit" in rule.message, code


def test_default_selection():
    enabled = Settings().enabled_codes()
    assert "CL405" not in enabled and "CL900" not in enabled
    assert {"CL401", "CL402", "CL403", "CL404", "CL502"} <= enabled


def test_vllm_profile_turns_on_shape_specialization_and_makes_recompiles_errors():
    assert "CL405" in Settings(profile="vllm").enabled_codes()
    train = os.path.join(CATALOGUE, "train_step.py")
    default = check_paths([train], Settings(cache=False, named_alone=True))
    vllm = check_paths([train], Settings(cache=False, named_alone=True, profile="vllm"))
    recompiles = {f.code: f.severity for f in default.findings if f.code.startswith("CL4")}
    assert recompiles and set(recompiles.values()) == {"warning"}
    assert {f.code: f.severity for f in vllm.findings if f.code.startswith("CL4")} == dict.fromkeys(recompiles, "error")
    decoder = os.path.join(CATALOGUE, "decoder_logging.py")
    assert "CL405" not in {f.code for f in check_paths([decoder], Settings(cache=False, named_alone=True)).findings}
    shape = [f for f in check_paths([decoder], Settings(cache=False, named_alone=True, profile="vllm")).findings if f.code == "CL405"]
    assert [(f.span.row, f.severity) for f in shape] == [(33, "error")]


def test_cudagraph_rule_needs_cuda_graphs_or_vllm():
    source = '''
import torch
from torch import nn

class Cache(nn.Module):
    def __init__(self):
        super().__init__()
        self.register_buffer("buf", torch.zeros(4))

    def forward(self, x):
        self.buf = x * 2
        return self.buf
'''
    assert not [f for f in check_source(source, select=["CL502"]).findings]
    found = check_source(source, select=["CL502"], profile="vllm").findings
    assert [(f.code, f.span.row) for f in found] == [("CL502", 11)]


MUST_NOT_FLAG = '''
import functools
import os
import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

_CACHE = {}

@functools.lru_cache(maxsize=None)
def _rope_dim(d):
    return d // 2

class Clean(nn.Module):
    def __init__(self):
        super().__init__()
        self.w = nn.Parameter(torch.ones(4))

    def forward(self, x, labels):
        assert (x > -1e4).all(), "overflow"
        a = x.detach().cpu().numpy()
        b = np.sin(a)
        try:
            y = x * 2
        except RuntimeError:
            y = x
        out, d = [], {}
        out.append(y)
        d["y"] = y
        _CACHE["last"] = y
        p = x.data_ptr()
        x[x < 0] = 0.0
        self.w.data = self.w.data * 0.5
        if os.environ.get("DEBUG") == "1":
            y = y + 1
        if torch.cuda.is_available() and x.device.type == "cuda":
            y = y * 2
        z = torch.cond(x.sum() > 0, lambda t: t * 2, lambda t: t - 1, (x,))
        w = torch.where(x > 0, x, -x)
        h = F.one_hot(labels, 10)
        return y + z + w + h.sum() + _rope_dim(4) + out[0] + d["y"]
'''


def test_measured_clean_patterns_are_not_flagged():
    report = check_source(MUST_NOT_FLAG, select=["ALL"])
    assert not report.errors, report.errors
    assert [(f.code, f.span.row) for f in report.findings] == []


def test_names_resolve_through_imports():
    source = '''
import copy as cp
import torch
from torch import nn

def deepcopy(x):
    return x

class M(nn.Module):
    def forward(self, x):
        a = cp.deepcopy(x)
        b = deepcopy(x)
        return a + b
'''
    found = check_source(source, select=["CL207"]).findings
    assert [f.span.row for f in found] == [11]
