"""The project pass: which functions does torch.compile trace, and through which path?

Works on the per-file summaries only (no trees): find the roots (compile decorators and call sites,
class decorators that compile `forward` (`data/libraries.toml`), `--entry`, configured extra
roots, and every `nn.Module.forward` by default), then follow calls — own methods, submodules assigned in `__init__` (or handed to it,
or made by a builder: `part_flow`), module functions, imports across files — stopping at `torch.compiler.disable`, custom ops, `allow_in_graph` and
`nonstrict_trace`, and skipping code under `if not torch.compiler.is_compiling():`.
"""
from __future__ import annotations

import copy
from collections import deque
from dataclasses import dataclass, replace
from typing import Dict, List, Optional, Set, Tuple

from compilelint.analysis import config_flags, libraries
from compilelint.analysis.misuse import MISUSE, NOTE as MISUSE_NOTE
from compilelint.analysis.names import AUTOGRAD_FUNCTIONS, COMPILE_FUNCS, DYNAMO_OPTIMIZE
from compilelint.project_pass.installed import Installed
from compilelint.analysis.parts import CONTAINERS
from compilelint.project_pass.option_parts import OptionParts
from compilelint.project_pass.part_flow import PartFlow
from compilelint.analysis.stops import DISABLE_DECORATORS, bare as _bare, is_stop_decorator
from compilelint.project_pass.resolved_calls import ResolvedCalls
from compilelint.project_pass.state_flags import StateFlags
from compilelint.analysis.state import STATE
from compilelint.rule import DEFAULT_TORCH_VERSION
from compilelint.analysis.self_items import ANY_PART
from compilelint.summary import EVAL_HELD, TRAINING, Call, Candidate, ClassInfo, FileSummary, FunctionInfo, Root
from compilelint.torch_version import holds

COMPILE_DECORATORS = COMPILE_FUNCS | DYNAMO_OPTIMIZE
# Class decorators that compile `forward` (`data/libraries.toml`); re-exported, so the name is enough.
CLASS_COMPILE_DECORATORS = libraries.COMPILE_CLASS_DECORATORS
IGNORE_CLASS_DECORATORS = libraries.IGNORE_CLASS_DECORATORS
# Dynamo takes the result as a constant and never traces the body.
CONSTANT_DECORATORS = frozenset({"torch._dynamo.assume_constant_result", "torch.compiler.assume_constant_result"})
# Class decorators that may replace `forward` at run time by a kernel or a batched implementation
# (`data/libraries.toml`): by default the eager body is not what runs, so it is not followed
# (`--follow-swapped` follows it, with the decorator named as the path's condition).
SWAP_CLASS_DECORATORS = libraries.SWAP_CLASS_DECORATORS
# Predicates of an implementation the user opts into, with their value in the default
# configuration (`data/libraries.toml`); `--follow-swapped` leaves them open.
OPT_IN_PREDICATES = libraries.OPT_IN_PREDICATES
# Value each predicate has while Dynamo traces.
PREDICATES = {
    "torch.compiler.is_compiling": True,
    "torch.compiler.is_dynamo_compiling": True,
    "torch._dynamo.is_compiling": True,
    "torch._dynamo.external_utils.is_compiling": True,
    "torch._utils.is_compiling": True,
    "torch.jit.is_scripting": False,
    "torch.jit.is_tracing": False,
    "torch.fx._symbolic_trace.is_fx_tracing": False,
    "torch.compiler.is_exporting": False,
}
# torch's predicates by their last name, and the wrappers of libraries outside the checked tree
# (`data/libraries.toml`), with their value while Dynamo traces.
PREDICATE_LEAVES = {"is_dynamo_compiling": True, "is_compiling": True, **libraries.COMPILE_PREDICATES}
PROPERTY_DECORATORS = frozenset({"property", "cached_property", "abstractproperty"})
NOT_MODULE_BASES = ("object", "ABC", "Generic", "Protocol", "Enum", "IntEnum", "NamedTuple",
                    "TypedDict", "Exception", "Function", "dict", "list", "tuple", "str", "int")


@dataclass
class Reach:
    root: str  # "path.py:Class.forward"
    reason: str  # "Class.forward → self.mlp → MLP.forward"
    cudagraph: bool
    explicit: bool  # reached from a real compile root (not only a candidate forward)
    mode: str = "any"  # "train" / "eval": reached only through `if self.training:` / its negation
    condition: str = ""  # a path condition the note names ("@use_experts_implementation keeps the eager forward")
    # Reached as the wrapper a decorator returns: only the nested `def`'s body (`FunctionInfo.wrapper`)
    # runs in the region, its calls and candidates.
    as_wrapper: bool = False
    # The subclasses it runs for as a method of a base (`Project.receiver`), told apart by reach:
    # their `self.m(...)` calls run their own methods (`ResolvedCalls.callers` reads them).
    receivers: Tuple[str, ...] = ()
    # Every reach of it ran for one of `receivers`, never for its defining class (or a subclass reach
    # does not tell apart from it): a test of the module's state is asked of those instances only.
    receivers_only: bool = False
    # Reached only through calls of submodules their caller put in eval mode (`EVAL_HELD`): its
    # `self.training` is False in either mode of the compiled model.
    held: bool = False


