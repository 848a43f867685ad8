import ast

from compilelint.analysis import tensors as T
from compilelint.analysis.astutil import is_class_name, is_own_class
from compilelint.analysis.super_reads import breaking_uses
from compilelint.fix import builder
from compilelint.rule import KNOWN_TORCH_VERSIONS, Rule, version_key
from compilelint.rules.debugger import DEBUGGER_CALLS
from compilelint.rules.rng_state import SEEDING
from compilelint.rules.warnings_warn import WARN_FUNCTIONS
from compilelint.torch_version import behaviours, measured_table

# fix builders, imported when a finding asks for its fix
dense_where_densified = builder("sparse_dense", "dense_where_densified")

# Dynamo's verdict on each call, measured per torch version by bench/measure/skipped_callables.py
# (data/untraceable-<version>.json): name → the versions where it breaks, newest first, and that
# version's row. Calls other rules report with their own advice are left to them.
OWNED_ELSEWHERE = SEEDING | WARN_FUNCTIONS | DEBUGGER_CALLS | {"copy.deepcopy", "builtins.print"}


def _breaking() -> dict:
    table = behaviours()["untraceable-call"]
    found: dict = {}
    for version in sorted(KNOWN_TORCH_VERSIONS, key=version_key, reverse=True):
        for name, row in measured_table(table["table"], version).items():
            if row.get("verdict") == table["verdict"] and name not in OWNED_ELSEWHERE:
                found.setdefault(name, ([], row))[0].append(version)
    return found


def _library_calls() -> dict:
    """Calls into libraries outside the checked tree that break inside them (data/library_calls-<version>.json):
    every spelling a row names (its dotted name and `exported_as`) → (the row's name, the versions
    where it breaks, newest first, and the newest breaking version's row)."""
    table = behaviours()["library-call"]
    found: dict = {}
    for version in sorted(KNOWN_TORCH_VERSIONS, key=version_key, reverse=True):
        for name, row in measured_table(table["table"], version).items():
            if row.get("verdict") == table["verdict"]:
                found.setdefault(name, ([], row))[0].append(version)
    return {spelling: (name, versions, row) for name, (versions, row) in found.items()
            for spelling in (name, *row.get("exported_as", ()))}


# nn.Module's hook registrations: each builds a RemovableHandle, which graph-breaks (torch 2.11: "Failed
# to trace builtin operator" at torch/utils/hooks.py, the truth corpus; 2.13: "setattr() on unsupported
# type", fixtures/precision/module_hooks.py, every one of the five).
MODULE_HOOKS = frozenset({"register_forward_pre_hook", "register_forward_hook", "register_full_backward_hook",
                          "register_full_backward_pre_hook", "register_backward_hook"})
MISSING_MODULE = frozenset({"ImportError", "ModuleNotFoundError"})
# Before torch 2.13 a store to an attribute of a class object (not an instance) graph-breaks (measured).
CLASS_ATTRIBUTE_STORE = "class-attribute-store-breaks"


def _guards_missing_module(stack, node) -> bool:
    """Is `node` in the body of a `try` (the innermost one around it) with a handler for a missing
    module?"""
    for holder, child in zip(reversed(stack[:-1]), reversed(stack)):
        if isinstance(holder, ast.Try) and any(child is s for s in holder.body):
            for handler in holder.handlers:
                caught = handler.type.elts if isinstance(handler.type, ast.Tuple) else [handler.type]
                if any(isinstance(c, ast.Name) and c.id in MISSING_MODULE for c in caught):
                    return True
            return False
        if isinstance(holder, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)):
            return False
    return False


BREAKING = _breaking()
LIBRARY_CALLS = _library_calls()
# The breaking calls whose probe returned a sparse tensor: their result skips the frame where it is used.
SPARSE = frozenset(name for name, (_, row) in BREAKING.items() if row.get("returns", "").startswith("Tensor(sparse"))


