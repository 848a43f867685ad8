"""Why no static rule predicts a graph-break type: one reason per gb_type of Dynamo's registry.

`compilelint.coverage` assigns every gb_type either to the rules that claim it (`Rule.gb_types`) or
to one of the reasons below. A reason is chosen by the first pattern that matches the title
(case-insensitive), after the explicit per-id choices in `BY_ID`. Every title must land somewhere:
the coverage test fails on a new registry title that nothing explains.
"""
from __future__ import annotations

import re
from typing import Dict, List, Tuple

# key -> (short label, why a linter that reads source cannot predict it)
REASONS: Dict[str, Tuple[str, str]] = {
    "follow-on": ("follow-on", "a consequence of a break or recompile that is reported at its own source "
                               "(a break inside a loop, the recompile limit, a break in an inlined callee)"),
    "runtime-type": ("needs runtime types", "depends on the run-time type or contents of an object (a user "
                                            "class with custom dunders, a C extension, a container's items, "
                                            "a value's hashability), which source alone does not give"),
    "runtime-value": ("needs runtime values", "depends on values known only while tracing (which exception "
                                              "is raised, a symbolic shape's value, a device, a dtype)"),
    "internal": ("Dynamo internal", "a Dynamo limitation in bytecode handling, reconstruction or "
                                    "fake-tensor propagation, not a pattern of user code (often a Dynamo bug)"),
    "hop": ("higher-order op misuse", "wrong argument types or outputs in torch.cond / while_loop / scan / "
                                      "map / flex_attention / wrap bodies: needs the traced values, and "
                                      "fullgraph-only APIs fail loudly on the first run anyway"),
    "config": ("non-default config", "raised only under a non-default setting or a missing package "
                                     "(trace_numpy=False, NumPy not installed, torch.distributed "
                                     "unavailable, compiled autograd, functorch modes)"),
    "export": ("export / strict only", "raised by torch.export or strict mode, not by torch.compile"),
    "subclass": ("tensor subclasses", "tensor subclasses, nested or sparse tensors, opaque and TorchScript "
                                      "objects: whether a tensor is one is known only at run time"),
    "distributed": ("distributed", "collectives, FSDP and P2P: depends on how the process group and "
                                   "wrappers were set up at run time"),
    "triton": ("user Triton kernels", "user-written Triton kernels and their launch grids"),
    "autograd-function": ("autograd.Function internals", "the body of a custom torch.autograd.Function or "
                                                         "of hooks: needs the traced ctx and saved values"),
    "deliberate": ("deliberate", "an explicit request in the code to skip or step out of tracing "
                                 "(skip_frame, step_unsupported, comptime, leaf_function): the author asked"),
}

