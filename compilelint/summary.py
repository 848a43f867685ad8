"""Per-file summaries: the small, picklable facts the project-wide pass needs.

A file is parsed and walked once (in a worker, cacheable by content); what comes out is a
`FileSummary`: its classes (bases, submodule attributes), functions (decorators, calls they make,
candidate findings inside them) and the compile roots written in it. The project pass
(`regions.py`) then decides which functions torch.compile traces, without touching any tree.
"""
from __future__ import annotations

import hashlib
import pickle
from dataclasses import dataclass, field
from operator import itemgetter
from typing import Dict, List, Optional, Tuple

from compilelint.finding import Fix, Span

# A guard is (dotted predicate name, the value it must return for the code to run):
# `if not torch.compiler.is_compiling(): print(x)` puts print under ("torch.compiler.is_compiling", False).
Guard = Tuple[str, bool]
# `if self.training:` is kept as a guard too: it decides the mode (train/eval) a finding runs in.
TRAINING = "self.training"
# On a call: the caller put the called submodule in eval mode just before (`self.teacher.eval()`
# then `self.teacher(x)`): in what the call runs, every `self.training` is False whatever the
# mode of the compiled model (`Module.eval` sets it on the submodule and all its children).
EVAL_HELD = "eval-held"


@dataclass
class Candidate:
    """A pattern a rule saw; it becomes a Finding if its function is traced by torch.compile."""

    code: str
    message: str
    span: Span
    fix: Optional[Fix] = None
    guards: Tuple[Guard, ...] = ()
    # Extra condition checked by the project pass: "cudagraph" (only under CUDA-graph capture), "own
    # frame" (only where its function runs eager: after, or in the frame of, a frame-skipping break).
    condition: str = ""
    # The innermost `if` the code sits under, for the note ("txt_ids.ndim == 3"); "" when none.
    when: str = ""
    # Inside a loop of its function: a break there makes Dynamo skip the rest of the frame.
    in_loop: bool = False
    # Runs on every call of its function that meets `needs`: no loop, `try`, conditional expression
    # or early exit around it, and no `if` but tests of the function's optional arguments.
    every_call: bool = False
    # Boolean config attributes the `if`s around it need: (("is_encoder_decoder", True),).
    flags: Tuple[Tuple[str, bool], ...] = ()
    # Parameters defaulting to None that the `if`s around it need passed (`if ddp_data is not None:`).
    needs: Tuple[str, ...] = ()
    # When `when` reads `self.`: the `if` tests around it in its function, outermost first, as
    # (source, branch) — what `frames.runs_by_default` decides by the model's settings.
    tests: Tuple[Tuple[str, bool], ...] = ()
    # Untyped parameters `fix` holds for only when they are tensors: the fix is kept when every
    # traced call of the function passes a tensor for each (a caller in another file says so).
    fix_if_tensors: Tuple[str, ...] = ()
    # The measured Dynamo behaviour the break relies on (`data/torch_behaviour.toml`): on a torch
    # where it does not hold the candidate is no finding and no break.
    behaviour: str = ""
    # The message's data, (field, value) pairs (`rule.MessageArgs`): the finding carries them.
    args: Tuple[Tuple[str, str], ...] = ()
    # Returns of other files' functions the rule took for tensors, "<function>#<part>" (-1 the
    # whole result, i a tuple's i-th item): the project pass keeps the candidate only when each
    # function's return annotation says so (`Project.assumed_returns_hold`).
    assumes: Tuple[str, ...] = ()
    # A break Dynamo cannot resume after whatever its rule (one inside a method of an object the
    # frame built: `rules.untraceable_call`): the rest of the frame runs eager (`placement.frame_skips`).
    skips_frame: bool = False


