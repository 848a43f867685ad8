import ast
import weakref
from typing import Dict, Optional, Set

from compilelint.project_pass import frames as F
from compilelint.analysis.astutil import self_attr, walk
from compilelint.rule import ProjectContext, Rule


# nn.Module methods that move or cast the module in place and return it.
MODULE_MOVES = frozenset({"to", "cuda", "cpu", "float", "half", "bfloat16", "double", "type", "train", "eval",
                          "requires_grad_"})


def _root(node) -> Optional[str]:
    while isinstance(node, (ast.Attribute, ast.Subscript)):
        node = node.value
    return node.id if isinstance(node, ast.Name) else None


def _state(node) -> bool:
    """`self.x`, `self.x[0]`, `cache.is_updated[i]`: an object's attribute, not a local or a slot
    of a list argument (a caller may hand a fresh list every call)."""
    if not isinstance(node, (ast.Attribute, ast.Subscript)) or _root(node) is None:
        return False
    while isinstance(node, ast.Subscript):
        node = node.value
    return isinstance(node, ast.Attribute)


def _dump(node) -> str:
    """`ast.dump(node)`, written out for the nodes state is made of (ast.dump's generic walk was a
    third of this rule's time); the same text, so keys and the order they sort in are unchanged."""
    kind = node.__class__
    if kind is ast.Name:
        return f"Name(id={node.id!r}, ctx={type(node.ctx).__name__}())"
    if kind is ast.Attribute:
        return f"Attribute(value={_dump(node.value)}, attr={node.attr!r}, ctx={type(node.ctx).__name__}())"
    if kind is ast.Subscript:
        return f"Subscript(value={_dump(node.value)}, slice={_dump(node.slice)}, ctx={type(node.ctx).__name__}())"
    if kind is ast.Constant and node.kind is None:
        return f"Constant(value={node.value!r})"
    return ast.dump(node)


def _tested(test) -> Dict[str, ast.AST]:
    return {_dump(sub): sub for sub in walk(test) if _state(sub)}


def _assigned(body, submodules=()) -> Set[str]:
    """The state a body stores to; `self.cache[key] = ...` stores to `self.cache[key]` and fills
    the container `self.cache` (a `key not in self.cache` test reads that). `submodules`: the
    class's submodule attributes, whose in-place moves store nothing new."""
    return _stored([sub for stmt in body for sub in walk(stmt)], submodules)


def _stored(nodes, submodules=()) -> Set[str]:
    out = set()
    for sub in nodes:
        cls = sub.__class__
        if cls is not ast.Assign and cls is not ast.AnnAssign and cls is not ast.AugAssign:
            continue
        if cls is ast.Assign and _module_moved(sub, submodules):
            continue
        for t in sub.targets if cls is ast.Assign else [sub.target]:
            if _state(t):
                out.add(_load_dump(t))
                if isinstance(t, ast.Subscript) and _state(t.value):
                    out.add(_load_dump(t.value))
    return out


# Method node → the `self` state it assigns. The language server walks the module level (every
# class) on each edit, and its re-parse keeps the node of an unchanged method: worked out once.
_SELF_STATE: "weakref.WeakKeyDictionary[ast.AST, frozenset]" = weakref.WeakKeyDictionary()
# Function node → its assignments; → all the state it assigns (each worked out once per function:
# every class and every `if` with a state test asks).
_STORES: "weakref.WeakKeyDictionary[ast.AST, list]" = weakref.WeakKeyDictionary()
_ALL_STATE: "weakref.WeakKeyDictionary[ast.AST, frozenset]" = weakref.WeakKeyDictionary()
_STORE_KINDS = frozenset((ast.Assign, ast.AnnAssign, ast.AugAssign))


def _stores(fn, of_kinds) -> list:
    """The assignments of a function (`of_kinds`: `RuleContext.of_kinds`), in walk order."""
    got = _STORES.get(fn)
    if got is None:
        got = _STORES[fn] = of_kinds(fn, _STORE_KINDS)
    return got


def _all_state(fn, of_kinds) -> frozenset:
    """All the state a function assigns anywhere (no store an `if` of it makes is outside)."""
    got = _ALL_STATE.get(fn)
    if got is None:
        got = _ALL_STATE[fn] = frozenset(_stored(_stores(fn, of_kinds)))
    return got


def _self_state(method, of_kinds) -> frozenset:
    """The `self` state a method (`of_kinds`: `RuleContext.of_kinds`) assigns."""
    if method not in _SELF_STATE:
        _SELF_STATE[method] = frozenset(k for k in _stored(_stores(method, of_kinds)) if "id='self'" in k)
    return _SELF_STATE[method]


