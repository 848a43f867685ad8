"""Does a test of a module's own state hold in the compiled module? (`analysis/state.py`)

`self.<attr>` holds what construction left there — the constant `__init__` stores (or, where
`__init__` stores a plain copy of its parameter, the constant the compiled class's own
`super().__init__(...)` passes for it: `super().__init__(exact_mode=True)` in a subclass fixing a
base's option), else the class-level constant nearest in the MRO — as long as no method that the module's `forward` runs
(its own methods, followed through `self.m(...)`, `super().m(...)` and property reads) stores
into or fills it: only a method the user calls between construction and the compiled call
changes it (`fold()`, `bypass()`), which the default use does not. A property whose
getter returns an attribute plainly (`return bool(self.folded)`) stands for that
attribute. Anything else (a value `__init__` computes, a `setattr(self, name, v)` under a run-time
name, an attribute some code stores on another object: `module.checkpointing = True`) is
undecided.

The forward's own calls may sit under such tests (`if self.is_folded: self.unfold()`, and
`unfold` empties the list): the values are decided together, as the largest set of attributes
that keep their construction value when every call under a test that those values rule out is
left out (none of them changed first, none can change: by induction over the calls).

An attribute that nothing gives the module is missing: no class of its MRO binds, stores or
registers it (`state.class_attributes`), no code stores it on another object, the MRO holds no
class from outside the project but `nn.Module` (and `object`) and `nn.Module` has no such
attribute, and no class defines `__getattr__`. Reading it raises AttributeError (`nn.Module.__getattr__`
finds no parameter, buffer or submodule of that name), so code under a test of it never runs:
`if ready and not self.optimize_values:` where `__init__` only reads its `optimize_values`
argument.
"""
from __future__ import annotations

from typing import Dict, List, Optional, Set, Tuple

from compilelint.analysis.state import STATE, may_name

DEPTH = 3  # properties returning properties
MISSING = "missing"  # `value` of an attribute nothing gives the module
# What a plain `nn.Module` instance has beyond `object`'s: `dir(torch.nn.Module())` on torch 2.13.
MODULE_ATTRIBUTES = frozenset((
    "T_destination", "_apply", "_backward_hooks", "_backward_pre_hooks", "_buffers", "_call_impl",
    "_compiled_call_impl", "_forward_hooks", "_forward_hooks_always_called", "_forward_hooks_with_kwargs",
    "_forward_pre_hooks", "_forward_pre_hooks_with_kwargs", "_get_backward_hooks", "_get_backward_pre_hooks",
    "_get_name", "_is_full_backward_hook", "_load_from_state_dict", "_load_state_dict_post_hooks",
    "_load_state_dict_pre_hooks", "_maybe_warn_non_full_backward_hook", "_modules", "_named_members",
    "_non_persistent_buffers_set", "_parameters", "_register_load_state_dict_pre_hook",
    "_register_state_dict_hook", "_replicate_for_data_parallel", "_save_to_state_dict", "_slow_forward",
    "_state_dict_hooks", "_state_dict_pre_hooks", "_version", "_wrapped_call_impl", "add_module", "apply",
    "bfloat16", "buffers", "call_super_init", "children", "compile", "cpu", "cuda", "double", "dump_patches",
    "eval", "extra_repr", "float", "forward", "get_buffer", "get_extra_state", "get_parameter",
    "get_submodule", "half", "ipu", "load_state_dict", "modules", "mtia", "named_buffers", "named_children",
    "named_modules", "named_parameters", "parameters", "register_backward_hook", "register_buffer",
    "register_forward_hook", "register_forward_pre_hook", "register_full_backward_hook",
    "register_full_backward_pre_hook", "register_load_state_dict_post_hook",
    "register_load_state_dict_pre_hook", "register_module", "register_parameter",
    "register_state_dict_post_hook", "register_state_dict_pre_hook", "requires_grad_", "set_extra_state",
    "set_submodule", "share_memory", "state_dict", "to", "to_empty", "train", "training", "type", "xpu",
    "zero_grad"))
# The names `nn.Module` goes by in an MRO (`Project.mro` names a class outside the project as written).
MODULE_NAMES = frozenset(("torch.nn.Module", "torch.nn.modules.module.Module", "nn.Module", "object"))