@dataclass
class DisabledCall:
    summary: FileSummary
    function: FunctionInfo
    call: Call
    callee: str
    index: int  # of the call in function.calls (stable while the project's graph is)


class Project:
    """An index over all summaries: functions and classes by dotted name, MRO, call resolution.
    Long because it is the one place the project pass asks about names (each question a short
    method); what is worked out from it lives beside it (part_flow, resolved_calls, frames)."""

    def __init__(self, summaries: List[FileSummary], extra_roots=(), extra_stops=(), follow_misuse: bool = False):
        self.summaries = summaries
        # Follow branches that run only when a caller misuses an argument (`--follow-misuse`).
        self.follow_misuse = follow_misuse
        # Follow implementations a user opts into (`--follow-swapped`): flash attention's branches.
        self.follow_swapped = False
        self.torch_version = DEFAULT_TORCH_VERSION  # the torch whose measured behaviour decides (`on_torch`)
        self.extra_roots = tuple(r.replace(":", ".") for r in extra_roots)
        self.extra_stops = tuple(s.replace(":", ".") for s in extra_stops)
        self.modules: Dict[str, FileSummary] = {}
        self.functions: Dict[str, Tuple[FileSummary, FunctionInfo]] = {}
        self.classes: Dict[str, Tuple[FileSummary, ClassInfo]] = {}
        self.opaque = set()
        for s in summaries:
            self.modules.setdefault(s.module, s)
            for q, f in s.functions.items():
                self.functions[f"{s.module}.{q}"] = (s, f)
            for q, c in s.classes.items():
                self.classes[f"{s.module}.{q}"] = (s, c)
            self.opaque.update(s.opaque)
        self._predicate_memo: Dict[str, Optional[bool]] = {}
        self._mro_memo: Dict[str, List[str]] = {}
        self._mro_open: Set[str] = set()  # the classes whose MRO is being made
        # Classes whose MRO met a cycle of bases (`class A(B)`, `class B(A)` through re-exports): what
        # the guard gives them depends on which class was asked first, so they are never kept.
        self._mro_cyclic: Set[str] = set()
        self._receiver_memo: Dict[Tuple[str, str], Optional[str]] = {}
        self.part_flow = PartFlow()
        self.option_parts = OptionParts()
        self.installed = Installed()
        self.state_flags = StateFlags()

    # ----- names ----------------------------------------------------------------------------------
    def canonical(self, dotted: str, depth: int = 0) -> str:
        """Follow re-exports: `pkg.rotate_half` → `pkg.layers.rotate_half` when pkg/__init__ imports it."""
        if dotted in self.functions or dotted in self.classes or depth > 8:
            return dotted
        parts = dotted.split(".")
        for i in range(len(parts) - 1, 0, -1):
            module = ".".join(parts[:i])
            summary = self.modules.get(module)
            if summary is None:
                continue
            alias = summary.aliases.get(parts[i])
            if alias and alias != dotted:
                return self.canonical(".".join([alias] + parts[i + 1:]), depth + 1)
            break
        return dotted

    def mro(self, cls: str) -> List[str]:
        if cls in self._mro_memo:
            if cls in self._mro_open or cls in self._mro_cyclic:  # a cycle: every MRO being made met it
                self._mro_cyclic.update(self._mro_open)
            return self._mro_memo[cls]
        self._mro_memo[cls] = [cls]  # guards against cycles
        self._mro_open.add(cls)
        out = [cls]
        entry = self.classes.get(cls)
        if entry:
            bases = [self.canonical(base) for base in entry[1].bases]
            for b in _c3([self.mro(base) for base in bases] + [bases]) or [b for base in bases for b in self.mro(base)]:
                if b not in out:
                    out.append(b)
        self._mro_open.discard(cls)
        self._mro_memo[cls] = out
        return out

    def kept_mros(self) -> Dict[str, List[str]]:
        """The MROs made so far that met no cycle: each is what any order of questions gives, a
        function of the classes' bases and the modules' names (the call graph's key holds both),
        kept with the graph's other tables (`engine.project_findings`)."""
        return {c: m for c, m in self._mro_memo.items() if c not in self._mro_cyclic and c not in self._mro_open}

    def take_mros(self, kept: Dict[str, List[str]]) -> None:
        """Answer from `kept_mros` of a pass over the same call graph (their classes' records stay packed)."""
        self._mro_memo.update(kept)

    def method(self, cls: str, name: str, skip_first: bool = False) -> Optional[str]:
        """The method `name` of `cls` by its MRO (`skip_first`: of the classes after it, where
        `super().name` in `cls` itself goes)."""
        for c in self.mro(cls)[1:] if skip_first else self.mro(cls):
            entry = self.classes.get(c)
            if entry and name in entry[1].methods:
                return f"{c}.{name}"
        return None

    def called(self, cls: str) -> List[str]:
        """What calling an instance of `cls` runs: a `__call__` of its MRO written in the project
        (one that overrides nn.Module's: it runs first, then, as a rule, forward), and forward."""
        own_call = self.method(cls, "__call__") if self.is_module_class(cls) else None  # not a builder's
        out = [m for m in (own_call, self.method(cls, "forward")) if m]
        return list(dict.fromkeys(out))

    def defining_class(self, fid: str) -> Optional[str]:
        """The class a method is written in (None for a module function)."""
        summary, _ = self.functions[fid]
        qualname = fid[len(summary.module) + 1:]  # the record left packed
        cls = f"{summary.module}.{qualname.rsplit('.', 1)[0]}" if "." in qualname else None
        return cls if cls in self.classes else None

    def receiver(self, fid: str, receiver: Optional[str]) -> Optional[str]:
        """The class `self` is an instance of while method `fid` runs, as reach tells receivers
        apart: None (the defining class) unless `receiver` is a subclass whose own classes before
        the defining one in its MRO define a method, a submodule or a class-level dict of classes
        (only they can make a `self.m` call, or what `cls.<dict>` picks, resolve elsewhere) or whose MRO after them is not the defining class's (where `super()`
        goes), or that the project's constructor calls build (the parts they pass are its own:
        `part_flow`), so reaching `Base.forward` for such a subclass is a reach of its own."""
        cls = self.defining_class(fid)
        if cls is None or receiver is None or receiver == cls:
            return None
        key = (receiver, cls)
        if key not in self._receiver_memo:
            chain = self.mro(receiver)
            before = chain[:chain.index(cls)] if cls in chain else []
            own = any(self.classes[c][1].methods or self.classes[c][1].submodules or self.classes[c][1].registries
                      for c in before if c in self.classes)
            own = own or chain[len(before):] != self.mro(cls)  # `super()` goes elsewhere (a mixin's order)
            own = own or bool(before) and self.part_flow.builds(self, receiver)  # its own constructor calls' parts
            self._receiver_memo[key] = receiver if own else None
        return self._receiver_memo[key]

    def submodule_classes(self, cls: str, attr: str) -> List[str]:
        """The classes `self.<attr>` holds: those the nearest class of the MRO constructs into it,
        and what any of them stores there that other code decides (`part_flow`: a constructor
        argument, a builder's returns)."""
        out: List[str] = []
        for c in self.mro(cls):
            entry = self.classes.get(c)
            if entry and attr in entry[1].submodules:
                out = [x for x in map(self.canonical, entry[1].submodules[attr])
                       if self.option_parts.allows(self, c, attr, x, cls)]  # a branch no construction's option takes
                break
        for c in self.mro(cls):
            entry = self.classes.get(c)
            if entry and attr in entry[1].parts:
                out.extend(x for x in self.part_flow.resolve(self, c, entry[1].parts[attr], cls) if x not in out)
        if all(x in CONTAINERS for x in out):
            # `q_net: QNet` in the class body, set in a method the reading did not follow; an
            # `__init__` parameter's annotation (`base: Encoder`, `*blocks: Block` into a ModuleList)
            # where no constructor call in the project passes it
            for c in self.mro(cls):
                entry = self.classes.get(c)
                declared = entry[1].attr_types.get(attr) or entry[1].param_types.get(attr) if entry else None
                declared = self.canonical(declared) if declared else None
                if declared:
                    if declared in self.classes and self.is_module_class(declared):
                        out.append(declared)
                    break
        return out

    def class_registry(self, cls: str, name: str) -> List[str]:
        """The classes of the class-level dict of classes `name` that `cls` sees: the nearest
        class of its MRO that declares it."""
        for c in self.mro(cls):
            entry = self.classes.get(c)
            if entry and name in entry[1].registries:
                return [self.canonical(x) for x in entry[1].registries[name]]
        return []

    def held_classes(self, cls: str, attr: str) -> List[str]:
        """The classes calling `self.<attr>` may run: its submodules, else (a model the project
        does not know, passed in from outside) the modules `cls` installs into what it holds."""
        return self.submodule_classes(cls, attr) or self.installed.classes(self, cls)

    def call_flags(self, fid: str, call: Call, callee: str) -> tuple:
        """The config flags a call into a submodule needs to reach `callee` (`self.adapter(x)` →
        add_adapter=True; `self.encoder(x)` → do_stable_layer_norm=True for the stable encoder)."""
        if call.kind not in ("self", "attr"):
            return ()
        summary, info = self.functions[fid]
        if "." not in info.qualname:
            return ()
        for c in self.mro(f"{summary.module}.{info.qualname.rsplit('.', 1)[0]}"):
            entry = self.classes.get(c)
            if entry and call.target in entry[1].submodules:  # the class that builds the attribute
                for built, flags in entry[1].submodule_flags.get(call.target, {}).items():
                    if self.method(self.canonical(built), call.member or "forward") == callee:
                        return flags
                return ()
        return ()

    def is_autograd_function(self, cls: str) -> bool:
        """A project class deriving from `torch.autograd.Function`: its `apply` (inherited from
        torch) runs its own `forward`, which Dynamo traces (and breaks in) where `apply` is called."""
        if cls not in self.classes:
            return False
        for c in self.mro(cls):
            entry = self.classes.get(c)
            if entry is not None and any(self.canonical(b) in AUTOGRAD_FUNCTIONS for b in entry[1].bases):
                return True
        return False

    def is_module_class(self, cls: str) -> bool:
        for c in self.mro(cls):
            entry = self.classes.get(c)
            if entry is None:
                if c.startswith("torch.nn.") or c == "nn.Module" or c.endswith(".nn.Module"):
                    return True
                continue
            for base in entry[1].bases:
                base = self.canonical(base)
                if base in self.classes:
                    continue
                leaf = base.rsplit(".", 1)[-1]
                if base.startswith("torch.autograd") or leaf in NOT_MODULE_BASES:
                    continue
                if base.startswith("torch.nn.") or base.endswith("nn.Module") or not base.startswith("torch."):
                    return True  # nn layers, or a base from outside the checked tree
        return False

    # ----- predicates -----------------------------------------------------------------------------
    def predicate_value(self, name: str, depth: int = 0) -> Optional[bool]:
        if name in PREDICATES:
            return PREDICATES[name]
        if name in self._predicate_memo:
            return self._predicate_memo[name]
        self._predicate_memo[name] = None
        value = None
        entry = self.functions.get(self.canonical(name))
        info = entry[1] if entry else None
        if info is not None and depth < 5:
            if info.or_returns and all(any(self.predicate_value(self.canonical(p), depth + 1) is True for p in ret)
                                       for ret in info.or_returns):
                value = True  # every return is an `or` with a predicate true under compile in it
            elif info.returns_only_predicates:
                values = {self.predicate_value(self.canonical(p), depth + 1) for p in info.returns_predicates}
                if len(values) == 1:
                    value = values.pop()
        elif entry is None:
            value = PREDICATE_LEAVES.get(name.rsplit(".", 1)[-1])
        self._predicate_memo[name] = value
        return value

    def on_torch(self, candidate: Candidate) -> bool:
        """The candidate breaks on the selected torch: the behaviour it relies on holds there, and
        the returns of other files' functions it took for tensors are tensors."""
        return (not candidate.behaviour or holds(candidate.behaviour, self.torch_version)) and \
            all(self.returns_tensor(a) for a in candidate.assumes)

    def returns_tensor(self, assumed: str) -> bool:
        """"<function>#<part>": the project function's return annotation says that part of its
        result is a tensor (part -1: the whole; i: a tuple's i-th item, or an item of a tensor or
        of a list of tensors, unpacked)."""
        name, _, part = assumed.rpartition("#")
        found = self.functions.get(self.canonical(name))
        parts = found[1].tensor_returns if found is not None else ()
        index = int(part)
        return index in parts or (index >= 0 and (-1 in parts or ANY_PART in parts))

    def dead(self, guards, receivers: Tuple[str, ...] = ()) -> bool:
        """True when the code only runs if a compile predicate has the value it lacks under Dynamo,
        or only on a caller's misuse of an argument (unless those paths are followed), or only
        when the module's own state is not what its construction left (`state_flags`; in instances
        of `receivers` when reach says the code runs only for those)."""
        for name, needed in guards:
            if name.startswith(STATE):
                if self.state_flags.ruled_out(self, [(name, needed)], receivers):
                    return True
                continue
            if name == MISUSE:
                if not self.follow_misuse:
                    return True
                continue
            if name == EVAL_HELD:
                continue  # a mode, not a predicate (`held_mode`)
            opt_in = libraries.opt_in_default(name)
            if opt_in is not None:
                if not self.follow_swapped and opt_in != needed:
                    return True
                continue
            value = self.predicate_value(name)
            if value is not None and value != needed:
                return True
        return False

    # ----- stops ----------------------------------------------------------------------------------
    def decorators(self, fid: str) -> List[str]:
        """A function's decorators with re-exports and module-level aliases followed
        (`@disable_compiler`, a package re-exporting `disable_compiler = ...torch.compiler.disable`)."""
        entry = self.functions.get(fid)
        return [self.canonical(_bare(d)) + d[len(_bare(d)):] for d in entry[1].decorators] if entry else []

    def is_disabled(self, fid: str) -> bool:
        return any(_bare(d) in DISABLE_DECORATORS for d in self.decorators(fid))

    def is_property(self, fid: str) -> bool:
        """A getter: `@property`, `@functools.cached_property` (a setter or deleter shares its name
        and replaces it in the index: not a getter)."""
        return any(_bare(d).rsplit(".", 1)[-1] in PROPERTY_DECORATORS for d in self.functions[fid][1].decorators)

    def is_stopped(self, fid: str) -> bool:
        if fid in self.opaque:
            return True
        return any(is_stop_decorator(d, self.extra_stops) or self.is_constant_decorator(d)
                   for d in self.decorators(fid))

    def is_constant_decorator(self, decorator: str) -> bool:
        """`@assume_constant_result`, or a project decorator setting Dynamo's constant marker."""
        name = _bare(decorator)
        if name in CONSTANT_DECORATORS:
            return True
        entry = self.functions.get(self.canonical(name))
        return bool(entry) and entry[1].marks_constant

    def swapped_by(self, fid: str) -> str:
        """What may put this `forward` in place of the default at run time, as the path's condition
        says it: `@<decorator> keeps the eager forward`, `<argument>="<key>" picks it`; or "". Not
        followed unless `--follow-swapped`."""
        cls, _, method = fid.rpartition(".")
        entry = self.classes.get(cls)
        if method != "forward" or entry is None:
            return ""
        if entry[1].chosen_by:
            return f'{libraries.opt_in_chooser(entry[1].chosen_by)}="{entry[1].chosen_by}" picks it'
        if entry[0].swap_default_eager:
            return ""
        return next((f"@{_bare(d).rsplit('.', 1)[-1]} keeps the eager forward" for d in entry[1].decorators
                     if _bare(d).rsplit(".", 1)[-1] in SWAP_CLASS_DECORATORS), "")

    # ----- resolution of calls --------------------------------------------------------------------
    def callees(self, fid: str, call: Call, receiver: Optional[str] = None) -> List[str]:
        """The project functions a call of `fid` may run. `self.m` resolves in the MRO of the
        receiver (`type(self)`: `receiver`, else the class `fid` is written in), as Python does:
        a base's `forward` calling `self.update(x)` runs the subclass's `update`. A decorated
        function's call runs its decorator's wrapper too (`wrappers`), but for a decorated
        `forward`: the wrappers `nn.Module.__call__` enters are the shared frames CL411 models
        (`shared_wrapper_frame`); followed here too, they cost the truth corpus's in-sample part
        47 unexercised or false findings for 4 true ones (torch 2.11)."""
        found = self._callees(fid, call, receiver)
        return found + [w for f in found if not f.endswith(".forward") for w in self.wrappers(f) if w not in found] \
            if found else found

    def wrappers(self, fid: str, depth: int = 0) -> List[str]:
        """The project decorators whose wrapper a call of `fid` runs: `@d` or `@d(...)` where `d`
        returns a nested `def` (`FunctionInfo.wrapper`), or returns what another project function
        returns (`return _d(fn, name)`, `functools.partial(_d, ...)` called again by Python)."""
        out: List[str] = []
        for decorator in self.decorators(fid) if depth == 0 else [fid]:
            target = self.canonical(_bare(decorator))
            entry = self.functions.get(target)
            if entry is None or target == fid and depth == 0:
                continue
            if entry[1].wrapper:
                out.append(target)
            elif depth < 3:
                for parts in entry[1].returns_parts:
                    out.extend(w for p in parts if p.startswith("@ret:") for w in self.wrappers(p[5:], depth + 1))
        return list(dict.fromkeys(out))

    def _callees(self, fid: str, call: Call, receiver: Optional[str]) -> List[str]:
        cls = self.defining_class(fid)
        if call.kind == "name":
            target = self.canonical(call.target)
            if target in self.functions:
                return [target]
            if target in self.classes:  # Cache(config=...) runs Cache.__init__
                init = self.method(target, "__init__")
                return [init] if init else []
            owner, _, member = target.rpartition(".")
            if member == "apply" and self.is_autograd_function(owner):  # Op.apply(x) runs Op.forward(ctx, x)
                forward = self.method(owner, "forward")
                return [forward] if forward else []
            return []
        if call.kind in ("method", "built", "read"):
            target = self.canonical(call.target)
            method = self.method(target, call.member) if target in self.classes else None
            if call.kind == "read" and method and not self.is_property(method):
                return []  # a plain attribute or a bound method read: nothing runs
            return [method] if method else []
        if cls is None:
            return []
        if call.kind == "super":  # the class after the defining one in the receiver's MRO
            chain = self.mro(receiver) if receiver else []
            after = chain[chain.index(cls) + 1:] if cls in chain else self.mro(cls)[1:]
            method = next((f"{c}.{call.target}" for c in after
                           if c in self.classes and call.target in self.classes[c][1].methods), None)
            return [method] if method else []
        cls = receiver or cls
        if call.kind == "property":  # `self.attr` read: its getter runs when it is a property
            method = self.method(cls, call.target)
            return [method] if method and self.is_property(method) else []
        if call.kind == "self" and call.target == "__call__" and not call.member:  # `self(x)`
            return self.called(cls)
        if call.kind == "self":
            method = self.method(cls, call.target)
            if method:
                return [method]
            if not call.member or call.member == "forward":  # `self.kernel(x)`
                return [m for c in self.held_classes(cls, call.target) for m in self.called(c)]
            return [m for c in self.submodule_classes(cls, call.target) for m in [self.method(c, call.member)] if m]
        if call.kind == "attr":
            return [m for c in self.submodule_classes(cls, call.target) for m in [self.method(c, call.member)] if m]
        if call.kind == "chain":
            return [m for c in self.chain_classes(cls, call.target) for m in [self.method(c, call.member)] if m]
        return []

    def chain_classes(self, cls: str, attrs: str) -> List[str]:
        """The classes `self.a.b` holds: those `self.b` holds in each class `self.a` holds."""
        classes = [cls]
        for attr in attrs.split("."):
            classes = list(dict.fromkeys(x for c in classes for x in self.submodule_classes(c, attr)))
        return classes

    def callee_receivers(self, fid: str, call: Call, callee: str, receiver: Optional[str]) -> List[Optional[str]]:
        """The receivers `callee` runs with, called by `fid` run for `receiver`: the caller's for its
        own methods (`self.m`, `super().m`), each submodule class whose method it is for
        `self.attr(...)`, the class constructed or named for `Child(...)` / `config.method(...)`."""
        cls = receiver or self.defining_class(fid)
        if call.kind in ("self", "super", "property") and cls is not None and self.defining_class(callee) in self.mro(cls):
            return [self.receiver(callee, cls)]  # `self` stays the caller's: a base's method run for its subclass
        if call.kind in ("self", "attr"):
            member = call.member or "forward"
            classes = self.held_classes(cls, call.target) if call.kind == "self" else self.submodule_classes(cls, call.target)
            out = [self.receiver(callee, c) for c in classes
                   if self.method(c, member) == callee or call.kind == "self" and member == "forward" and callee in self.called(c)]
            return list(dict.fromkeys(out)) or [None]
        if call.kind == "chain":
            out = [self.receiver(callee, c) for c in self.chain_classes(cls, call.target) if self.method(c, call.member) == callee]
            return list(dict.fromkeys(out)) or [None]
        if call.kind in ("name", "method", "built"):
            target = self.canonical(call.target)
            if target in self.classes:
                return [self.receiver(callee, target)]
        if call.kind == "read" and self.canonical(call.target) in self.classes:  # `dist.mean` of a `dist: Normal`
            return [self.receiver(callee, self.canonical(call.target))]
        return [None]

    # ----- roots ----------------------------------------------------------------------------------
    def root_functions(self, root: Root, summary: FileSummary) -> List[Tuple[str, Optional[str]]]:
        """(function id, receiver) of each function a root compiles."""
        target = self.canonical(root.target)
        if root.self_attr_of:
            return [(m, self.receiver(m, c)) for c in self.submodule_classes(target, root.self_attr_of)
                    for m in [self.method(c, root.member or "forward")] if m]
        if target in self.classes:
            m = self.method(target, root.member or "forward")
            return [(m, self.receiver(m, target))] if m else []
        if target in self.functions and root.member is None:
            return [(target, None)]
        return []

    def display(self, fid: str) -> str:
        summary, _ = self.functions[fid]
        return f"{summary.path}:{fid[len(summary.module) + 1:]}"  # its qualname, the record left packed