# Explicit choices where a title's words would mislead the patterns.
BY_ID: Dict[str, str] = {
    "GB0002": "runtime-value",  # Assertion failed on symbolic shapes
    "GB0010": "internal",
    "GB0011": "internal",
    "GB0012": "internal",
    "GB0013": "autograd-function",
    "GB0019": "autograd-function",
    "GB0029": "config",
    "GB0034": "runtime-value",  # assert on data that cannot compile a partial graph
    "GB0035": "runtime-type",  # __bool__ of a user object
    "GB0039": "follow-on",
    "GB0043": "runtime-type",  # a custom op not tagged pt2_compliant
    "GB0045": "runtime-value",
    "GB0046": "runtime-value",
    "GB0052": "internal",
    "GB0065": "follow-on",
    "GB0072": "export",
    "GB0083": "config",
    "GB0102": "export",
    "GB0104": "autograd-function",
    "GB0108": "config",
    "GB0076": "internal",
    "GB0066": "follow-on",  # a break inside an unsupported context manager: reported where it breaks
    "GB0096": "follow-on",
    "GB0107": "runtime-value",
    "GB0128": "runtime-value",  # Tensor.set_(): traced cleanly in a simple case on 2.13
    "GB0226": "runtime-type",
    "GB0228": "runtime-type",
    "GB0229": "runtime-type",
    "GB4197": "runtime-type",  # share_memory_() measured as GB0117 on 2.13
    "GB4240": "runtime-type",
    "GB0085": "autograd-function",
    "GB0089": "runtime-value",  # an exception raised inside an except handler: which one is a runtime fact
    "GB0195": "runtime-type",
    "GB4393": "runtime-type",
    "GB0296": "config",  # only with reorderable_logging_functions set
    "GB0337": "export",
    "GB0345": "export",
    "GB5976": "runtime-value",
    "GB0110": "runtime-value",
    "GB0111": "runtime-value",
    "GB0112": "runtime-value",
    "GB0119": "runtime-type",
    "GB0149": "config",
    "GB0173": "export",
    "GB0175": "runtime-type",
    "GB0181": "runtime-value",
    "GB0182": "runtime-value",
    "GB0208": "runtime-type",
    "GB0209": "autograd-function",
    "GB0212": "deliberate",  # a profiler context left open across the region
    "GB0219": "internal",
    "GB0223": "runtime-value",
    "GB0230": "runtime-value",
    "GB0244": "export",
    "GB0269": "deliberate",
    "GB0279": "deliberate",
    "GB0288": "runtime-value",
    "GB0328": "config",
    "GB0358": "runtime-value",
    "GB0360": "runtime-value",
    "GB0370": "deliberate",  # record_function must be closed inside the region
    "GB1501": "autograd-function",
    "GB2520": "runtime-value",
    "GB3840": "deliberate",
    "GB4315": "runtime-value",  # fake-tensor RuntimeError: usually the op fails in eager too
    "GB5173": "runtime-value",
    "GB6210": "deliberate",
    "GB7000": "follow-on",
    "GB7444": "autograd-function",
    "GB9158": "runtime-value",
    "GB9741": "config",
    "GB9840": "runtime-value",
}

