import ast
from typing import Dict, FrozenSet, Optional, Tuple

from compilelint.analysis import dtype_flow
from compilelint.analysis.call_binding import argument_slot
from compilelint.finding import Span
from compilelint.project_pass import frames as F
from compilelint.rule import ProjectContext, Rule
from compilelint.summary import may_hold

# torch modules that canonicalize a padding mask against an attention mask and warn when their
# dtypes differ (`F._canonical_mask`), by class name: (attention mask, its positional place in
# `forward`, padding mask, its place) for each pair they check. Measured on torch 2.13 (a float
# mask with a bool one: "Attempted to call function marked as skipped" on `warnings.warn`).
# `nn.TransformerDecoder` and `nn.Transformer` are left out: given a `tgt_mask` they break first
# on `_detect_is_causal_mask`'s `.item()`.
MASK_PAIRS = {
    "MultiheadAttention": (("attn_mask", 5, "key_padding_mask", 3),),
    "TransformerEncoderLayer": (("src_mask", 1, "src_key_padding_mask", 2),),
    "TransformerEncoder": (("mask", 1, "src_key_padding_mask", 2),),
    "TransformerDecoderLayer": (("tgt_mask", 2, "tgt_key_padding_mask", 4),
                                ("memory_mask", 3, "memory_key_padding_mask", 5)),
}
MASK_NAMES = frozenset(name for pairs in MASK_PAIRS.values() for pair in pairs for name in pair[::2])
# The fewest positional arguments that pass both masks of a pair.
FEWEST_POSITIONAL = min(max(pair[1], pair[3]) + 1 for pairs in MASK_PAIRS.values() for pair in pairs)
DEPTH = 24  # calls followed back or into, at most, to learn one value's dtype


class _Resolver:
    """What dtype kinds a value of `dtype_flow` can have on traced paths: {"bool", "float",
    "none"}, with "?" where something is unknown. A parameter takes what every traced call passes
    (its default where a call leaves it out; the user's, unknown, in a root); a call's result what
    the callee's returns are."""

    def __init__(self, project: ProjectContext, rule_code: str, mode: str):
        self.project = project
        self.code = rule_code
        frames = project.frames(mode)
        self.edges, self.callers = frames.edges, frames.callers
        self.roots = {r[0] for r in project.roots}
        self.memo: Dict[tuple, FrozenSet[str]] = {}
        self.flows: Dict[str, Optional[dict]] = {}

    def facts(self, fid) -> Optional[dict]:
        """`dtype_flow.flow_of` the function, parsed when first asked (None: no such function);
        derived from its node once (`Trees.derived`: the same in either mode, and kept with it)."""
        if fid not in self.flows:
            found = self.project.function(fid)
            node = found and self.project.trees.function(found[0].path, found[1].row)
            self.flows[fid] = self.project.trees.derived(node, "dtype flow", dtype_flow.flow_of) \
                if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) else None
        return self.flows[fid]

    def value(self, fid: str, alternatives, depth: int = 0) -> FrozenSet[str]:
        out = set()
        for term in alternatives:
            out |= self.term(fid, term, depth)
            if "?" in out:
                return frozenset({"?"})
        return frozenset(out)

    def term(self, fid: str, term, depth: int) -> FrozenSet[str]:
        if not isinstance(term, tuple):
            return frozenset({term})
        key = (fid, term)
        if key in self.memo:
            return self.memo[key]
        self.memo[key] = frozenset({"?"})  # a cycle, or too deep: unknown
        got = frozenset({"?"}) if depth > DEPTH else \
            self._param(fid, term[1], depth) if term[0] == "p" else self._returned(fid, term[1], term[2], term[3], depth)
        if term[-1]:
            got = got - {"none"}
        self.memo[key] = got
        return got

    def _param(self, fid: str, name: str, depth: int) -> FrozenSet[str]:
        callers = self.callers.get(fid) or []
        if fid in self.roots or not callers:
            return frozenset({"?"})
        callee = self.project.function(fid)[1]
        defaults = (self.facts(fid) or {}).get("defaults", {})
        out = set()
        for caller, call in callers:
            if call.args is None:
                return frozenset({"?"})
            slot = argument_slot(call, callee, name)
            if slot is None:
                out.add("none" if defaults.get(name) else "?")
            else:
                given = ((self.facts(caller) or {}).get("calls") or {}).get((call.row, call.col), {}).get(slot)
                out |= self.value(caller, given, depth + 1) if given else {"?"}
            if "?" in out:
                return frozenset({"?"})
        return frozenset(out)

    def _returned(self, fid: str, row: int, col: int, index: int, depth: int) -> FrozenSet[str]:
        callees = [callee for callee, call in self.edges.get(fid, ()) if call.row == row and call.col == col]
        if not callees:
            return frozenset({"?"})
        out = set()
        for callee in callees:
            returns = (self.facts(callee) or {}).get("returns") or {}
            given = returns.get(index) if index in returns else returns.get(-1) if index == -1 else None
            out |= self.value(callee, given, depth + 1) if given else {"?"}
            if "?" in out:
                return frozenset({"?"})
        return frozenset(out)