# What `with_file` knows how to carry over of a `Project`; an index with anything else is rebuilt, never patched.
_CARRIED = frozenset({"summaries", "follow_misuse", "follow_swapped", "extra_roots", "extra_stops", "torch_version",
                      "modules", "functions", "classes", "opaque", "_predicate_memo", "_mro_memo", "_mro_open",
                      "_mro_cyclic", "_receiver_memo",
                      "part_flow", "installed", "state_flags", "option_parts"})


def with_file(project: Project, old: FileSummary, new: FileSummary, summaries: List[FileSummary]) -> Optional[Project]:
    """The index `project` (built over summaries holding `old`) for `summaries`, where `new` replaced
    `old`, when the two differ in nothing but calls (the caller compared their graph keys
    without calls): the same names, classes, bases and opaque functions, so the same answers
    to every name, MRO and predicate question; only the entries of `old` now point into
    `new`. None when the index cannot tell (the language server then builds a new one)."""
    if set(vars(project)) != _CARRIED or project.modules.get(old.module) is not old:
        return None
    out = copy.copy(project)
    out.summaries = summaries
    out.modules = dict(project.modules)
    out.modules[new.module] = new
    out.functions = dict(project.functions)
    for qualname, info in new.functions.items():
        key = f"{new.module}.{qualname}"
        if out.functions[key][0] is old:  # else another file of the same module name wins
            out.functions[key] = (new, info)
    out._receiver_memo = {}  # a receiver's own methods and submodules are read from the summaries
    out.state_flags = StateFlags()  # what a forward runs is read from the calls
    out.option_parts = OptionParts()  # the values an option takes are read from the constructions (calls)
    out.option_parts.user_built = project.option_parts.user_built  # from the roots, which calls do not change
    out.classes = dict(project.classes)
    for qualname, cls in new.classes.items():
        key = f"{new.module}.{qualname}"
        if out.classes[key][0] is old:
            out.classes[key] = (new, cls)
    return out


