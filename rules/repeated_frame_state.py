import ast
from typing import Dict, List, Optional, Set

from compilelint.project_pass import carried_none
from compilelint.project_pass import frames as F
from compilelint.finding import Region, Span
from compilelint.rule import ProjectContext, Rule
from compilelint.rules.loop_carried_none import LoopCarriedNone


def _container(node) -> Optional[ast.AST]:
    """`cache.is_updated` of `cache.is_updated[i]`, `cache.is_updated.get(i)`, `i in cache.is_updated`."""
    if isinstance(node, ast.Subscript):
        return node.value
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "get":
        return node.func.value
    if isinstance(node, ast.Compare) and len(node.ops) == 1 and isinstance(node.ops[0], (ast.In, ast.NotIn)):
        return node.comparators[0]
    return None


def _root_name(node) -> Optional[str]:
    while isinstance(node, (ast.Attribute, ast.Subscript)):
        node = node.value
    return node.id if isinstance(node, ast.Name) else None


def _attribute_item(target) -> bool:
    """`self.x[i] = ...`: an item of an attribute."""
    return isinstance(target, ast.Subscript) and isinstance(target.value, ast.Attribute)


def _key(node) -> str:
    return ast.dump(node).replace("ctx=Store()", "ctx=Load()")


def argument_state_reads(fn: ast.FunctionDef) -> List[ast.AST]:
    """Reads of a container held by an argument object (`past_key_values.is_updated.get(i)`) whose
    value decides a condition (directly, or through a local the condition tests) and that the
    function itself stores into later (`past_key_values.is_updated[i] = True`)."""
    params = {a.arg for a in fn.args.posonlyargs + fn.args.args + fn.args.kwonlyargs} - {"self", "cls"}
    stores: Dict[str, int] = {}  # container → first row storing into it
    for node in ast.walk(fn):
        targets = node.targets if isinstance(node, ast.Assign) else \
            [node.target] if isinstance(node, ast.AugAssign) else []
        for t in targets:
            if isinstance(t, ast.Subscript) and isinstance(t.value, ast.Attribute) and _root_name(t) in params:
                stores.setdefault(_key(t.value), t.lineno)
    if not stores:
        return []
    tested: Set[str] = set()  # names a condition reads
    conditions = [n.test for n in ast.walk(fn) if isinstance(n, (ast.If, ast.While, ast.IfExp))]
    for test in conditions:
        tested.update(n.id for n in ast.walk(test) if isinstance(n, ast.Name))
    reads = [n for test in conditions for n in ast.walk(test) if _container(n) is not None]
    reads += [n.value for n in ast.walk(fn) if isinstance(n, ast.Assign) and len(n.targets) == 1
              and isinstance(n.targets[0], ast.Name) and n.targets[0].id in tested]
    out = []
    for read in reads:
        box = _container(read)
        if isinstance(box, ast.Attribute) and _root_name(box) in params and \
                stores.get(_key(box), 0) > read.lineno:
            out.append(read)
    return sorted(out, key=lambda n: (n.lineno, n.col_offset))