class _Paths:
    """Is there a traced path on which the two masks of one call have different dtype kinds? The
    masks' parameters are followed back through each caller on its own (the encoder's call may pass
    an unknown positional embedding where the decoder's passes None): a path whose values are all
    known, and mismatched, is enough."""

    def __init__(self, resolver: _Resolver):
        self.resolver = resolver
        self.memo: Dict[tuple, bool] = {}

    def mismatched(self, fid: str, attn: tuple, padding: tuple, depth: int = 0) -> bool:
        key = (fid, attn, padding)
        if key in self.memo:
            return self.memo[key]
        self.memo[key] = False  # a cycle: no path found through it
        found = self._search(fid, attn, padding, depth)
        self.memo[key] = found
        return found

    def _search(self, fid: str, attn: tuple, padding: tuple, depth: int) -> bool:
        r = self.resolver
        params = {t[1] for t in attn + padding if isinstance(t, tuple) and t[0] == "p"}
        if not params:
            return mismatched(r.value(fid, attn), r.value(fid, padding))
        callers = r.callers.get(fid) or []
        if depth > DEPTH:
            return False
        # a root's own arguments come from the user (unknown); its traced callers are paths too
        callee = r.project.function(fid)[1]
        defaults = (r.facts(fid) or {}).get("defaults", {})
        for caller, call in callers:
            if call.args is None:
                continue
            given = ((r.facts(caller) or {}).get("calls") or {}).get((call.row, call.col), {})
            bound = {}
            for name in params:
                slot = argument_slot(call, callee, name)
                bound[name] = ("none",) if slot is None and defaults.get(name) else given.get(slot) if slot is not None else None
            if any(v is None for v in bound.values()):
                continue  # an argument of unknown dtype on this path
            if self.mismatched(caller, _bind(attn, bound), _bind(padding, bound), depth + 1):
                return True
        return False


def _bind(alternatives: tuple, bound: dict) -> tuple:
    """The alternatives with each parameter replaced by what the caller passes (a None taken out
    where the parameter was read under `is not None`)."""
    out = set()
    for term in alternatives:
        if not (isinstance(term, tuple) and term[0] == "p"):
            out.add(term)
            continue
        for given in bound[term[1]]:
            if term[2]:
                if given == "none":
                    continue
                if isinstance(given, tuple):
                    given = given[:-1] + (True,)
            out.add(given)
    return tuple(sorted(out, key=repr))


class _Classes:
    """The mask pairs of the torch modules the project's classes hold, each (class, attribute)
    worked out once (the reached functions' calls ask the same few many times)."""

    def __init__(self, project: ProjectContext):
        self.project = project
        self._pairs: Dict[Tuple[str, str], tuple] = {}

    def mask_pairs(self, fid: str, attr: str) -> tuple:
        """The mask pairs (`MASK_PAIRS`) of the torch module `self.<attr>` of the function's class
        holds (the first class of its MRO that builds the attribute says); () for any other."""
        key = (fid.rsplit(".", 1)[0], attr)
        if key not in self._pairs:
            self._pairs[key] = self._built_pairs(*key)
        return self._pairs[key]

    def _built_pairs(self, owner: str, attr: str) -> tuple:
        for cls in self.project.mro(owner):
            info = self.project.class_info(cls)
            # a record holding no such string builds no such attribute: it stays packed
            built = getattr(info, "submodules", {}).get(attr) if info is not None and may_hold(info, attr) else None
            if built:
                names = {self.project.canonical(b) for b in built}
                name = names.pop() if len(names) == 1 else ""
                return MASK_PAIRS.get(name.rsplit(".", 1)[-1], ()) if name.startswith("torch.nn.") else ()
        return ()


def mismatched(attn: FrozenSet[str], padding: FrozenSet[str]) -> bool:
    """Both masks known, each of one dtype kind when given, and the two kinds differ."""
    a, k = attn - {"none"}, padding - {"none"}
    return "?" not in attn | padding and len(a) == 1 and len(k) == 1 and a != k