class Call(tuple):
    """A call a function makes that may lead to more traced code.

    kind: "name" (target = dotted name), "self" (target = method name), "super" (method name),
    "attr" (target = attribute of self holding submodules, member = the method called on it),
    "chain" (as "attr", through the parts of parts: target = the attributes, dotted: `self.a.b.m()`),
    "method" (target = dotted class of the receiver, from an annotation; member = the method),
    "built" (as "method", the receiver an object this function constructs: `b = Box(x); b.peak()`),
    "property" (`self.target` read, not called: runs the getter when `target` is a property),
    "read" (as "method", an attribute `member` read, not called, of a receiver of a known class:
    runs the getter when it is a property).
    A "name" call to a class runs its `__init__`.
    A tuple underneath: summaries hold tens of thousands of these, and a warm run unpickles them
    all, several times faster than dataclass instances.
    """

    __slots__ = ()

    @classmethod
    def of(cls, kind: str, target: str, member: str, row: int, col: int, label: str,
           guards: Tuple[Guard, ...] = (), args: Optional[Tuple[int, Tuple[str, ...]]] = None,
           needs: Tuple[str, ...] = (), forwards: Tuple[Tuple[object, str], ...] = (),
           tensors: Tuple[object, ...] = (), same: Tuple[Tuple[object, ...], ...] = (),
           own_flags: Tuple[tuple, ...] = ()) -> "Call":
        return cls((kind, target, member, row, col, label, guards, args, needs, forwards, tensors, same, own_flags))

    kind = property(itemgetter(0))
    target = property(itemgetter(1))
    member = property(itemgetter(2))
    row = property(itemgetter(3))
    col = property(itemgetter(4))
    label = property(itemgetter(5))  # how the reach path shows it: "self.layers[i]", "rotate_half"
    guards = property(itemgetter(6))
    # (number of positional arguments, keyword names) the call passes; None when unknown (`*args`,
    # `**kw`, a function handed to another): `passed_args` reads it.
    args = property(itemgetter(7))
    # What the `if`s around the call need of the caller's own arguments (`passed_args.needed_params`).
    needs = property(itemgetter(8))
    # The caller's own optional parameters it hands on unchanged, as (positional index or keyword
    # name, parameter): `_compute_mask_indices(..., attention_mask=attention_mask)` gives
    # `attention_mask` only when its own caller gave it (`passed_args.Incoming`).
    forwards = property(itemgetter(9))
    # The arguments the caller knows to be tensors, as positional indexes and keyword names.
    tensors = property(itemgetter(10))
    # Groups of arguments that are one and the same local name (`attn(x, x, x)`: ((0, 1, 2),)),
    # as positional indexes and keyword names: `query is key` is true in the callee.
    same = property(itemgetter(11))
    # What the `if`s around the call need of the object's own attributes (`config_flags.own_flags`):
    # reach follows the call only for receivers whose class defaults allow it.
    own_flags = property(itemgetter(12))

    def unplaced(self) -> tuple:
        """The call without its row and column: what the graph key and `Project.callees` read."""
        return self[:3] + self[5:]


@dataclass
class Root:
    """Code handed to torch.compile in this file.

    target: dotted name of a function or class, member: a method (None: the function itself or the
    class's forward). `via` says how: "@torch.compile", "torch.compile(model)", "@support_torch_compile".
    """

    target: str
    member: Optional[str]
    via: str
    row: int
    cudagraph: bool = False
    # For `self.m = torch.compile(self.m)` the class is only known through an attribute.
    self_attr_of: Optional[str] = None


class Unpacked:
    """A record (function or class) read from the cache's pack keeps its fields pickled until one
    is asked for: a pass after an edit reads a few hundred of a big project's tens of thousands of
    functions, and unpickling all of them was most of loading the summaries. Anything that reads a
    field — an attribute, `==`, `repr`, pickling, `copy` — sees the record as it was written.

    A packed record is an instance of its class's packed twin (`_packed_class`), whose
    `__getattribute__` unpacks on the first read of anything but `__dict__` and turns the record
    back into its own class: a field with a default is also a class attribute (`is_generator =
    False`), which an instance without the field in its `__dict__` reads without ever reaching
    `__getattr__`."""

    __slots__ = ()

    def __getattr__(self, name):  # only for a name the object does not hold: a packed record's fields
        if not self._unpack():
            raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")
        return getattr(self, name)

    def __getstate__(self):
        self._unpack()
        return self.__dict__

    def _unpack(self) -> bool:
        return _unpack(self)


def _unpack(record) -> bool:
    state = object.__getattribute__(record, "__dict__")
    packed = state.pop("_packed", None)
    if packed is None:
        return False
    state.update(pickle.loads(packed))  # into an empty dict: the fields in their order
    cls = type(record)
    object.__setattr__(record, "__class__", getattr(cls, "_unpacked_class", cls))  # its own class again
    return True


_TWINS: dict = {}


def _packed_class(cls):
    """`cls`'s packed twin: the same class, reading any attribute but `__dict__` unpacks first."""
    twin = _TWINS.get(cls)
    if twin is None:
        def __getattribute__(self, name):
            if name != "__dict__":
                _unpack(self)
            return object.__getattribute__(self, name)

        twin = _TWINS[cls] = type(cls.__name__, (cls,), {"__slots__": (), "__getattribute__": __getattribute__,
                                                         "_unpacked_class": cls, "__module__": cls.__module__})
    return twin