def compile_roots(project: Project, entries: list, scope: str,
                  follow_swapped: bool = False) -> List[Tuple[str, str, bool, bool, Optional[str]]]:
    """(function id, how it is compiled, cudagraph, explicit, receiver) in priority order;
    `entries`: each `--entry` as `resolve_entry` gives it, or a function id."""
    roots: List[Tuple[str, str, bool, bool, Optional[str]]] = []
    if entries:
        for entry in entries:
            fid, receiver = (entry, None) if isinstance(entry, str) else entry
            roots.append((fid, "--entry", False, True, receiver))
        return roots
    for summary in project.summaries:
        for root in summary.roots:
            for fid, receiver in project.root_functions(root, summary):
                roots.append((fid, root.via, root.cudagraph, True, receiver))
        for qual, cls in summary.classes.items():
            cid = f"{summary.module}.{qual}"
            decorators = [_bare(d) for d in cls.decorators]
            via = next((d for d in decorators if d.rsplit(".", 1)[-1] in CLASS_COMPILE_DECORATORS
                        or d in project.extra_roots), None)
            if via is not None:
                m = project.method(cid, "forward")
                if m:
                    roots.append((m, f"@{via.rsplit('.', 1)[-1]}", True, True, project.receiver(m, cid)))
        for qual, fn in summary.functions.items():
            for d in fn.decorators:
                name = _bare(d)
                if name in COMPILE_DECORATORS or name in project.extra_roots:
                    roots.append((f"{summary.module}.{qual}", f"@{name}", d.endswith("#cudagraph"), True, None))
    if scope in ("modules", "all"):
        for summary in project.summaries:
            for qual, cls in summary.classes.items():
                cid = f"{summary.module}.{qual}"
                if "forward" not in cls.methods:
                    continue
                if any(_bare(d).rsplit(".", 1)[-1] in IGNORE_CLASS_DECORATORS for d in cls.decorators):
                    continue
                if not follow_swapped and project.swapped_by(f"{cid}.forward"):
                    continue
                if project.is_module_class(cid):
                    roots.append((f"{cid}.forward", "nn.Module.forward", False, False, None))
    if scope == "all":
        for fid in project.functions:
            roots.append((fid, "scope=all", False, False, None))
    return roots