def _only_state(test) -> bool:
    """A test of `self`'s attributes and constants only: a method setting one of them flips the
    test on the next call, whatever the input (unlike `if seq_len > self.weights.size(0):`)."""
    nodes = walk(test)
    names = [n for n in nodes if isinstance(n, ast.Name)]
    calls = [n for n in nodes if isinstance(n, ast.Call)]
    return bool(names) and not calls and all(n.id == "self" for n in names)


def _sized(test, state) -> bool:
    """The test reads the state's size (`self.rel_indices.shape[1] != N`, `len(self.cache) < n`): a
    cache resized to the input, whose recompile is a size guard that automatic dynamic shapes absorb
    (and that an eager warm-up call already settles: timm's convit, truth corpus)."""
    key = _dump(state)
    for sub in walk(test):
        if isinstance(sub, ast.Attribute) and sub.attr == "shape" and _dump(sub.value) == key:
            return True
        if isinstance(sub, ast.Call) and sub.args[:1] and isinstance(sub.func, ast.Name) and sub.func.id == "len" \
                and _dump(sub.args[0]) == key:
            return True
        if isinstance(sub, ast.Call) and isinstance(sub.func, ast.Attribute) and sub.func.attr == "size" and \
                _dump(sub.func.value) == key:
            return True
    return False


def _clears_only(body, key: str) -> bool:
    """Every store of the body to the state `key` is `= None`: the branch only clears it."""
    values = [sub.value for stmt in body for sub in walk(stmt) if isinstance(sub, ast.Assign)
              and any(_state(t) and _load_dump(t) == key for t in sub.targets)]
    return bool(values) and all(isinstance(v, ast.Constant) and v.value is None for v in values)


def _valued_state(class_node, of_kinds) -> frozenset:
    """The `self` state any method of the class stores a value other than None to."""
    out = set()
    for method in class_node.body:
        if isinstance(method, (ast.FunctionDef, ast.AsyncFunctionDef)):
            stores = [sub for sub in _stores(method, of_kinds)
                      if not (isinstance(sub.value, ast.Constant) and sub.value.value is None)]
            out |= {k for k in _stored(stores) if "id='self'" in k}
    return frozenset(out)


def _load_dump(node) -> str:
    return _dump(node).replace("ctx=Store()", "ctx=Load()")


def _module_moved(node: ast.Assign, submodules) -> bool:
    """`self.classifier = self.classifier.to(self.dtype)` on a submodule: `nn.Module.to` casts in
    place and returns the same module, so no guard fails (nllb-moe's router; measured on torch
    2.11, the truth corpus's nllb-moe variant)."""
    target, value = node.targets[0], node.value
    return len(node.targets) == 1 and isinstance(target, ast.Attribute) and isinstance(target.value, ast.Name) \
        and target.value.id == "self" and target.attr in submodules and isinstance(value, ast.Call) \
        and isinstance(value.func, ast.Attribute) and value.func.attr in MODULE_MOVES \
        and _dump(value.func.value) == _load_dump(target)


def later_reads(project: ProjectContext, findings) -> list:
    """The findings (of first-call state read by a condition) that another finding reading the
    same state in the same frame of the same compiled root comes before, in either mode that
    places both. One frame fills every copy of a cache on its first call and recompiles once, at
    the first guard that fails: the same state (`self.attention_bias_cache`) read in several
    classes of one frame is named only where the frame reads it first (timm's levit and
    efficientformer_v2: the recompile is at `Attention`'s cache, never at `AttentionDownsample`'s
    after it; truth, torch 2.11)."""
    if len(findings) < 2:
        return []
    modules = {s.path: s.module for s in project.summaries}
    seen, first = set(), set()
    chosen: Dict[tuple, bool] = {}  # execution_order's answers, the same in both modes
    for mode in F.MODES:
        fr = project.frames(mode)
        groups: Dict[tuple, list] = {}
        for f in findings:
            if f.region is None or f.region.mode not in ("any", mode):
                continue
            fid = f"{modules.get(f.path)}.{f.function}"
            state = f.arg("state")  # the state the condition reads
            groups.setdefault((f.region.root, F.frame_of(fr, fid), state), []).append((fid, f))
        order = None  # the walk of every frame's calls, only when some state is read twice
        for members in groups.values():
            if len(members) < 2:  # read once: it stays, whatever another mode's frame says
                seen.add(id(members[0][1]))
                first.add(id(members[0][1]))
                continue
            order = order if order is not None else F.execution_order(fr, fr.chosen if fr.chosen is not None else chosen)
            members = [((order[fid], f.span.row), id(f)) for fid, f in members if fid in order]
            seen.update(i for _, i in members)
            if members:
                first.add(min(members)[1])
    return [f for f in findings if id(f) in seen and id(f) not in first]