class AttentionMaskDtypes(Rule):
    """
    ## What it does
    Finds a call of an `nn.MultiheadAttention` module whose `attn_mask` and `key_padding_mask` have
    different dtype kinds: one a boolean mask, the other a floating one (a causal mask built with
    `masked_fill(..., float("-inf"))` next to a padding mask from `x.eq(pad)`); the same for the
    mask pairs of `nn.TransformerEncoderLayer`, `nn.TransformerEncoder` and
    `nn.TransformerDecoderLayer`. It follows the masks through the functions that build them, the
    tuples they return, and the arguments each traced caller passes.

    ## Why is this bad?
    These modules canonicalize the masks and, when their dtypes differ, call
    `warnings.warn("Support for mismatched key_padding_mask and attn_mask is deprecated...")`.
    Dynamo cannot trace `warnings.warn`: it graph-breaks inside the module ("Attempted to call
    function marked as skipped", {gb}) on every call (measured on torch 2.13:
    fixtures/precision/attention_mask_dtypes.py).

    ## Example
    ```python
    causal = torch.triu(torch.ones(n, n), 1).masked_fill(mask == 1, float("-inf"))  # float
    padding = tokens.eq(pad)  # bool
    out, _ = self.att(x, x, x, attn_mask=causal, key_padding_mask=padding)
    ```

    ## Use instead
    Give both masks one dtype: a boolean causal mask (`torch.triu(torch.ones(n, n, dtype=torch.bool), 1)`),
    or a float padding mask (`torch.zeros_like(padding, dtype=x.dtype).masked_fill(padding, float("-inf"))`).

    ## References
    https://pytorch.org/docs/stable/generated/torch.nn.MultiheadAttention.html
    """

    code = "CL221"
    name = "attention-mask-dtypes"
    kind = "break"
    message = ("the attention mask and the padding mask this call gives torch's attention module have different "
               "dtypes (one bool, one float): the module warns that this is deprecated and Dynamo graph-breaks on "
               "`warnings.warn` ({gb}); give both masks one dtype")
    gb_types = ("Attempted to call function marked as skipped",)
    gb_ids = {"2.13": ("GB0007",), "2.11": ("GB0007",)}

    @classmethod
    def function_facts(cls, fn, nodes):
        """Where the function calls `self.<attr>(...)` with masks (rows from the `def`)."""
        return dtype_flow.self_calls_passing(fn, nodes, MASK_NAMES, FEWEST_POSITIONAL)

    @classmethod
    def check_project(cls, project: ProjectContext):
        hits: Dict[Tuple[str, int, int], str] = {}
        classes = _Classes(project)
        roots = {r[0] for r in project.roots}
        for mode in F.MODES:
            paths, frames = None, project.frames(mode)
            for fid in project.reached:
                if fid not in frames.callers and fid not in frames.edges and fid not in roots:
                    continue  # not traced in this mode
                for row, col, attr in project.facts(cls, fid) or ():
                    pairs = classes.mask_pairs(fid, attr)
                    at = project.function(fid)[1].row + row
                    if not pairs or (fid, at, col) in hits:
                        continue
                    paths = paths or _Paths(_Resolver(project, cls.code, mode))
                    given = ((paths.resolver.facts(fid) or {}).get("calls") or {}).get((at, col), {})
                    for attn_name, attn_at, padding_name, padding_at in pairs:
                        attn = given.get(attn_name, given.get(attn_at))
                        padding = given.get(padding_name, given.get(padding_at))
                        if attn and padding and paths.mismatched(fid, attn, padding):
                            hits[fid, at, col] = mode
        for (fid, row, col) in sorted(hits):
            summary, info = project.function(fid)
            project.report(cls, summary, info.qualname, Span(row, col, row, col), None, project.region(fid))

    INVALID = [
        """
import torch
from torch import nn

def causal_mask(x):
    n = x.shape[1]
    keep = torch.triu(torch.ones(n, n)) == 1
    return keep.float().masked_fill(keep == 0, float("-inf"))

class Attention(nn.Module):
    def __init__(self):
        super().__init__()
        self.att = nn.MultiheadAttention(16, 2, batch_first=True)

    def forward(self, x, attn_mask=None, key_padding_mask=None):
        out, _ = self.att(x, x, x, attn_mask=attn_mask, key_padding_mask=key_padding_mask)  # <-
        return out

class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.attention = Attention()

    def forward(self, x, tokens):
        return self.attention(x, attn_mask=causal_mask(x), key_padding_mask=tokens.eq(0))
""",
    ]
    VALID = [
        """
import torch
from torch import nn

def causal_mask(x):
    n = x.shape[1]
    return torch.triu(torch.ones(n, n), 1) == 1

class Attention(nn.Module):
    def __init__(self):
        super().__init__()
        self.att = nn.MultiheadAttention(16, 2, batch_first=True)

    def forward(self, x, attn_mask=None, key_padding_mask=None):
        out, _ = self.att(x, x, x, attn_mask=attn_mask, key_padding_mask=key_padding_mask)  # both bool
        return out

class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.attention = Attention()

    def forward(self, x, tokens):
        return self.attention(x, attn_mask=causal_mask(x), key_padding_mask=tokens.eq(0))
""",
    ]