def _c3(sequences: List[List[str]]) -> Optional[List[str]]:
    """Python's C3 merge of the bases' MROs (a diamond's shared base comes after both sides, as
    `super()` goes); None where Python would refuse the order."""
    sequences = [list(seq) for seq in sequences if seq]
    out: List[str] = []
    while sequences:
        head = next((seq[0] for seq in sequences if not any(seq[0] in other[1:] for other in sequences)), None)
        if head is None:
            return None
        out.append(head)
        sequences = [seq[1:] if seq[0] == head else seq for seq in sequences]
        sequences = [seq for seq in sequences if seq]
    return out


def edge_mode(guards) -> str:
    """The mode a call (or a finding) runs in, from the `self.training` guards around it."""
    modes = {"train" if needed else "eval" for name, needed in guards if name == TRAINING}
    return modes.pop() if len(modes) == 1 else ("never" if modes else "any")


def held_mode(mode: str, held: bool, guards) -> str:
    """The mode code under `guards` runs in, in a function reached with mode `mode`: `edge_mode`'s,
    and where the function runs held in eval (`Reach.held`) its `self.training` is False: code
    under `if self.training:` never runs, code under its negation always does."""
    if not held:
        return meet(mode, edge_mode(guards))
    if (TRAINING, True) in guards:
        return "never"
    return mode