class RepeatedFrameState(Rule):
    """
    ## What it does
    Finds state of an argument object that a function reads in a condition and then changes
    (`is_updated = past_key_values.is_updated.get(i)` … `past_key_values.is_updated[i] = True`)
    when the function runs inside a Dynamo frame entered several times within one call: a layer
    called in the loop of a frame that a graph break inside that loop makes Dynamo skip.

    ## Why is this bad?
    Each entry of the frame is compiled against the state it read (guard
    `past_key_values.is_updated[0] == False`); the entry before changed it, so the next layer's
    entry fails the guard and recompiles. Inlined into one frame (no break in the loop) nothing
    recompiles: the object is made fresh per call. Measured in the truth corpus (torch 2.11):
    m2m_100, nllb-moe, seamless_m4t and seamless_m4t_v2 in train, whose layerdrop loops break.

    ## Example
    ```python
    def forward(self, hidden, past_key_values):
        is_updated = past_key_values.is_updated.get(self.layer_idx)
        if is_updated:
            return past_key_values.layers[self.layer_idx]
        past_key_values.is_updated[self.layer_idx] = True
        ...
    ```

    ## Use instead
    Remove the graph break in the loop that calls the layers (so they inline into one frame), or
    keep such bookkeeping out of the compiled code (update the cache object before or after).

    ## References
    https://docs.pytorch.org/docs/stable/compile/programming_model.recompilation.html
    """

    code = "CL412"
    name = "repeated-frame-state"
    kind = "recompile"
    severity = "warning"
    message = ("state of an argument object read here and changed later by this function, in a frame entered "
               "repeatedly: the next entry fails the guard and recompiles; remove the graph break in the loop "
               "that calls it, or update the state outside the compiled code")

    @classmethod
    def function_facts(cls, fn, nodes):
        """True when the function stores into an attribute's item (`cache.is_updated[i] = True`):
        only such a function can change an argument's state (the project pass parses no other)."""
        for n in nodes:
            kind = n.__class__
            if kind is ast.Assign and any(map(_attribute_item, n.targets)) or \
                    kind is ast.AugAssign and _attribute_item(n.target):
                return True
        return None

    @classmethod
    def check_project(cls, project: ProjectContext):
        reached = project.reached
        hits: Dict[tuple, dict] = {}  # (path, row, col) → {"modes", "summary", "function", "node", "frame"}
        for mode in F.MODES:
            fr = project.frames(mode)
            inside: Dict[str, str] = {}  # function → the repeated frame it runs in
            # a frame also entered with a loop-carried None argument fails that guard first, and Dynamo
            # names it (switch_transformers: `args[2] is None`, not the cache's `is_updated`): CL414 says it
            carried = {frame for _, frame, *_ in carried_none.hits(fr, project.trees, LoopCarriedNone.starts_none(project))}
            for frame in sorted(fr.repeated - carried):
                todo = [frame]
                while todo:
                    fid = todo.pop()
                    if fid in inside:
                        continue
                    inside[fid] = frame
                    todo.extend(callee for callee, _ in fr.edges.get(fid, ()))
            for fid, frame in inside.items():
                summary, info = project.function(fid)
                if project.facts(cls, fid) is None:
                    continue  # stores into no argument's container: nothing to read again (no parse)
                node = project.trees.function(summary.path, info.row)
                if node is None:
                    continue
                for read in project.trees.derived(node, "argument_state_reads", argument_state_reads):
                    key = (summary.path, read.lineno, read.col_offset)
                    hit = hits.setdefault(key, {"modes": set(), "summary": summary, "function": info.qualname,
                                                "node": read, "frame": frame, "fid": fid})
                    hit["modes"].add(mode)
        for (path, row, col), hit in sorted(hits.items(), key=lambda kv: kv[0]):
            mode = "any" if len(hit["modes"]) == 2 else next(iter(hit["modes"]))
            frame = project.function(hit["frame"])[1].qualname
            text = ast.unparse(hit["node"])
            message = (f"`{text}` is read here and changed later by this function, inside `{frame}`, a frame entered "
                       f"repeatedly (called in the loop of a skipped frame): the next entry fails the guard and "
                       f"recompiles; remove the graph break in that loop, or update the state outside the compiled code")
            r = reached[hit["fid"]]
            region = Region(r.root, f"{r.reason} (in the frame of {frame})", mode)
            node = hit["node"]
            span = Span(node.lineno, node.col_offset + 1, node.end_lineno or node.lineno, (node.end_col_offset or 0) + 1)
            project.report(cls, hit["summary"], hit["function"], span, message, region)

    INVALID = [
        """
import torch
from torch import nn

class Attention(nn.Module):
    def __init__(self, layer_idx):
        super().__init__()
        self.layer_idx = layer_idx
        self.proj = nn.Linear(4, 4)

    def forward(self, x, past_key_values):
        is_updated = past_key_values.is_updated.get(self.layer_idx)  # <-
        if is_updated:
            return x
        past_key_values.is_updated[self.layer_idx] = True
        return self.proj(x)

class Decoder(nn.Module):
    def __init__(self):
        super().__init__()
        self.layers = nn.ModuleList([Attention(i) for i in range(2)])

    def forward(self, x, past_key_values):
        for layer in self.layers:
            if x.sum() > 0:  # a break in the loop: the frame is skipped, each layer is a frame
                x = x * 2
            x = layer(x, past_key_values)
        return x
""",
    ]
    VALID = [
        """
import torch
from torch import nn

class Attention(nn.Module):
    def __init__(self, layer_idx):
        super().__init__()
        self.layer_idx = layer_idx
        self.proj = nn.Linear(4, 4)

    def forward(self, x, past_key_values):
        is_updated = past_key_values.is_updated.get(self.layer_idx)
        if is_updated:
            return x
        past_key_values.is_updated[self.layer_idx] = True
        return self.proj(x)

class Decoder(nn.Module):
    def __init__(self):
        super().__init__()
        self.layers = nn.ModuleList([Attention(i) for i in range(2)])

    def forward(self, x, past_key_values):
        for layer in self.layers:  # nothing breaks: the layers are inlined into one frame
            x = layer(x, past_key_values)
        return x
""",
    ]