def may_hold(record, text: str) -> bool:
    """False only when `record` holds no string equal to `text` (an identifier, a rule code), told
    without unpickling a packed record: a pickle writes each string it holds, the first time, as
    its UTF-8 bytes, and each packed record is pickled on its own. True for any other record."""
    packed = object.__getattribute__(record, "__dict__").get("_packed")
    return packed is None or text.encode() in packed


def packed_record(cls, fields: bytes):
    """A record of class `cls` whose fields (its `__dict__`, pickled) are unpickled on first use
    (`Unpacked`; the pack's pickler writes records this way: `cache.put_pack`)."""
    cls = getattr(cls, "_unpacked_class", cls)
    record = object.__new__(_TWINS.get(cls) or _packed_class(cls))
    object.__getattribute__(record, "__dict__")["_packed"] = fields  # not through the twin's own: ~47,000 a load
    return record


class DefRow(int):
    """A row in a rule's function facts, counted from the function's `def` (the facts of a function
    moved whole stay equal); `row_shift` moves it when lines are added or removed inside the
    function above it."""
    __slots__ = ()


@dataclass
class FunctionInfo(Unpacked):
    qualname: str  # inside the module: "Llama.forward", "rotate_half"
    row: int
    end_row: int
    decorators: List[str] = field(default_factory=list)  # dotted names (resolved through imports)
    is_generator: bool = False
    calls: List[Call] = field(default_factory=list)
    candidates: List[Candidate] = field(default_factory=list)
    # For project wrappers of compile predicates: the dotted names this function returns.
    returns_predicates: List[str] = field(default_factory=list)
    returns_only_predicates: bool = False
    # Per return statement, the predicates of its `or` chain (`return is_compiling() or is_jit()`).
    or_returns: List[Tuple[str, ...]] = field(default_factory=list)
    # Positional parameter names, `self` included: which argument a call's n-th positional fills.
    params: Tuple[str, ...] = ()
    # `setattr(fn, "_dynamo_marked_constant", True)`: a decorator making Dynamo take the result as
    # a constant instead of tracing (a `make_compile_constant`-style decorator).
    marks_constant: bool = False
    # Its loops (`for`, `while`, nested functions' too) as (first row, last row) counted from `row`:
    # a break inside one makes Dynamo skip the frame (`frames`).
    loops: List[Tuple[int, int]] = field(default_factory=list)
    # The bodies of its `try` statements (first row, last row), counted from `row`: a break inside
    # one makes Dynamo skip the frame, as in a loop (`placement.frame_skips`).
    tries: List[Tuple[int, int]] = field(default_factory=list)
    # Rule code → what that rule's `function_facts` said of the function (only where it said something).
    rule_facts: Dict[str, object] = field(default_factory=dict)
    # Per `return` that can run, the classes it constructs and references (`parts`): what a builder makes.
    returns_parts: Tuple[Tuple[str, ...], ...] = ()
    # What it puts into its object's containers, as (attribute or "" when named at run time,
    # "tensors" / "other"); the parameters it registers attributes by (`setattr(self, name, v)`);
    # its calls `self.m("name", ...)` with constant strings, as (m, ((position or keyword, name),
    # ...), the verdicts of their display arguments' elements): `self_items`.
    self_items: Tuple[Tuple[str, str], ...] = ()
    registers: Tuple[str, ...] = ()
    named_calls: Tuple[Tuple[str, Tuple[Tuple[object, str], ...], Tuple[str, ...]], ...] = ()
    # The object's containers it grows on every run (`self.xs.append(v)`, `.extend`, `.insert`,
    # `self.xs += [v]`, not under a branch), by attribute name: a list grown every call fails its
    # length guard every call (`self_items.grown_every_call`).
    grows: Tuple[str, ...] = ()
    # The parts of its result its return annotation says are tensors: -1 all, i a tuple's i-th.
    tensor_returns: Tuple[int, ...] = ()
    # A decorator's wrapper: the (first row, last row), counted from `row`, of the nested `def` it
    # returns that calls the decorated function (`analysis/wrappers.py`); () when there is none.
    wrapper: Tuple[int, ...] = ()
    # Modules it installs into another object (`setattr(parent, name, m)`, `parent.add_module(name,
    # m)`, `parent._modules[name] = m`): their parts, `@param:<name>` for a parameter installed; and
    # its calls of methods by `self.`/`cls.` that pass parts, as (method, ((position or keyword,
    # parts), ...)): `analysis/installs.py`, joined per class by `project_pass/installed.py`.
    installs: Tuple[str, ...] = ()
    # A property's getter returning `self.<attr>` plainly (`return bool(self.items)`): that attr.
    returns_attr: str = ""
    self_calls: Tuple[Tuple[str, tuple], ...] = ()