class FirstCallState(Rule):
    """
    ## What it does
    Finds state that compiled code sets on its first call and then reads in a condition (state of
    `self` or of an argument, such as a cache object):
    `if self.cache is None: self.cache = ...`, `if not self.warmed_up: self.warmed_up = True`,
    `if self.seed == 0: self.seed = ...` inside a compiled `forward`, caches filled on the first
    call (`if key not in self.cache: self.cache[key] = ...`, timm's attention-bias cache in eval),
    flags a method called from the branch sets (`if self.training == self.rescaled:
    self._rescale()`, transformers' rwkv),
    and flags flipped after the condition that read them (`if self.first: ...` then
    `self.first = False`).

    ## Why is this bad?
    Dynamo guards on the value the condition read (`self.cache is None`, `self.warmed_up ==
    False`). The first call changes it, so the second call fails the guard and recompiles
    (measured on torch 2.13: 1 recompile for each of the three forms; a dict cache fails
    `not ___dict_contains('cpu', self.attention_bias_cache)`, 1 recompile, none when the cache is
    filled in `__init__` or only under `torch.jit.is_tracing()`). A branch that only clears the
    state (`if self.pending is not None: ...; self.pending = None`) changes it on the first call
    only when it held a value: reported where the class stores one there (1 recompile when
    `__init__` does), never for state nothing gives a value (an argument's `.grad` cleared by a
    helper, an attribute only ever set to None: no recompile, measured on torch 2.13). Under
    `torch.compiler.set_stance("fail_on_recompile")` (vLLM) that is an error, and the first graph
    is compiled for a state the model never returns to.

    ## Example
    ```python
    def forward(self, x):
        if self.cache is None:
            self.cache = torch.zeros(x.shape[-1])
        return x + self.cache
    ```

    ## Use instead
    Initialize the state in `__init__` (a registered buffer for tensors), or run one eager
    warm-up call before compiling.

    ## References
    https://docs.pytorch.org/docs/stable/compile/programming_model.recompilation.html
    """

    code = "CL407"
    name = "first-call-state"
    kind = "recompile"
    severity = "warning"
    message = ("state set on the first call and read by this condition recompiles once (the guard fails on "
               "the second call): initialize it in __init__, or warm up eagerly before compiling")

    def __init__(self, ctx):
        super().__init__(ctx)
        self.locals: Dict[int, Set[str]] = {}  # function (by id) → names assigned in it so far
        # function (by id) → state read by its conditions so far: dump → (condition, expression)
        self.tested: Dict[int, Dict[str, tuple]] = {}
        self.reported: Set[int] = set()
        # class name → method name → the `self` state it assigns (plain strings: the rule-state
        # contract, `compilelint.rule.OBJECT_ID_FLOOR`)
        self.methods: Dict[str, Dict[str, frozenset]] = {}
        self.valued: Dict[str, frozenset] = {}  # class name → the `self` state it stores a value (not None) to

    def visit_ClassDef(self, node: ast.ClassDef):
        self.methods[node.name] = {m.name: _self_state(m, self.ctx.of_kinds) for m in node.body
                                   if isinstance(m, (ast.FunctionDef, ast.AsyncFunctionDef))}
        self.valued[node.name] = _valued_state(node, self.ctx.of_kinds)

    def _may_hold_value(self, state: ast.AST) -> bool:
        """Can `state` hold a value (not None) before a call? `self` state that a method of the class
        stores a value to; not the attribute of an argument (`store.grad`), which nothing in sight
        gives one."""
        if _root(state) != "self":
            return False
        cls = self.ctx.cls
        valued = self.valued.get(cls.info.qualname.rsplit(".", 1)[-1]) if cls is not None else None
        return valued is None or _load_dump(state) in valued

    def _say(self, condition, expr):
        if id(condition) in self.reported:
            return
        self.reported.add(id(condition))
        # at the state read (not the whole test): a read after `torch.jit.is_tracing() and ...`
        # never runs under Dynamo, and the project pass drops it by that guard
        state = ast.unparse(expr)
        self.report(expr, f"`{state}` is changed by the first call and read by this condition: "
                          "the second call fails the guard and recompiles; initialize it in __init__ (a "
                          "buffer for tensors), or warm up eagerly before compiling", args=(("state", state),))

    def visit_Assign(self, node: ast.Assign):
        fn = self.ctx.function
        if fn is None:
            return
        self.locals.setdefault(id(fn), set()).update(t.id for t in node.targets if isinstance(t, ast.Name))
        # a flag flipped after the condition that read it: `if self.first: ...` then `self.first = False`
        tested = self.tested.get(id(fn), {})
        if isinstance(node.value, ast.Constant):
            # the most specific read first (`x.ptrs[r]` rather than `x.ptrs`), as visit_If chooses:
            # a set's order would make the message depend on PYTHONHASHSEED
            for key in sorted(_assigned([node]), key=lambda k: (-len(k), k)):
                if key in tested and not (node.value.value is None and not self._may_hold_value(tested[key][1])):
                    self._say(*tested[key])

    def _assigned_by_calls(self, body) -> Set[str]:
        """State stored by this class's methods that the body calls (`self._rescale_layers()`
        setting `self.layers_are_rescaled`): the body's own calls, one level deep."""
        cls = self.ctx.cls
        methods = self.methods.get(cls.info.qualname.rsplit(".", 1)[-1], {}) if cls is not None else {}
        out = set()
        for stmt in body:
            for sub in walk(stmt):
                if isinstance(sub, ast.Call) and isinstance(sub.func, ast.Attribute) and \
                        isinstance(sub.func.value, ast.Name) and sub.func.value.id == "self" and \
                        sub.func.attr in methods:
                    out |= methods[sub.func.attr]
        return out

    def _counters(self, body) -> Set[str]:
        """The module's number attributes (set to a number in `__init__`) that the body changes
        with `+=` and the like: module-scalar-mutation (CL401) reports them at the change."""
        cls = self.ctx.cls
        if cls is None:
            return set()
        return {_load_dump(sub.target) for stmt in body for sub in walk(stmt)
                if isinstance(sub, ast.AugAssign) and self_attr(sub.target) in cls.init_numbers}

    def visit_If(self, node: ast.If):
        fn = self.ctx.function
        if fn is None or self.ctx.is_tensor(node.test):
            return  # a tensor-valued condition breaks instead (CL104)
        made = self.locals.get(id(fn), set())
        # only state that outlives the call: self's or an argument's (a cache object passed in),
        # not an object this call made
        tested = {k: e for k, e in _tested(node.test).items() if _root(e) not in made}
        if not tested:
            return
        self.tested.setdefault(id(fn), {}).update((k, (node.test, e)) for k, e in tested.items())
        submodules = self.ctx.cls.info.submodules if self.ctx.cls is not None else {}
        fn_node = self.ctx.function_node
        if fn_node is not None and _all_state(fn_node, self.ctx.of_kinds).isdisjoint(tested):
            hits = set()  # the function stores none of it anywhere (most tests): no walk of the body
        else:
            hits = {k for k in set(tested) & _assigned(node.body, submodules) if not _sized(node.test, tested[k])}
        if hits:
            hits -= self._counters(node.body)  # a number the branch counts up is CL401's, every call
        # a branch that only clears the state (`x.grad = None`) changes it on the first call only
        # when it held a value before: never, for state nothing stores a value to
        hits = {k for k in hits if not _clears_only(node.body, k) or self._may_hold_value(tested[k])}
        if not hits and _only_state(node.test):  # `if self.training == self.rescaled: self._rescale()`
            hits = set(tested) & self._assigned_by_calls(node.body)
        if hits:  # the most specific read: `x.is_updated[i]` rather than its container
            self._say(node.test, tested[max(sorted(hits), key=len)])

    @classmethod
    def check_project(cls, project: ProjectContext):
        """Only the first read of one state in one frame stays (`later_reads`)."""
        for finding in later_reads(project, project.findings_of(cls.code)):
            project.withdraw(finding)

    INVALID = [
        """
import torch
from torch import nn

class Cached(nn.Module):
    def __init__(self):
        super().__init__()
        self.cache = None
        self.warmed_up = False

    def forward(self, x):
        if self.cache is None:  # <-
            self.cache = torch.zeros(x.shape[-1])
        if not self.warmed_up:  # <-
            self.warmed_up = True
            return x * 2
        return x + self.cache

class Sampler(nn.Module):
    def __init__(self):
        super().__init__()
        self.first = True

    def forward(self, x):
        if self.first:  # <-
            x = x * 2
        self.first = False
        return x

class Attention(nn.Module):
    def forward(self, x, past_key_values, layer_idx: int):
        if not past_key_values.is_updated[layer_idx]:  # <-
            past_key_values.is_updated[layer_idx] = True
        return x

class Rescaled(nn.Module):  # rwkv: a flag set by a method the branch calls
    def __init__(self):
        super().__init__()
        self.layers_are_rescaled = False

    def _rescale(self):
        self.layers_are_rescaled = not self.training

    def forward(self, x):
        if self.training == self.layers_are_rescaled:  # <-
            self._rescale()
        return x

class BiasCache(nn.Module):  # timm's get_attention_biases: a dict filled on the first eval call
    def __init__(self):
        super().__init__()
        self.bias = nn.Parameter(torch.zeros(4))
        self.attention_bias_cache = {}

    def forward(self, x):
        if self.training:
            return x + self.bias
        key = str(x.device)
        if key not in self.attention_bias_cache:  # <-
            self.attention_bias_cache[key] = self.bias * 1
        return x + self.attention_bias_cache[key]
""",
        """
import torch
from torch import nn

class Attention(nn.Module):
    def __init__(self):
        super().__init__()
        self.bias = nn.Parameter(torch.zeros(4))
        self.attention_bias_cache = {}

    def forward(self, x):
        if self.training:
            return x + self.bias
        key = str(x.device)
        if key not in self.attention_bias_cache:  # <-
            self.attention_bias_cache[key] = self.bias * 1
        return x + self.attention_bias_cache[key]

class AttentionDownsample(nn.Module):
    def __init__(self):
        super().__init__()
        self.bias = nn.Parameter(torch.zeros(4))
        self.attention_bias_cache = {}

    def forward(self, x):
        if self.training:
            return x + self.bias
        key = str(x.device)
        if key not in self.attention_bias_cache:  # filled by the same first call: Dynamo names Attention's guard
            self.attention_bias_cache[key] = self.bias * 1
        return x + self.attention_bias_cache[key]

class Stage(nn.Module):
    def __init__(self, downsample):
        super().__init__()
        if downsample:
            self.downsample = AttentionDownsample()
        else:
            self.downsample = nn.Identity()
        self.blocks = nn.Sequential(Attention(), Attention())

    def forward(self, x):
        x = self.downsample(x)
        return self.blocks(x)

class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.stages = nn.Sequential(Stage(False), Stage(True))

    def forward(self, x):
        return self.stages(x)

model = torch.compile(Model())
""",
            """
import torch
from torch import nn

class Pending(nn.Module):
    def __init__(self):
        super().__init__()
        self.pending = torch.ones(4)  # a value before the first call, which clears it

    def forward(self, x):
        if self.pending is not None:  # <-
            x = x + self.pending
            self.pending = None
        return x * 2
""",
    ]

    VALID = [
        """
import torch
from torch import nn

class Cached(nn.Module):
    def __init__(self, n):
        super().__init__()
        self.register_buffer("cache", torch.zeros(n))
        self.scale = None
        if self.scale is None:  # __init__ is not compiled
            self.scale = 2.0

    def forward(self, x, past=None):
        if past is None:
            past = x
        if self.training:
            x = x * self.scale
        state = {"hits": 0}
        if state["hits"] == 0:  # an object made by this call: no guard outlives it
            state["hits"] = 1
        return x + self.cache + past

class BiasCache(nn.Module):
    def __init__(self):
        super().__init__()
        self.bias = nn.Parameter(torch.zeros(4))
        self.attention_bias_cache = {"cpu": self.bias * 1}  # filled before compiling

    def forward(self, x):
        key = str(x.device)
        if torch.jit.is_tracing() and key not in self.attention_bias_cache:  # never under Dynamo
            self.attention_bias_cache[key] = self.bias * 1
        return x + self.attention_bias_cache["cpu"]

class RelativeIndices(nn.Module):  # timm's convit: a buffer rebuilt when the input's length changes
    def __init__(self):
        super().__init__()
        self.register_buffer("rel_indices", torch.zeros(1, 1, 1, 3), persistent=False)

    def forward(self, x):
        n = x.shape[1]
        if self.rel_indices is None or self.rel_indices.shape[1] != n:  # a size guard: dynamic shapes absorb it
            self.rel_indices = torch.zeros(1, n, n, 3)
        return x + self.rel_indices.sum()
""",
            """
import torch
from torch import nn

def fold_pending(store, update):
    if store.grad is not None:  # only cleared here, and nothing gives an argument's grad a value
        update.add_(store.grad)
        store.grad = None
    store.mul_(0.9).add_(update, alpha=0.1)

class Running(nn.Module):
    def __init__(self):
        super().__init__()
        self.register_buffer("avg", torch.zeros(4))
        self.last = None

    def forward(self, x):
        fold_pending(self.avg, x.mean(0))
        if self.last is not None:  # the class stores only None there: the branch never runs
            x = x + self.last
            self.last = None
        return x * self.avg
""",
    ]