def meet(a: str, b: str) -> str:
    """Both conditions at once: `any` yields to the other; train and eval never meet."""
    if a == "any" or a == b:
        return b
    return a if b == "any" else "never"


def reach(project: Project, roots, follow_swapped: bool = False,
          calls=None) -> Tuple[Dict[str, Reach], List[DisabledCall]]:
    """Breadth-first from each root; the first (highest-priority) root to reach a function wins.
    A function reached in train mode along one path and eval (or any) along another runs in any.
    What is followed is a function with its receiver (`Project.receiver`): `Base.forward` run for
    a subclass that overrides `update` reaches that override, for `Base` itself `Base.update`.
    `calls`: a `ResolvedCalls` whose answers the rest of the pass shares (else a new one).
    Long because it is one breadth-first loop whose queue, states and stops change together."""
    calls = calls if calls is not None else ResolvedCalls()
    reached: Dict[str, Reach] = {}
    states: Dict[Tuple[str, Optional[str]], Reach] = {}  # (function, receiver) → how it was reached
    disabled: List[DisabledCall] = []
    seen_disabled = set()
    for fid, via, cudagraph, explicit, *rest in roots:
        if fid not in project.functions or project.is_stopped(fid):
            continue
        state = (fid, rest[0] if rest else None)
        existing = reached.get(fid)
        # a root that an earlier one reached only held in eval (`Reach.held`) runs in its own mode
        ranked_below = existing is not None and (existing.explicit or not explicit) and not existing.held
        if ranked_below and state in states and not states[state].held:
            continue
        root_display = project.display(fid)
        qual = project.functions[fid][1].qualname
        queue = deque([state])
        states[state] = Reach(root_display, qual, cudagraph, explicit)
        if not ranked_below:
            reached[fid] = states[state]
        while queue:
            current, receiver = queue.popleft()
            here = states[(current, receiver)]
            summary, info = project.functions[current]
            for index, (call, callees) in enumerate(calls.of(project, current, receiver)):
                if here.as_wrapper and not info.wrapper[0] <= call.row - info.row <= info.wrapper[1]:
                    continue  # the decorator's own body runs when it decorates, not per call
                mode = held_mode(here.mode, here.held, call.guards)
                if mode == "never" or project.dead(call.guards, (receiver,) if receiver else ()):
                    continue
                held = here.held or (EVAL_HELD, True) in call.guards
                if call.own_flags and not config_flags.own_decides(
                        project, receiver or project.defining_class(current) or "", call.own_flags):
                    continue  # `else: self._fast_path()` under `if self.full_update:` of a class setting it
                for callee in callees:
                    flags = project.call_flags(current, call, callee)
                    if flags and not config_flags.decide(project, fid, flags)[0]:
                        continue  # a submodule the root model's config never builds
                    callee_qual = project.functions[callee][1].qualname
                    if project.is_disabled(callee):
                        key = (current, call.row, call.col, callee)
                        if key not in seen_disabled:
                            seen_disabled.add(key)
                            disabled.append(DisabledCall(summary, info, call, callee_qual, index))
                        continue
                    if project.is_stopped(callee):
                        continue
                    swapped = project.swapped_by(callee)
                    if swapped and not follow_swapped:
                        continue
                    for callee_receiver in project.callee_receivers(current, call, callee, receiver):
                        state = (callee, callee_receiver)
                        old_state, old = states.get(state), reached.get(callee)
                        if old is not None and old.root == root_display and old.mode != mode and old.mode != "any":
                            reached[callee] = old = replace(old, mode="any")  # reached in another mode too
                        if old is not None and old.root == root_display and old.held and not held:
                            reached[callee] = replace(old, held=False)  # and not held in eval
                        if old_state is not None and old_state.root == root_display:
                            wider = {}
                            if old_state.mode != mode and old_state.mode != "any":
                                wider["mode"] = "any"
                            if old_state.held and not held:
                                wider["held"] = False
                            if wider:
                                states[state] = replace(old_state, **wider)
                                queue.append(state)
                            continue
                        # a later root reaches it too; it counts where the first held it in eval and this does not
                        unheld = old_state is not None and old_state.held and not held
                        if old_state is not None and (old_state.explicit or not explicit) and not unheld:
                            continue
                        own_method = call.kind in ("self", "super") and callee_qual.rsplit(".", 1)[-1] == call.target
                        plain = own_method or call.label in (callee_qual, callee_qual.rsplit(".", 1)[-1])
                        hop = callee_qual if plain else f"{call.label} → {callee_qual}"
                        condition = swapped or here.condition
                        if (MISUSE, True) in call.guards and MISUSE_NOTE not in condition:
                            condition = " and ".join(x for x in (condition, MISUSE_NOTE) if x)
                        as_wrapper = bool(project.functions[callee][1].wrapper) and any(
                            callee in project.wrappers(other) for other in callees if other != callee)
                        states[state] = Reach(root_display, f"{here.reason} → {hop}", cudagraph, explicit, mode, condition,
                                              as_wrapper, held=held)
                        if old is None or (explicit and not old.explicit) or (old.held and not held):
                            reached[callee] = states[state]
                        queue.append(state)
    receivers: Dict[str, set] = {}
    for_defining = set()  # reached for the defining class too (receiver None)
    for fid, receiver in states:
        if receiver is not None and fid in reached:
            receivers.setdefault(fid, set()).add(receiver)
        elif receiver is None:
            for_defining.add(fid)
    for fid, found in receivers.items():
        reached[fid] = replace(reached[fid], receivers=tuple(sorted(found)), receivers_only=fid not in for_defining)
    return reached, disabled