@dataclass
class ClassInfo(Unpacked):
    qualname: str
    row: int
    bases: List[str] = field(default_factory=list)  # dotted names
    decorators: List[str] = field(default_factory=list)
    methods: List[str] = field(default_factory=list)
    # self.<attr> → dotted names of the classes constructed into it (submodules, ModuleList members).
    submodules: Dict[str, List[str]] = field(default_factory=dict)
    # Class-level annotations and assignments naming a class (`config: Seq2SeqConfig`, `config_class = X`).
    attr_types: Dict[str, str] = field(default_factory=dict)
    # self.<attr> → the class an `__init__` parameter stored there is annotated with (`base: Encoder`,
    # `*blocks: Block` into a ModuleList): what it holds where no constructor call says.
    param_types: Dict[str, str] = field(default_factory=dict)
    # Class-level boolean defaults (`is_encoder_decoder: bool = True`); None when a method reassigns it.
    flags: Dict[str, Optional[bool]] = field(default_factory=dict)
    # self.<attr> → {class → the config flags `__init__` builds it under} (`X(config) if config.use_x else None`).
    submodule_flags: Dict[str, Dict[str, tuple]] = field(default_factory=dict)
    # self.<attr> → the config attribute `__init__` copies into it (`self.layerdrop = config.encoder_layerdrop`).
    config_attrs: Dict[str, str] = field(default_factory=dict)
    # self.<attr> → the `__init__` parameter (defaulting to a false constant) it is a plain copy of,
    # its only assignment in the class (`self.looped = looped`): `init_defaults`.
    init_defaults: Dict[str, str] = field(default_factory=dict)
    # self.<attr> → per assignment in `__init__` under `if`s: (the names its value calls, the
    # (test row counted from the class's row, branch) of each test it sits under, an `x if t else y`
    # value's own included): which branch builds which class (`frames.exclusive`, `execution_order`).
    built_under: Dict[str, List[Tuple[Tuple[str, ...], Tuple[Tuple[int, bool], ...]]]] = field(default_factory=dict)
    # self.<attr> → per assignment in `__init__` constructing classes: (those classes, the option
    # tests above it as (parameter, constants' reprs, branch), None where another test decides):
    # `Project.submodule_classes` leaves out a class no construction's arguments can choose.
    option_parts: Dict[str, List[tuple]] = field(default_factory=dict)
    # self.<attr> → what `__init__` stores there that other code decides (`parts`): the arguments
    # of a parameter (`@arg:heads`), a builder's returns (`@ret:pkg.build_head`, `@self:_make_layer`).
    parts: Dict[str, List[str]] = field(default_factory=dict)
    # Class-level dicts of classes (`layer_classes = {nn.Linear: ScaledLinear, ...}`): what a method
    # reading `cls.<name>` / `self.<name>` picks from, in the MRO of the instance it runs for.
    registries: Dict[str, List[str]] = field(default_factory=dict)
    # Its state (`analysis/state.py`): the truth of each class-level constant, of each constant
    # `__init__` stores in `self.<attr>` (None: something else), and attr → the other methods
    # storing into or filling it.
    state_defaults: Dict[str, bool] = field(default_factory=dict)
    init_state: Dict[str, Optional[bool]] = field(default_factory=dict)
    state_changes: Dict[str, Tuple[str, ...]] = field(default_factory=dict)
    # attr → the `__init__` parameter it is a plain copy of, and the constants its `super().__init__(...)`
    # passes, as (positional index or keyword, truth): `state.constructor_copies`.
    init_copies: Dict[str, str] = field(default_factory=dict)
    super_init_constants: Tuple[Tuple[object, bool], ...] = ()
    # Every attribute name it gives its instances ("*": any, under a run-time name): `state.class_attributes`.
    attributes: Tuple[str, ...] = ()
    # The key of a module-level dict of classes that picks this class when the user asks for that
    # implementation (`FALCON_ATTENTION_CLASSES = {"flash_attention_2": FalconFlashAttention2}`).
    chosen_by: str = ""