# (reason, pattern on the title), first match wins.
PATTERNS: List[Tuple[str, str]] = [
    ("export", r"strict mode|\bexport\b|executorch|pytree\.register_constant"),
    ("distributed", r"distributed|fsdp|\bp2p|isend|irecv|collective|placement"),
    ("triton", r"triton|tma_descriptor|check_grid"),
    ("hop", r"\bhop\b|higher.?order|torch\.(cond|while_loop|scan|map|associative_scan)\b|"
            r"associative_scan|invoke_subgraph|wrap_with_|hints_wrapper|out_dtype|flexattention|"
            r"rewrite_signature|check_meta_consistency|set_subgraph_inputs|wraphigherorder|"
            r"functional_call|non-single tensor return|nonstrict_trace"),
    ("config", r"trace_numpy=false|numpy unavailable|without numpy|use_numpy_random_stream|"
               r"compiled autograd|functorch|functorh|use_deterministic"),
    ("subclass", r"subclass|nested ?tensor|sparse|opaque|torchscript|scriptmodule|script_object|"
                 r"fakescriptobject|torch\.jit|__torch_function__|as_subclass|unbacked symint|"
                 r"torch_function mode"),
    ("autograd-function", r"autograd\.function|autograd_function|custom (jvp|vjp)|save_for_backward|"
                          r"mark_dirty|_materialize_non_diff|imperativeengine|hook|removablehandle|"
                          r"grad_fn|gradientedge|_autograd_grad|autograd\.grad|backward_state|"
                          r"retain_grad|grad_accumulate|requires grad|backward\(\)"),
    ("deliberate", r"skip_frame|step_unsupported|comptime|leaf function|leaf_function"),
    ("follow-on", r"graph break in (loop|inlined)|resume function|recompile limit|cache limit|"
                  r"restartanalysis"),
    ("internal", r"bytecode|handler|reconstruct|_impl\b|impl not implemented|tp_|nb_|sq_|mp_|"
                 r"missing_|\bslot\b|build_string|unpack|cleanup_throw|\bsend\b|cell\b|"
                 r"sourceless|source\b|sourcetype|proxy|fake ?tensor|fake value|fx node|fx\.node|"
                 r"real value|example value|nullvariable|python < 3\.11|comprehension|"
                 r"__build_class__|load_build_class|call_intrinsic|vectorcall|dynamo bug|"
                 r"unconverted argument|bind arguments|fakeidvariable|getattrvariable|"
                 r"unspecializednnmodulevariable|skipfunctionvariable|variabletracker|"
                 r"non-pt2|op packet|constant fold|symnode|symint|meta kernel|"
                 r"builder|infinite generator|sub-generator|call_method node|self-referential|"
                 r"tb_lasti|elementwise_dtypes|mro|frame builtins|descriptor|stack values|"
                 r"torch\.\* op returned|in-graph function|phase|unhandled|"
                 r"unimplemented next|undetermined|no end_for|no matches"),
    ("runtime-value", r"observed exception|exception|typeerror|runtimeerror|data-dependent|"
                      r"non-constant|non-const|nonconst|constant|device|dtype|shape mismatch|"
                      r"non-contiguous|assert|_check|guard_scalar|version counter|compile call|"
                      r"iterator|itertools|deque|range\(\)|slice|index|key not found"),
    ("runtime-type", r"user.?defined|user object|custom|__getattr|__getattribute__|__hash__|hash|"
                     r"hashab|equality|richcompare|metaclass|dataclass|pydantic|typeddict|namedtuple|"
                     r"enum|typing|nn\.module|module|mappingproxy|mapping proxy|dict|list|set\b|"
                     r"__dict__|__len__|__class__|__new__|super|weakref|method|function|builtin|"
                     r"isinstance|issubclass|hasattr|getattr|setattr|attribute|object|repr|str\(\)|"
                     r"str_impl|call_id|id\(\)|functools|contextlib|contextmanager|context manager|"
                     r"generator|import|inspect|unittest|enum|sort|cast\(\)|vars\(\)|__self__|"
                     r"python_type|type\.__dict__|kwonly|keyword args|argument|args|next\(\)|iter\(\)|"
                     r"get_device_module|current_stream|event method|sdpaparams|optimizer|"
                     r"uninitialized|deleted variable|ndarray|numpy|concat|len_impl|tensor method|"
                     r"comparison|_ntuple|from_numpy|random\.random|tensor creation|out="),
]

_COMPILED = [(reason, re.compile(p, re.I)) for reason, p in PATTERNS]


def reason_for(gb_id: str, titles: List[str]) -> str:
    """The reason key for one registry id, or "" when nothing explains it."""
    if gb_id in BY_ID:
        return BY_ID[gb_id]
    for reason, pattern in _COMPILED:
        if any(pattern.search(t) for t in titles):
            return reason
    return ""


# Breaks whose title is no registry gb_type: the message of an internal error, which the events carry
# as their gb_type. Seen in the truth corpus's variant runs: I-BERT's quantized layers store
# `SymmetricQuantFunction.apply` on `self` and call it in `forward` ("GetAttrVariable(
# AutogradFunctionVariable(), setup_context) has no type", torch 2.11). The breadth corpus adds two
# (torch 2.11): Dynamo's own recursion limit tracing lazily evaluated tensor wrappers, and a
# symbolic size taken as a constant.
UNREGISTERED: List[Tuple[str, str]] = [
    ("internal", r"^\w+Variable\(.*\) has no type$"),
    ("internal", r"^maximum recursion depth exceeded$"),
    ("internal", r"^\w+Variable\(.*\) is not a constant$"),
]


def reason_for_unregistered(title: str) -> str:
    """The reason key for a break title outside every registry, or "" when nothing explains it."""
    return next((reason for reason, pattern in UNREGISTERED if re.search(pattern, title)), "")