class StateFlags:
    """Kept by the project index, which passes itself to each question (see `PartFlow`)."""

    def __init__(self):
        self._kept: Dict[str, Dict[str, bool]] = {}
        self._subclasses: Optional[Dict[str, List[str]]] = None
        self._foreign: Optional[Set[str]] = None

    def ruled_out(self, project, guards, receivers: Tuple[str, ...] = ()) -> bool:
        """Does a state guard among `guards` need what construction did not leave, in an instance
        of the module class testing it and of each of its subclasses (a subclass may declare
        another default: the guard does not say which one runs)? `receivers`: the classes reach
        says the code runs for, never for the testing class itself (a base's method run for a
        subclass): those and their subclasses are the instances asked about."""
        for name, needed in guards:
            if name.startswith(STATE):
                cls, _, attr = name[len(STATE):].rpartition(":")
                if cls not in project.classes or not project.is_module_class(cls):
                    continue
                instances = self.subclasses(project, cls)
                if receivers and all(r != cls and r in instances for r in receivers):
                    instances = [c for r in receivers for c in self.subclasses(project, r)]
                values = {self.value(project, c, attr) for c in instances} - {MISSING}
                if None not in values and needed not in values:
                    return True  # (no values at all: every class misses the attribute)
        return False

    def value(self, project, cls: str, attr: str) -> Optional[bool]:
        """What `self.<attr>` holds in the compiled module of class `cls`; None: undecided."""
        plain = self.plain_attr(project, cls, attr)
        if not plain:
            return None
        kept = self.kept(project, cls)
        if plain in kept:
            return kept[plain]
        return MISSING if self.missing(project, cls, plain) else None

    def missing(self, project, cls: str, attr: str) -> bool:
        """Does nothing give instances of `cls` the attribute (see the module's docstring)?"""
        if attr in MODULE_ATTRIBUTES or attr.startswith("__") or attr in self.foreign(project):
            return False
        for c in project.mro(cls):
            entry = project.classes.get(c)
            if entry is None:
                if c not in MODULE_NAMES and project.canonical(c) not in MODULE_NAMES:
                    return False  # a base outside the project: its attributes are unknown
                continue
            info = entry[1]
            if attr in info.attributes or "*" in info.attributes or "__getattr__" in info.methods or \
                    "__getattribute__" in info.methods:
                return False
        return True

    def foreign(self, project) -> Set[str]:
        """Attributes some code stores on other objects (`module.flag = True`): never decided."""
        if self._foreign is None:
            self._foreign = {a for summary in project.summaries for a in summary.foreign_stores}
        return self._foreign

    @staticmethod
    def plain_attr(project, cls: str, attr: str) -> str:
        """The data attribute `self.<attr>` reads: itself, or what a property getter returns; "" for a method."""
        for _ in range(DEPTH):
            getter = project.method(cls, attr)
            if getter is None:
                return attr
            attr = project.functions[getter][1].returns_attr if project.is_property(getter) else ""
            if not attr:
                return ""
        return ""

    def kept(self, project, cls: str) -> Dict[str, bool]:
        """The attributes of `cls` that keep their construction value, with that value."""
        if cls in self._kept:
            return self._kept[cls]
        self._kept[cls] = {}  # a cycle decides nothing
        foreign = self.foreign(project)
        chain = [c for c in project.mro(cls) if c in project.classes]
        infos = [project.classes[c][1] for c in chain]
        # `setattr(self, name, v)` under a run-time name ("*", or "grid_*" for f"grid_{i}": `state.run_time_name`)
        patterns = [p for i in infos for p in i.init_state if p.endswith("*")]
        held: Dict[str, bool] = {}
        for a in ({a for i in infos for a in i.state_defaults} | {a for i in infos for a in i.init_state}) - foreign:
            if a.endswith("*") or any(may_name(p, a) for p in patterns):
                continue  # `__init__` may store anything there
            stored = [self._fixed_by_subclass(project, chain, k, a) if i.init_state[a] is None else i.init_state[a]
                      for k, i in enumerate(infos) if a in i.init_state]  # nearest `__init__` first
            if None in stored:
                continue  # an `__init__` stores something else than a constant
            held[a] = stored[0] if stored else next(i.state_defaults[a] for i in infos if a in i.state_defaults)
        changers: Dict[str, Set[str]] = {}
        for c, i in zip(chain, infos):
            for pattern, methods in i.state_changes.items():
                for a in held:
                    if may_name(pattern, a):  # a store under a run-time name may be to it
                        changers.setdefault(a, set()).update(f"{c}.{m}" for m in methods)
        while True:
            run = self._forward_runs(project, cls, held)
            changed = [a for a in held if changers.get(a, set()) & run]
            if not changed:
                break
            for a in changed:
                del held[a]
        self._kept[cls] = held
        return held

    @staticmethod
    def _fixed_by_subclass(project, chain: List[str], k: int, attr: str) -> Optional[bool]:
        """The truth of the constant that the class before `chain[k]` (the nearest one defining
        `__init__`) passes in its `super().__init__(...)` for the parameter that `chain[k]`'s
        `__init__` copies into `self.<attr>`; None where it passes none, or another value."""
        owner = project.classes[chain[k]][1]
        param = owner.init_copies.get(attr)
        before = [c for c in chain[:k] if "__init__" in project.classes[c][1].methods]
        init = f"{chain[k]}.__init__"
        if param is None or not before or init not in project.functions or \
                project.method(before[-1], "__init__", skip_first=True) != init:
            return None
        params = project.functions[init][1].params  # (self, ...): positional index i fills i + 1
        for slot, truth in project.classes[before[-1]][1].super_init_constants:
            if slot == param or type(slot) is int and slot + 1 < len(params) and params[slot + 1] == param:
                return truth
        return None

    def _forward_runs(self, project, cls: str, held: Dict[str, bool]) -> Set[str]:
        """The methods of `cls` its `forward` (and `__call__`) runs through its own-method calls,
        less the calls under a state test that `held` rules out."""
        seen: Set[str] = set()
        own = set(project.mro(cls))
        todo = list(project.called(cls))
        while todo:
            fid = todo.pop()
            if fid in seen or fid not in project.functions:
                continue
            seen.add(fid)
            for call in project.functions[fid][1].calls:
                if call.kind not in ("self", "property", "super") or self._against(project, cls, call.guards, held):
                    continue
                todo.extend(f for f in project.callees(fid, call, cls) if project.defining_class(f) in own)
        return seen

    def _against(self, project, cls: str, guards, held: Dict[str, bool]) -> bool:
        for name, needed in guards:
            if name.startswith(STATE):
                attr = self.plain_attr(project, cls, name[len(STATE):].rpartition(":")[2])
                if attr in held and held[attr] != needed:
                    return True
        return False

    def subclasses(self, project, cls: str) -> List[str]:
        """`cls` and the project's classes that have it in their MRO."""
        if self._subclasses is None:
            self._subclasses = {}
            for c in project.classes:
                for base in project.mro(c):
                    self._subclasses.setdefault(base, []).append(c)
        return self._subclasses.get(cls, [cls])