@dataclass
class FileSummary:
    path: str
    module: str
    functions: Dict[str, FunctionInfo] = field(default_factory=dict)
    classes: Dict[str, ClassInfo] = field(default_factory=dict)
    roots: List[Root] = field(default_factory=list)
    # Findings that hold wherever the code is (compile usage), already final candidates.
    anywhere: List[Candidate] = field(default_factory=list)
    noqa: Dict[int, Optional[Tuple[str, ...]]] = field(default_factory=dict)  # row → codes (None = all)
    file_noqa: Optional[Tuple[str, ...]] = None  # `# compilelint: noqa[: codes]`; () = every code
    cells: Tuple[Tuple[int, int], ...] = ()  # a notebook's (cell number, first row) per code cell
    # Imported names (local name → dotted), to follow re-exports like `from .layers import f` in __init__.
    aliases: Dict[str, str] = field(default_factory=dict)
    # Functions registered as custom ops here (a registrar of libraries.toml): opaque to Dynamo.
    opaque: List[str] = field(default_factory=list)
    # A class here overrides a swap decorator's eager-default hook (libraries.toml) with "eager",
    # so the forwards that decorator could replace run as written unless the user asks otherwise.
    swap_default_eager: bool = False
    # Constructor calls here that pass parts: (class called or "super()", the calling class or "",
    # ((positional index or keyword, the parts passed), ...)), joined by the project pass (`part_flow`).
    constructions: List[Tuple[str, str, tuple]] = field(default_factory=list)
    # Attributes its functions store on objects other than `self` (`module.flag = True`): `state`.
    foreign_stores: Tuple[str, ...] = ()
    # A hash of everything above the project pass reads, rows left out: an edit that changes no
    # call, class, root or import (most edits) leaves it as it was, and the pass's result with it.
    # Made when first read (`graph_key`): a run without a cache never reads it. Not in the repr,
    # which `names_in` reads for identifiers: a hash is none, made or not.
    _graph_key: str = field(default="", repr=False)

    @property
    def graph_key(self) -> str:
        if not self._graph_key:
            self._graph_key = self.compute_graph_key()
        return self._graph_key

    @graph_key.setter
    def graph_key(self, value: str) -> None:
        self._graph_key = value

    def with_candidates(self) -> List[Tuple[str, FunctionInfo]]:
        """(qualname, info) of the functions that have candidates, in order: the project pass
        visits only these, not the thousands of functions of a project with none (touching each
        of those costs more than the pass's work on the rest). A summary is not changed once made,
        so the answer is kept on it."""
        found = self.__dict__.get("_with_candidates")
        if found is None:
            found = self.__dict__["_with_candidates"] = [(q, f) for q, f in self.functions.items() if f.candidates]
        return found

    def enclosing_function(self, row: int) -> str:
        """The innermost function whose lines hold `row` ('' at module level)."""
        best = ""
        for qual, info in self.functions.items():
            if info.row <= row <= info.end_row and len(qual) >= len(best):
                best = qual
        return best

    def compute_graph_key(self) -> str:
        parts = (
            self.module,
            sorted((q, tuple(f.decorators), f.is_generator, tuple(c.unplaced() for c in f.calls), f.params,
                    tuple(f.returns_predicates), f.returns_only_predicates, tuple(f.or_returns), f.marks_constant,
                    f.returns_parts, f.wrapper, f.installs, f.self_calls, f.returns_attr)
                   for q, f in self.functions.items()),
            sorted((q, tuple(c.bases), tuple(c.decorators), tuple(c.methods),
                    tuple(sorted((k, tuple(v)) for k, v in c.submodules.items())), sorted(c.attr_types.items()),
                    sorted(c.param_types.items()), sorted((k, repr(v)) for k, v in c.flags.items()), sorted((k, sorted(v.items())) for k, v in c.submodule_flags.items()),
                    sorted(c.config_attrs.items()), sorted(c.built_under.items()), sorted(c.parts.items()), sorted(c.option_parts.items()),
                    sorted(c.init_defaults.items()), sorted((k, tuple(v)) for k, v in c.registries.items()),
                    sorted(c.state_defaults.items()), sorted(c.init_state.items(), key=repr), sorted(c.state_changes.items()),
                    sorted(c.init_copies.items()), c.super_init_constants, c.attributes)
                   for q, c in self.classes.items()),
            [(r.target, r.member, r.via, r.cudagraph, r.self_attr_of) for r in self.roots],
            sorted(self.aliases.items()),
            sorted(self.opaque),
            self.swap_default_eager,
            self.constructions,
            self.foreign_stores,
        )
        return hashlib.blake2b(repr(parts).encode("utf-8", "surrogateescape"), digest_size=16).hexdigest()