class UntraceableCall(Rule):
    """
    ## What it does
    Finds calls Dynamo cannot trace inside compiled code: clocks (`time.time()`,
    `time.perf_counter()`, `time.sleep()`…), `random.random()`-style calls, `json.dumps()`,
    `hashlib.sha256()`, `pickle.dumps()`, `open()`, `input()`, `sys.stdout.write()`,
    `importlib.import_module()`, file-system calls such as `os.listdir()`, `os.makedirs()`,
    `os.path.exists()`, `torch.jit.isinstance()`, `torch.sparse_coo_tensor()` and the sequence
    packing of `torch.nn.utils.rnn` (`pack_padded_sequence()`): every call whose
    measured verdict on the selected torch is "breaks". Also a module hook registered in compiled
    code (`register_forward_pre_hook()`, `register_forward_hook()` and the backward ones: the hook
    handle's constructor sets an attribute Dynamo cannot), and an import in a `try` whose handler
    catches `ImportError`/`ModuleNotFoundError`: where the module is missing, the case the handler
    is written for, Dynamo's import fails ("Import failure", GB0069).

    ## Why is this bad?
    These are C functions, I/O or functions of files Dynamo skips: it graph-breaks at each call
    ("Attempted to call function marked as skipped", GB0007; `json.dumps`, `sys.stdout.write`,
    `datetime.now`: "Unsupported method call", GB0156; `open`/`input`: "Failed to trace builtin
    operator", GB0059). `time.*` and `random.random()` also recompile on the next call: the value
    they return is guarded as a constant. A break inside `with open(...)` makes the rest of the
    frame run eager (GB0142). No config knob helps. `os.environ.get()`, `os.getenv()`,
    `os.path.join()`, `random.randint()` and `random.uniform()` trace cleanly and are not
    reported; `copy.copy()` and `importlib.util.find_spec()` break on torch 2.11 and trace from
    2.13, so they are reported only for 2.11. A call on the way to a `raise` (in the raised
    message, or with a `raise` after it in its block) is on a path that fails either way and is
    not reported.

    ## How the calls are known
    Measured, not written by hand: `bench/measure/skipped_callables.py`, run under each measured
    torch, asks Dynamo's trace rules (`torch._dynamo.trace_rules.lookup`) about every public
    callable of the stdlib modules model code calls and of `torch`, `torch.jit` and `torch.sparse`
    (and the sequence functions of `torch.nn.utils.rnn`), then compiles a small call of each one whose arguments it can build and counts the graph breaks
    (twice, to see a recompile). Dynamo special-cases some functions of skipped files, so only a
    call whose probe broke is reported; the verdicts are `compilelint/data/untraceable-<torch>.json`,
    read for the torch the findings speak of (`--torch-version`). Calls into other libraries that
    break inside them (a data-dependent branch in the library's body) are rows of
    `compilelint/data/library_calls-<torch>.json`, each with the reason Dynamo gave and the run
    that measured it; a row may name the calls that break (`when`: a keyword argument that is not
    a constant, as a base class's constructor that sorts its keywords; "built object": a method
    of an object the compiled function builds, `Op(a, b).to_dense()`, where Dynamo cannot resume
    after the break and runs the rest of the function eager; "own frame": a function that traces
    when called from compiled code, as the library registers it with `allow_in_graph`, but breaks
    when code Dynamo runs eager, after a break it cannot resume from, calls it and Dynamo compiles
    its frame; "held module": the `forward` of a module of that class the object holds, called
    as `self.sub(x)`; "entered": a context manager whose `__enter__` breaks, reported where `with`
    enters it) and the other names the library exports it under (`exported_as`);
    `super().__init__(...)` runs the first base's.

    A property overriding its base's and reading it through `super()` (`@property def size(self):
    size = super().size`): Dynamo does not run the base's getter there and keeps the value
    unresolved, so the first use that needs it breaks, a method call on it ("Unsupported method
    call") or a comparison of it or its attribute (`size.dtype == torch.float16`: "Unresolved
    GetAttrVariable comparison", GB6215; torch 2.11: "Builtin `operator.*` comparison with constant
    `self` failed", the truth corpus); reported at that first use on each path (analysis/super_reads.py;
    measured: fixtures/precision/super_property_read.py). Compute the base's value in a plain
    method both properties call (`super().extent()` traces).

    On torch before 2.13 a store to an attribute of a class object breaks too (`cls._state =
    state` in a classmethod, `type(self).calls += 1`, `self.__class__.value = v`, `Registry.last =
    v`: "Failed to trace builtin operator", `setattr` on a type; the truth corpus); torch 2.13
    traces it (measured: fixtures/precision/class_attribute_store.py), so it is reported only for 2.11.

    ## Example
    ```python
    start = time.perf_counter()
    y = self.mlp(x)
    self.elapsed = time.perf_counter() - start
    ```

    ## Use instead
    Move the call out of the compiled region: time and log around the compiled call, read
    files in `__init__`, draw random numbers with `torch.rand` (traced) or pass them in.

    ## Fix safety
    Unsafe, offered only for a COO tensor the next statement densifies under a flag
    (`x = torch.sparse_coo_tensor(i, v, size)` then `if dense: x = x.to_dense() ...`, no `else`):
    the dense path builds it directly, `x.new_zeros(size).index_put_(tuple(i), v, accumulate=True)`,
    and the sparse construction moves under `else:` (fix/sparse_dense.py). `to_dense()` sums the values
    of a repeated index as `accumulate=True` does, but floating-point ones may sum in another order;
    the arguments are evaluated after the flag instead of before it. The sparse path keeps its findings.

    ## References
    https://meta-pytorch.github.io/compile-graph-break-site/gb/gb0007.html
    """

    code = "CL206"
    fix = "unsafe"  # a COO tensor densified under a flag → built dense on that path (fix/sparse_dense.py)
    name = "untraceable-call"
    message = "this call is not traceable and graph-breaks ({gb}): move it out of the compiled region"
    gb_types = ("Attempted to call function marked as skipped", "Unsupported method call",
                "Failed to trace builtin operator", "Unsupported context manager", "Attempted to wrap sparse Tensor",
                "Import failure", "setattr() on unsupported type", "Unresolved GetAttrVariable comparison")
    gb_ids = {"2.13": ("GB0007", "GB0156", "GB0059", "GB0142", "GB0015", "GB0069", "GB0467", "GB6215"),
              "2.11": ("GB0007", "GB0156", "GB0059", "GB0142", "GB0015", "GB0069")}

    def __init__(self, ctx):
        super().__init__(ctx)
        self.sparse: dict = {}  # (function, local) → row where a skipped sparse constructor bound it

    def visit_Assign(self, node: ast.Assign):
        for t in node.targets:
            self._class_attribute_store(t, node)
        if isinstance(node.value, ast.Call) and self.ctx.resolve(node.value.func) in SPARSE:
            for t in node.targets:
                if isinstance(t, ast.Name):
                    self.sparse[(id(self.ctx.function_node), t.id)] = node.lineno

    def visit_AugAssign(self, node: ast.AugAssign):
        self._class_attribute_store(node.target, node)

    def _class_attribute_store(self, target: ast.AST, node: ast.AST):
        """`cls._state = v` in a classmethod, `type(self).n += 1`, `self.__class__.x = v`, `Registry.x = v`:
        a store to an attribute of a class object, which torch 2.11 cannot trace (STORE_ATTR on a
        class: "Failed to trace builtin operator `setattr`" with argument types ['type', ...]; the truth
        corpus, a settings class's `__enter__` setting its class-level state). torch 2.13 traces it
        (fixtures/precision/class_attribute_store.py)."""
        if isinstance(target, ast.Attribute) and self.ctx.function_node is not None and \
                self._is_class_object(target.value) and not self.on_the_way_to_raise():
            self.report(node, f"storing `{ast.unparse(target)}`, an attribute of a class object: this torch "
                              "graph-breaks there ({gb2}; torch 2.13 traces it); keep run-time state on the "
                              "instance or set it outside the compiled region", behaviour=CLASS_ATTRIBUTE_STORE)

    def _is_class_object(self, value: ast.AST) -> bool:
        """Is `value` a class object: the receiver's class (`cls`, `type(self)`, `self.__class__`), or
        a name the imports or the module bind to a class (`Counter`, not a local)?"""
        if is_own_class(value, self.ctx.function_node):
            return True
        if isinstance(value, ast.Name) and value.id not in self.ctx.locals:
            name = self.ctx.resolve(value)
            return bool(name) and is_class_name(name)
        return False

    def visit_Name(self, node: ast.Name):
        if not self.sparse:  # most files bind no sparse tensor: nothing to look up
            return
        key = (id(self.ctx.function_node), node.id)
        row = self.sparse.get(key)
        if row is not None and isinstance(node.ctx, ast.Load) and node.lineno > row:
            del self.sparse[key]  # the first use skips the frame; nothing after it is traced
            self.report(node, f"`{node.id}` holds a sparse tensor: using it in compiled code skips the frame "
                              "({gb4}); stay dense, or build and use it outside the compiled region")

    def visit_Compare(self, node: ast.Compare):
        self._super_property_use(node)

    def _super_property_use(self, node: ast.AST) -> bool:
        """The first use that needs the value of a base's property read through `super()` in the
        property overriding it (`m = super().mean; m.view(...)`): Dynamo leaves the getter unrun
        and breaks there (analysis/super_reads.py)."""
        fn = self.ctx.function_node
        use = breaking_uses(fn).get(id(node)) if fn is not None else None
        if use is None:
            return False
        kind, name = use
        gb = "{gb1}" if kind == "method" else "{gb7@2.13}; torch 2.11: \"Builtin `operator.*` comparison failed\""
        self.report(node, f"`super().{name}` in the property overriding it: Dynamo does not run the base's getter, "
                          f"and this {'method call on' if kind == 'method' else 'comparison of'} the unresolved value "
                          f"graph-breaks ({gb}): compute the base's value in a plain method both can call")
        return True

    def visit_Call(self, node: ast.Call):
        if self._super_property_use(node):
            return
        if isinstance(node.func, ast.Attribute) and node.func.attr in MODULE_HOOKS:
            self._hook_registration(node)
            return
        name = self.ctx.resolve(node.func)
        library = LIBRARY_CALLS.get(name or self._super_init(node))
        if library is not None:
            self._library_call(node, *library)
            return
        built = self._built_method(node) or self._held_module_call(node)
        if built is not None:
            self._library_call(node, *built)
            return
        measured = BREAKING.get(name) if name else None
        if measured is None or self.on_the_way_to_raise():
            return
        versions, row = measured
        fix = None
        # On a torch where the table does not say "breaks", the project pass drops the finding.
        behaviour = "" if len(versions) == len(KNOWN_TORCH_VERSIONS) else f"untraceable-call:{name}"
        short = name[9:] if name.startswith("builtins.") else name
        gb = self.placeholder(row.get("gb_type"))
        if row.get("recompiles"):
            message = (f"`{short}()` graph-breaks{gb} and recompiles on the next call (its value is guarded as a "
                       "constant): measure or draw it outside the compiled region")
        elif name.split(".", 1)[0] in ("random", "uuid"):
            message = f"`{short}()` graph-breaks{gb}: use torch.rand/torch.randint (traced) or pass the value in"
        elif name in ("builtins.open", "io.open"):
            message = ("`open()` graph-breaks ({gb2}); inside `with` the rest of the frame runs eager ({gb3}): read "
                       "files outside the compiled region")
        elif name in SPARSE:
            message = (f"`{short}()` is skipped by Dynamo and graph-breaks{gb}; using its sparse result skips the "
                       "frame: build it outside the compiled region, or stay dense")
            if name == "torch.sparse_coo_tensor":
                fix = dense_where_densified(self.ctx, node)
        elif name.startswith("torch.nn.utils.rnn."):
            message = (f"`{short}()` is skipped by Dynamo and graph-breaks{gb}: pack outside the compiled region, "
                       "or keep the padded tensor and a mask")
        else:
            message = f"`{short}()` is not traceable and graph-breaks: move it out of the compiled region"
        self.report(node, message, behaviour=behaviour, fix=fix)

    def visit_Import(self, node: ast.Import):
        self._optional_import(node)

    def visit_ImportFrom(self, node: ast.ImportFrom):
        self._optional_import(node)

    def _hook_registration(self, node: ast.Call):
        """`module.register_forward_pre_hook(fn)` and its kin build a `RemovableHandle`, whose
        constructor sets an attribute Dynamo cannot (measured: fixtures/precision/module_hooks.py)."""
        if self.ctx.kind(node.func.value) in T.TENSORISH or self.on_the_way_to_raise():
            return
        self.report(node, f"`{node.func.attr}()` inside compiled code graph-breaks (the hook handle's constructor "
                          "sets an attribute Dynamo cannot trace): register the hook once, outside the compiled "
                          "region, and let it read what changes per call from the module")

    def _optional_import(self, node):
        """An import in a function, in a `try` whose handler catches the module missing: where it is
        missing (the case the handler is written for), Dynamo's import fails and graph-breaks."""
        if self.ctx.function_node is None or not _guards_missing_module(self.ctx.stack, node):
            return
        what = f"from {'.' * node.level}{node.module or ''} import" if isinstance(node, ast.ImportFrom) else "import"
        self.report(node, f"`{what} ...` inside compiled code graph-breaks ({{gb5}}) where the module is not "
                          "installed, the case its `except ImportError` is written for: import it once at module "
                          "level, or pick the implementation outside the compiled region")

    def _built_method(self, node: ast.Call):
        """A row for `box.method(...)` where the function built `box` (`box = Box(x)`, `Box(x).method()`)
        of a class outside the checked tree: `<class>.<method>`, a row measured on such objects
        (`when`: "built object")."""
        func = node.func
        return self._built_row(func.value, func.attr) if isinstance(func, ast.Attribute) else None

    def _built_row(self, box: ast.AST, method: str):
        cls = self.ctx.constructed(box)
        row = LIBRARY_CALLS.get(f"{cls}.{method}") if cls else None
        return row if row is not None and row[2].get("when") == "built object" else None

    def visit_BinOp(self, node: ast.BinOp):
        """`box @ x` runs `box.__matmul__(x)` (Python's operator protocol): a row for that method of
        an object the function built, as for a call of it."""
        if isinstance(node.op, ast.MatMult):
            built = self._built_row(node.left, "__matmul__")
            if built is not None:
                # at the object the method runs on: the break rests on what it is, not on whether
                # the other operand is a tensor (a return assumed one: `Project.returns_tensor`)
                self._library_call(node.left, *built)

    def _held_module_call(self, node: ast.Call):
        """A row for `self.sub(x)` where `__init__` stores in `self.sub` one class outside the
        checked tree: calling the module runs `<class>.forward`, a row measured on such calls
        (`when`: "held module")."""
        func = node.func
        if not (isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name) and func.value.id == "self"
                and self.ctx.cls is not None):
            return None
        held = self.ctx.cls.info.submodules.get(func.attr, [])
        row = LIBRARY_CALLS.get(f"{held[0]}.forward") if len(held) == 1 else None
        return row if row is not None and row[2].get("when") == "held module" else None

    def _super_init(self, node: ast.Call) -> str:
        """`super().__init__(...)` in a class whose first base is imported: that base's dotted name
        (the constructor the call runs), else ""."""
        func = node.func
        if not (isinstance(func, ast.Attribute) and func.attr == "__init__" and isinstance(func.value, ast.Call)
                and isinstance(func.value.func, ast.Name) and func.value.func.id == "super"):
            return ""
        bases = self.ctx.cls.info.bases if self.ctx.cls is not None else []
        return bases[0] if bases else ""

    def _library_call(self, node: ast.AST, name: str, versions: list, row: dict):
        """A call the measured table says breaks inside its library (on `versions`)."""
        keyword_breaks = row.get("when") == "non-constant keyword"
        if keyword_breaks and not any(kw.arg is not None and not isinstance(kw.value, ast.Constant)
                                      and self.ctx.kind(kw.value) != T.SCALAR for kw in node.keywords):
            return  # constant keywords only: the measured break needs a keyword that is not a constant
        if row.get("when") == "entered" and not self._entered(node):
            return  # measured where `with` enters it: its `__enter__` breaks, the construction alone does not
        if self.on_the_way_to_raise():
            return
        behaviour = "" if len(versions) == len(KNOWN_TORCH_VERSIONS) else f"library-call:{name}"
        short = name.rsplit(".", 1)[-1]
        what = f"constructing `{short}` with a keyword argument that is not a constant" if keyword_breaks else f"`{short}()`"
        if row.get("when") == "held module":
            what = f"calling the `{name.rsplit('.', 2)[-2]}` module this object holds (its `forward()`)"
        if row.get("when") == "own frame":
            # traced when inlined (one node of the graph); code that runs eager calls it from Python,
            # and Dynamo compiles its frame: kept by the project pass only where this function runs
            # eager, after (or in the frame of) a break Dynamo cannot resume from (placement.runs_eager)
            self.report(node, f"{what} runs as a frame of its own here (a break Dynamo cannot resume from makes this "
                              f"code run eager) and graph-breaks inside its library ({row.get('gb_type', 'measured')}"
                              f" at {row.get('where', name)}); traced from compiled code it is one node of the "
                              "graph: remove the break that makes this code run eager",
                        behaviour=behaviour, condition="own frame")
            return
        if row.get("when") == "entered":
            what = f"entering `{short}(...)` (`with`)"
        if row.get("when") == "built object":
            # Dynamo cannot rebuild the bound method of an object that exists only in the frame to
            # resume after the break: the rest of the frame runs eager (fixtures/precision/built_object_break.py)
            cls_name, method = name.rsplit(".", 2)[-2:]
            what = f"`@` on a `{cls_name}` built here" if method == "__matmul__" else f"`{cls_name}.{method}()` of an object built here"
            self.report(node, f"{what} graph-breaks inside its library ({row.get('gb_type', 'measured')} at "
                              f"{row.get('where', name)}) and Dynamo runs the rest of this function eager: build "
                              "and use it outside the compiled region", behaviour=behaviour, skips_frame=True)
            return
        self.report(node, f"{what} graph-breaks inside its library ({row.get('gb_type', 'measured')} at "
                          f"{row.get('where', name)}): call it outside the compiled region", behaviour=behaviour)

    def _entered(self, node: ast.Call) -> bool:
        """Is the call the context expression of a `with` item (`with ctx(0):` runs its `__enter__`)?"""
        parent = self.ctx.stack[-2] if len(self.ctx.stack) > 1 else None
        return isinstance(parent, ast.withitem) and parent.context_expr is node

    def on_the_way_to_raise(self) -> bool:
        """The call's statement raises, or a `raise` follows it in its block: the path fails either
        way (an error message built with `inspect.currentframe()` or `json.dumps(config)`), so
        its break costs a working model nothing."""
        stack = self.ctx.stack
        stmt = self.ctx.statement()
        if isinstance(stmt, ast.Raise):
            return True
        if stmt not in stack or stack.index(stmt) == 0:
            return False
        holder = stack[stack.index(stmt) - 1]
        for field in ("body", "orelse", "finalbody"):
            block = getattr(holder, field, None)
            if isinstance(block, list) and any(s is stmt for s in block):
                rest = block[[id(s) for s in block].index(id(stmt)) + 1:]
                return any(isinstance(s, ast.Raise) for s in rest)
        return False

    @classmethod
    def placeholder(cls, gb_type) -> str:
        """` ({gbN})` for a measured break title this rule declares, "" for another."""
        return f" ({{gb{cls.gb_types.index(gb_type)}}})" if gb_type in cls.gb_types else ""

    INVALID = [
        """
import json
import os
import random
import sys
import time
from time import perf_counter
import torch
from torch import nn

class Block(nn.Module):
    def forward(self, x):
        start = perf_counter()  # <-
        if torch.jit.isinstance(x, torch.Tensor):  # <-
            x = x + 1
        if random.random() < 0.1:  # <-
            x = x * 2
        sys.stdout.write("step\\n")  # <-
        meta = json.dumps({"n": 1})  # <-
        if os.path.exists("/tmp/dump"):  # <-
            os.makedirs("/tmp/dump/out", exist_ok=True)  # <-
        with open("/tmp/log.txt", "a") as f:  # <-
            pass
        time.sleep(0)  # <-
        return x

def pair_counts(a, b):
    counts = torch.sparse_coo_tensor(torch.stack((a, b)), torch.ones(a.shape[0]), (4, 4))  # <-
    return counts.to_dense()  # <-

class Counts(nn.Module):
    def forward(self, a, b):
        return pair_counts(a, b)

class Packer(nn.Module):
    def forward(self, x, lengths):
        packed = nn.utils.rnn.pack_padded_sequence(x, lengths, batch_first=True, enforce_sorted=False)  # <-
        return packed.data.sum()
""",
        """
import torch
from torch import nn

class Box:
    def __init__(self, lo, hi):
        self.lo, self.hi = lo, hi

    @property
    def size(self):
        return self.hi - self.lo

class PaddedBox(Box):
    @property
    def size(self):
        size = super().size
        if size.dtype == torch.float16:  # <-
            return size.float()
        return size

class Measure(nn.Module):
    def forward(self, x):
        return PaddedBox(x, x + 1).size
""",
    ]
    VALID = [
        """
import torch
from torch import nn

class Box:
    def __init__(self, lo, hi):
        self.lo, self.hi = lo, hi

    @property
    def size(self):
        return self.hi - self.lo

    def extent(self):
        return self.hi - self.lo

class PaddedBox(Box):
    @property
    def size(self):
        size = super().extent()
        if size.dtype == torch.float16:
            return size.float()
        return size

class Measure(nn.Module):
    def forward(self, x):
        return PaddedBox(x, x + 1).size
""",
        """
import os
import random
import importlib.util
import torch
from torch import nn

HAS_TRITON = importlib.util.find_spec("triton") is not None

class Block(nn.Module):
    def forward(self, x):
        if os.environ.get("BLOCK_DEBUG") == "1":
            x = x + 1
        path = os.path.join("a", "b")
        k = random.randint(0, 3)
        if torch.cuda.is_available() and x.device.type == "cuda":
            x = x * 2
        return x * k + len(path)

class Padder(nn.Module):
    def forward(self, a, b):
        return nn.utils.rnn.pad_sequence([a, b], batch_first=True).sum()

def open(path):  # shadows the builtin in this module
    return path

class Reader(nn.Module):
    def forward(self, x):
        open("weights")
        return x
""",
    ]