def resolve_entries(project: Project, entry: str) -> List[Tuple[str, Optional[str]]]:
    """Every (function id, receiver) calling the entry runs: for a class, its forward and a
    `__call__` its MRO writes in the project (`model(x)` runs that first); else `resolve_entry`'s."""
    fid = _entry_id(project, entry)
    if fid in project.classes:
        return [(m, project.receiver(m, fid)) for m in project.called(fid)]
    return [(fid, None)] if fid in project.functions else []


def resolve_entry(project: Project, entry: str) -> Optional[Tuple[str, Optional[str]]]:
    """`path/to/file.py:QualName` or `dotted.module:QualName` → (function id, receiver): a class
    means its forward (perhaps a base's), run for an instance of that class."""
    fid = _entry_id(project, entry)
    if fid in project.classes:
        forward = project.method(fid, "forward")
        return (forward, project.receiver(forward, fid)) if forward else None
    return (fid, None) if fid in project.functions else None


def _entry_id(project: Project, entry: str) -> Optional[str]:
    """The id (`module.QualName`) an entry names, or None when its file is not checked."""
    where, _, qual = entry.rpartition(":")
    if not where:
        return None
    module = None
    if where.endswith((".py", ".pyi")):
        import os

        real = os.path.realpath(where)
        for s in project.summaries:
            if os.path.realpath(s.path) == real:
                module = s.module
                break
    else:
        module = where
    return f"{module}.{qual}" if module is not None else None
