"""What a file declares before any function is walked: imports, module-level names, classes and
what their methods assign to `self`, noqa comments, and each function's header facts.

Everything here is computed once per file, read-only afterwards (except that function-local
imports add to the import table, see `bindings`), and shared by the walker, the bindings of each
function and the fix builders.
"""
from __future__ import annotations

import ast
import re
from typing import Dict, List, Optional, Set, Tuple

from compilelint.analysis import libraries
from compilelint.analysis import tensors as T
from compilelint.analysis.astutil import (
    FUNCS, is_call_to, is_class_name, is_generator, is_logger_factory, is_self, is_super_init, keyword_str,
    module_statements, parameter_defaults, parameter_names, self_attr, self_attr_store, self_targets,
    walk,
)
from compilelint.analysis.compiled_names import compiled_names
from compilelint.analysis.config_flags import submodule_flags
from compilelint.analysis.init_defaults import init_defaults
from compilelint.analysis.parts import CONTAINERS, Parts, false_constants
from compilelint.analysis.passed_args import none_tests
from compilelint.analysis.state import class_attributes, class_state, constructor_copies, returned_attr
from compilelint.analysis.types import annotation_class
from compilelint.analysis.names import ImportTable, dotted, module_name_for
from compilelint.comments import comments
from compilelint.source import SourceFile
from compilelint.summary import ClassInfo, FunctionInfo

# Modes whose compiled code is captured in CUDA graphs.
CUDAGRAPH_MODES = frozenset({"reduce-overhead", "max-autotune"})
# Calls whose name suggests a compile predicate, or an opt-in implementation's
# (`regions.OPT_IN_PREDICATES`); only these are kept as guards (keeps summaries small).
MARKED_CONSTANT = "_dynamo_marked_constant"
PREDICATE_NAME = re.compile("|".join(["compil|script|trac|dynamo|export"] +
                                     [re.escape(name) for name in libraries.OPT_IN_PREDICATES]), re.I)
NOQA = re.compile(r"#\s*noqa(?::\s*(?P<codes>[A-Z]+[0-9]+(?:\s*,\s*[A-Z]+[0-9]+)*))?", re.I)
BUFFER_CLASSES = frozenset({"torch.nn.Buffer", "torch.nn.parameter.Buffer"})
# torch's containers of parameters: an item is a tensor (a dict's by key, a list's by index).
# Builtin types whose subscript is a `types.GenericAlias` (`dict[str, Tensor]`), which Dynamo holds
# as a user object: subscripting one with it breaks (CL222).
BUILTIN_GENERICS = frozenset({"builtins.list", "builtins.dict", "builtins.tuple", "builtins.set",
                              "builtins.frozenset", "builtins.type"})
TENSOR_CONTAINERS = {"torch.nn.ParameterDict": T.DICT, "torch.nn.ParameterList": T.SEQ}
# The pseudo-attribute holding what `self[name] = Module(...)` stores (nn.ModuleDict/ModuleList subclasses).
ITEMS = "[]"
# Hooks that pick the implementation a swap decorator puts in place (`data/libraries.toml`); a
# model that overrides one to default to "eager" runs the eager forward of its decorated classes.
EAGER_DEFAULT_HOOKS = libraries.EAGER_DEFAULT_HOOKS
# Kinds of nodes that passes over a function look for (`FileFacts.of_kinds`), and some sets of them.
KEPT_KINDS = frozenset((ast.Assign, ast.AnnAssign, ast.AugAssign, ast.Call, ast.Return, ast.For, ast.AsyncFor,
                        ast.While, ast.Import, ast.ImportFrom, ast.Try, *([ast.TryStar] if hasattr(ast, "TryStar") else [])))
IMPORTS = frozenset((ast.Import, ast.ImportFrom))
CALLS = frozenset((ast.Call,))
LOOPS = frozenset((ast.For, ast.AsyncFor, ast.While))
TRIES = frozenset((ast.Try, ast.TryStar) if hasattr(ast, "TryStar") else (ast.Try,))
ASSIGNS = frozenset((ast.Assign, ast.AnnAssign))
FILE_NOQA = re.compile(r"#\s*compilelint\s*:\s*noqa(?::\s*(?P<codes>[A-Z]+[0-9]*(?:\s*,\s*[A-Z]+[0-9]*)*))?", re.I)


def _overrides_swap_to_eager(top) -> bool:
    """Does a class here override an eager-default hook with "eager" in it (`requested = "eager"
    if requested is None else requested`)?"""
    return any(isinstance(m, FUNCS) and m.name in EAGER_DEFAULT_HOOKS
               and any(isinstance(n, ast.Constant) and n.value == "eager" for n in walk(m))
               for c in top if isinstance(c, ast.ClassDef) for m in c.body)


class ClassFacts:
    """What a class's methods assign to `self`: the basis of `self.x` inference in this file."""

    def __init__(self, info: ClassInfo):
        self.info = info
        self.kinds: Dict[str, Set[Optional[str]]] = {}
        self.init_numbers: Set[str] = set()  # attrs set to an int/float constant in __init__
        self.init_lists: Set[str] = set()
        self.tensor_attrs: Set[str] = set()  # parameters, buffers, tensors
        self.buffer_attrs: Set[str] = set()  # registered buffers (`register_buffer`, `nn.Buffer(...)`)
        # buffers declared `self.b = nn.Buffer(t)`: the tensor itself is marked a buffer, so putting it
        # back on the module (`self.b = self.b.to(...)`) makes `__setattr__` read its `persistent` flag
        self.marked_buffer_attrs: Set[str] = set()
        self.forward_returns: Optional[str] = None  # kind of forward's return annotation
        # `self.d = {}` and `self.d[k] = v` stores: the attributes only ever set to an empty dict, the
        # others, and the kinds of the values stored as items (a dict filled only with tensors)
        self.empty_dicts: Set[str] = set()
        self.other_values: Set[str] = set()
        self.item_kinds: Dict[str, Set[Optional[str]]] = {}
        self.init_params: List[str] = []  # __init__'s parameters after self, in order
        self.param_attrs: Dict[str, str] = {}  # __init__ parameter → the self attribute it is stored in
        self.config_attrs: Dict[str, str] = {}  # self attribute → the config attribute __init__ copies into it
        self.annotated: Dict[str, str] = {}  # self attribute → the class its `self.x: C = ...` names
        self.built: Dict[str, List[str]] = {}  # self attribute → the classes `self.x = C(...)` constructs

    def attr_kind(self, attr: str) -> Optional[str]:
        if attr == "training":
            return T.SCALAR
        kinds = self.kinds.get(attr, set()) - {T.NONE}
        return kinds.pop() if len(kinds) == 1 else None

    def attr_class(self, attr: str) -> Optional[str]:
        """The one class `self.<attr>` holds: its annotation (`self.t: Optional[Table] = None`), else
        the one class the methods assign to it (`self.t = Table()`; not what they store as its
        items, `self.t[k] = Block()`, which `submodules` holds too)."""
        built = self.built.get(attr, ())
        return self.annotated.get(attr) or (built[0] if len(built) == 1 else None)


class FileFacts:
    """The file-level facts; `collect()` fills them in the order later facts depend on."""

    def __init__(self, path: str, source: SourceFile, tree: ast.Module):
        self.path = path
        self.source = source
        self.tree = tree
        self.module = module_name_for(path)
        self.top_package = self.module.split(".", 1)[0]
        self.imports = ImportTable(self.module, path.endswith("__init__.py"))
        self.top = list(module_statements(tree.body))
        self.classes: Dict[str, ClassFacts] = {}  # in source order: the summary's classes
        self.global_kinds: Dict[str, Optional[str]] = {}
        self.global_numbers: Set[str] = set()
        self.global_lists: Set[str] = set()
        self.type_aliases: Set[str] = set()  # NAME = dict[str, Tensor]: a builtin type's subscript
        self.module_defs: Set[str] = set()
        self.class_registries: Dict[str, List[str]] = {}  # NAME = {"sdpa": SdpaAttention, ...}
        self.opt_in_classes: Dict[str, str] = {}  # class in a registry under an opt-in key → that key
        self.compiled_names: Set[str] = set()  # module functions handed to torch.compile by a call
        self.false_constants: frozenset = frozenset()  # module names bound once to a false constant (`parts`)
        self.none_tests = none_tests(self.top)  # `def exists(v): return v is not None` (`passed_args`)
        # function (by id) → all its nodes; (function id, kinds) → those of these kinds (`of_kinds`).
        # Pure functions of the node: the language server's reuse does not count them as state.
        self._nodes: Dict[object, List[ast.AST]] = {}
        self._marks_constants = MARKED_CONSTANT in source.text  # else no function's nodes need a look
        self.swap_default_eager = any(hook in source.text for hook in EAGER_DEFAULT_HOOKS) and \
            _overrides_swap_to_eager(self.top)
        self._module_constructed: Optional[Dict[str, str]] = None

    def collect(self) -> "FileFacts":
        for node in self.top:
            if isinstance(node, (ast.Import, ast.ImportFrom)):
                self.imports.add_import(node)
        for stmt in self.top:
            if isinstance(stmt, FUNCS + (ast.ClassDef,)):
                self.imports.aliases[stmt.name] = f"{self.module}.{stmt.name}"
                self.module_defs.add(stmt.name)
        for stmt in self.top:
            if isinstance(stmt, (ast.Assign, ast.AnnAssign)):
                self._module_assignment(stmt)
        for stmt in self.top:
            if isinstance(stmt, ast.ClassDef):
                self._method_imports(stmt)
        for stmt in self.top:
            if isinstance(stmt, ast.ClassDef):
                ClassCollector(self, stmt).collect()
        self.compiled_names = self.find_compiled_names()
        self.false_constants = false_constants(self.top, self.source.text)
        return self

    def _method_imports(self, class_node: ast.ClassDef) -> None:
        """Imports inside the class's methods (`from torch.nn.modules.rnn import LSTM` in `__init__`):
        what the class stores is read before the method is walked (bindings.py adds them then). A
        name the module binds itself keeps its module-level meaning."""
        local = ImportTable(self.imports.module, self.imports.is_package)
        for method in class_node.body:
            if isinstance(method, FUNCS):
                for sub in self.of_kinds(method, IMPORTS):
                    local.add_import(sub)
        for name, dotted_name in local.aliases.items():
            self.imports.aliases.setdefault(name, dotted_name)

    def find_compiled_names(self) -> Set[str]:
        """Module functions handed to torch.compile by a call (the language server re-uses each
        function's answer between edits)."""
        return compiled_names(self.tree, self.source.text, self.resolve_plain, self.nodes)

    def nodes(self, fn: ast.AST) -> List[ast.AST]:
        """Every node of a function, walked once and shared by all the passes that need it."""
        key = id(fn)
        if key not in self._nodes:
            self._nodes[key] = walk(fn)
        return self._nodes[key]

    def of_kinds(self, fn: ast.AST, kinds: frozenset) -> List[ast.AST]:
        """The nodes of a function of these classes, in walk order. Most passes look for a few kinds
        of statements and calls (a tenth of the nodes): those of `KEPT_KINDS` are set apart once,
        and each set of kinds asked for is kept (`kinds`: a module constant, not made per call)."""
        key = (id(fn), kinds)
        got = self._nodes.get(key)
        if got is None:
            source = self.nodes(fn)
            if kinds <= KEPT_KINDS:
                kept = (id(fn), KEPT_KINDS)
                source = self._nodes.get(kept)
                if source is None:
                    source = self._nodes[kept] = [n for n in self.nodes(fn) if n.__class__ in KEPT_KINDS]
            got = self._nodes[key] = [n for n in source if n.__class__ in kinds]
        return got

    def walked_nodes(self, functions) -> Dict[int, List[ast.AST]]:
        """The node lists already walked of `functions`, by id (the language server keeps them
        between edits for the functions a re-parse keeps)."""
        return {id(fn): self._nodes[id(fn)] for fn in functions if id(fn) in self._nodes}

    def keep_nodes(self, walked: Dict[int, List[ast.AST]]) -> None:
        """Node lists walked before, for the same function objects (see `walked_nodes`)."""
        self._nodes.update(walked)

    # ----- names ----------------------------------------------------------------------------------
    def resolve_plain(self, node) -> Optional[str]:
        """A name through the imports, ignoring locals (for facts that hold in every function)."""
        return self.imports.resolve(node)

    def global_kind(self, name: str) -> Optional[str]:
        if name in self.global_kinds:
            return self.global_kinds[name]
        # `from .utils import logger`: a logger made in another module of the project.
        if name in self.imports.aliases and name.lower().lstrip("_") in ("logger", "log"):
            return T.LOGGER
        return None

    def decorator_name(self, node: ast.AST) -> Optional[str]:
        """The decorator's resolved name; `#cudagraph` appended for a compile in a CUDA-graph mode."""
        target = node.func if isinstance(node, ast.Call) else node
        name = self.imports.resolve(target) or dotted(target)
        if name and isinstance(node, ast.Call):
            mode = keyword_str(node, "mode")
            if mode in CUDAGRAPH_MODES:
                return name + "#cudagraph"
        return name

    def module_constructed(self) -> Dict[str, str]:
        """Module-level names bound to a constructed project class (`model = MyModel()`)."""
        if self._module_constructed is None:
            found = {}
            for stmt in self.top:
                if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name):
                    if isinstance(stmt.value, ast.Call):
                        name = self.imports.resolve(stmt.value.func)
                        if name and name.rsplit(".", 1)[-1][:1].isupper() and not name.startswith(("builtins.", "torch.")):
                            found[stmt.targets[0].id] = name
            self._module_constructed = found
        return self._module_constructed

    def _module_assignment(self, stmt):
        targets = stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target]
        value = stmt.value
        if value is None:
            return
        for t in targets:
            if not isinstance(t, ast.Name):
                continue
            name = t.id
            if isinstance(value, ast.Constant) and isinstance(value.value, (int, float)) and not isinstance(value.value, bool):
                self.global_numbers.add(name)
                self.global_kinds[name] = T.SCALAR
            elif isinstance(value, ast.List) or is_call_to(value, "list"):
                self.global_lists.add(name)
            elif isinstance(value, ast.Subscript) and self.imports.resolve(value.value) in BUILTIN_GENERICS:
                self.type_aliases.add(name)
            elif is_logger_factory(value, self.imports):
                self.global_kinds[name] = T.LOGGER
            elif isinstance(value, ast.Constant):
                self.global_kinds[name] = T.SCALAR
            elif isinstance(value, ast.Dict) and value.values and all(
                    isinstance(v, (ast.Name, ast.Attribute)) and is_class_name(self.imports.resolve(v) or "")
                    for v in value.values):
                self.class_registries[name] = [self.imports.resolve(v) for v in value.values]
                for key, v in zip(value.keys, value.values):
                    if isinstance(key, ast.Constant) and isinstance(key.value, str) \
                            and libraries.opt_in_chooser(key.value) and isinstance(v, ast.Name):
                        self.opt_in_classes[v.id] = key.value
            else:
                aliased = self._attribute_of(value)
                known = self.imports.aliases.values()
                if aliased and (aliased.startswith("torch.") or aliased in known or
                                isinstance(value, ast.Attribute) and aliased.rpartition(".")[0] in known):
                    # tc = torch.compile; op = Op.apply: calling the name calls what it is bound to
                    self.imports.aliases[name] = aliased

    def _attribute_of(self, value) -> Optional[str]:
        """The dotted name a module-level value stands for: `torch.compile`, or a guarded lookup
        of one (`getattr(getattr(torch, "compiler", None), "disable", None) or nullwrap`, the
        fallback only for a torch without it)."""
        if isinstance(value, (ast.Name, ast.Attribute)):
            return self.imports.resolve(value)
        if isinstance(value, ast.BoolOp) and isinstance(value.op, ast.Or):
            return self._attribute_of(value.values[0])
        if isinstance(value, ast.Call) and isinstance(value.func, ast.Name) and value.func.id == "getattr" \
                and len(value.args) >= 2 and isinstance(value.args[1], ast.Constant) and isinstance(value.args[1].value, str):
            base = self._attribute_of(value.args[0])
            return f"{base}.{value.args[1].value}" if base else None
        return None

    # ----- functions ------------------------------------------------------------------------------
    def function_info(self, node, cls: Optional[ClassFacts]) -> FunctionInfo:
        """A function's header facts: name, lines, decorators, generator, predicate wrapper."""
        info = FunctionInfo(
            qualname=f"{cls.info.qualname}.{node.name}" if cls else node.name,
            row=node.lineno,
            end_row=node.end_lineno or node.lineno,
            decorators=[d for d in (self.decorator_name(x) for x in node.decorator_list) if d],
            is_generator=self.is_generator(node),
            params=tuple(a.arg for a in node.args.posonlyargs + node.args.args),
        )
        self._predicate_returns(node, info)
        if cls is not None and any(d.rsplit(".", 1)[-1] in ("property", "cached_property") for d in info.decorators):
            info.returns_attr = returned_attr(node)  # a state flag's getter (`state`)
        nodes = self.nodes(node)
        info.marks_constant = self._marks_constants and marks_constant(nodes)
        for n in self.of_kinds(node, LOOPS):  # its loops (`frames`)
            info.loops.append((n.lineno - node.lineno, (n.end_lineno or n.lineno) - node.lineno))
        for n in self.of_kinds(node, TRIES):  # its `try` bodies (`placement.frame_skips`)
            info.tries.append((n.body[0].lineno - node.lineno, (n.body[-1].end_lineno or n.body[-1].lineno) - node.lineno))
        return info

    def is_generator(self, func) -> bool:
        """Does `func` yield? Its text is searched first: most functions never say `yield` (joined: one
        search of the text, not one a line; each line keeps its end, so no match spans two)."""
        if "yield" not in "".join(self.source.lines[func.lineno - 1: func.end_lineno]):
            return False
        return is_generator(func)

    def _predicate_returns(self, node, info: FunctionInfo):
        """Record the bodies of project wrappers of compile predicates: `return is_compiling()`, and
        an `is_tracing(t=None)` that builds a local flag with `or` and `|=` and returns
        it. Per return, the predicate calls of its `or` chain (`or_returns`): any one of them true
        makes that return true."""
        if not PREDICATE_NAME.search(node.name):
            return
        flags: Dict[str, List[ast.AST]] = {}
        for sub in self.nodes(node):
            if isinstance(sub, ast.Assign) and len(sub.targets) == 1 and isinstance(sub.targets[0], ast.Name):
                flags.setdefault(sub.targets[0].id, []).extend(or_operands(sub.value))
            elif isinstance(sub, ast.AugAssign) and isinstance(sub.op, ast.BitOr) and isinstance(sub.target, ast.Name):
                flags.setdefault(sub.target.id, []).extend(or_operands(sub.value))
        preds, only, or_returns = [], True, []
        for sub in self.nodes(node):
            if not (isinstance(sub, ast.Return) and sub.value is not None):
                continue
            operands = []
            for v in or_operands(_truth_of(sub.value)):
                operands.extend(flags.get(v.id, [v]) if isinstance(v, ast.Name) else [v])
            names = []
            for v in operands:
                name = (self.imports.resolve(v.func) or dotted(v.func)) if isinstance(v, ast.Call) else None
                if name:
                    names.append(name)
                    if not v.args and not v.keywords:
                        preds.append(name)
                        continue
                if isinstance(v, ast.Constant) and isinstance(v.value, bool):
                    continue
                only = False
            or_returns.append(tuple(n for n in names if PREDICATE_NAME.search(n.rsplit(".", 1)[-1])))
        info.returns_predicates = preds
        info.returns_only_predicates = only and bool(preds)
        info.or_returns = or_returns if or_returns and all(or_returns) else []


def marks_constant(nodes) -> bool:
    """The body sets `_dynamo_marked_constant`, the attribute Dynamo reads for a constant result."""
    for n in nodes:
        if isinstance(n, ast.Call) and isinstance(n.func, ast.Name) and n.func.id == "setattr" and len(n.args) >= 2:
            if isinstance(n.args[1], ast.Constant) and n.args[1].value == MARKED_CONSTANT:
                return True
        if isinstance(n, ast.Attribute) and n.attr == MARKED_CONSTANT and isinstance(n.ctx, ast.Store):
            return True
    return False


def _truth_of(expr: ast.AST) -> ast.AST:
    """`bool(x)` → x: the same truth (`def is_compiling(): return bool(_is_compiling())`)."""
    while isinstance(expr, ast.Call) and isinstance(expr.func, ast.Name) and expr.func.id == "bool" \
            and len(expr.args) == 1 and not expr.keywords:
        expr = expr.args[0]
    return expr


def or_operands(expr: ast.AST) -> List[ast.AST]:
    """`a or b or c` → [a, b, c]; anything else → [expr]."""
    if isinstance(expr, ast.BoolOp) and isinstance(expr.op, ast.Or):
        return [v for value in expr.values for v in or_operands(value)]
    return [expr]


def _annotated_params(args: ast.arguments, resolve) -> Dict[str, str]:
    """{parameter: the project class its annotation names} of an `__init__` (`base: Encoder`,
    `*blocks: Block`: each item of the tuple a vararg collects)."""
    out = {}
    for arg in args.posonlyargs + args.args[1:] + args.kwonlyargs + [a for a in (args.vararg,) if a]:
        typed = annotation_class(arg.annotation, resolve)
        if typed:
            out[arg.arg] = typed
    return out


def _stored_param(value: ast.AST, resolve) -> Optional[str]:
    """The parameter a value stores as it is (`base`) or as the items of a container built from it
    (`nn.ModuleList(blocks)`, `list(blocks)`): its annotation types what `self.<attr>` holds where
    no constructor call in the project says (`Project.submodule_classes`)."""
    if isinstance(value, ast.Call) and len(value.args) == 1 and not value.keywords and resolve(value.func) in CONTAINERS:
        value = value.args[0]
    return value.id if isinstance(value, ast.Name) else None


class ClassCollector:
    """One class's facts: its bases and decorators, and what its methods assign to `self`.
    Long because every fact comes from the one walk of the class's methods; each kind has its own
    method."""

    def __init__(self, facts: FileFacts, node: ast.ClassDef):
        self.facts = facts
        self.node = node
        self.parts = Parts(facts, None)  # what the values of the method at hand hold
        self._constructed: Dict[int, List[str]] = {}  # id(expression) → `_constructed_classes`, per method

    def collect(self) -> ClassFacts:
        node, facts = self.node, self.facts
        info = ClassInfo(
            qualname=node.name,
            row=node.lineno,
            bases=[b for b in (facts.imports.resolve(x) or dotted(x) for x in node.bases) if b],
            decorators=[d for d in (facts.decorator_name(x) for x in node.decorator_list) if d],
            methods=[m.name for m in node.body if isinstance(m, FUNCS)],
            chosen_by=facts.opt_in_classes.get(node.name, ""),
        )
        cls = ClassFacts(info)
        # Attributes inherited from a base class defined earlier in this file.
        for base in node.bases:
            if isinstance(base, ast.Name) and base.id in facts.classes:
                parent = facts.classes[base.id]
                for k, v in parent.kinds.items():
                    cls.kinds.setdefault(k, set()).update(v)
                cls.init_numbers |= parent.init_numbers
                cls.init_lists |= parent.init_lists
                cls.tensor_attrs |= parent.tensor_attrs
                cls.buffer_attrs |= parent.buffer_attrs
                cls.marked_buffer_attrs |= parent.marked_buffer_attrs
                cls.init_params, cls.param_attrs = list(parent.init_params), dict(parent.param_attrs)
                cls.config_attrs = dict(parent.config_attrs)
                cls.annotated.update(parent.annotated)
                cls.built.update((k, list(v)) for k, v in parent.built.items())
                for k, v in parent.info.submodules.items():
                    info.submodules.setdefault(k, list(v))
        facts.classes[node.name] = cls
        self._class_level(info)
        probe = T.TensorInference(facts.resolve_plain, {}, lambda a: None, facts.global_kind, lambda a: None)
        for method in node.body:
            if isinstance(method, FUNCS):
                self._method(cls, method, probe)
                if method.name == "__init__":  # while the walk of __init__ still knows its local classes
                    info.submodule_flags = submodule_flags(method, self._constructed_classes)
                    info.built_under = built_under(method, info.row)
                    info.option_parts = option_parts(method, self._constructed_classes, self.facts.nodes(method))
        self._tensor_dicts(cls)
        info.config_attrs = dict(cls.config_attrs)
        info.init_defaults = init_defaults(node, self.facts.nodes, self.facts.of_kinds)
        info.state_defaults, info.init_state, info.state_changes = class_state(node, self.facts.of_kinds)
        info.init_copies, info.super_init_constants = constructor_copies(node, self.facts.of_kinds)
        info.attributes = class_attributes(node, self.facts.of_kinds)
        if info.parts:
            info.parts = self._run_parts(info.parts)
        return cls

    def _tensor_dicts(self, cls: ClassFacts):
        """`self.d = {}`, and every `self.d[k] = v` of the class stores a tensor: `self.d[k]` is one
        (a dict filled only with tensors). Not when `self.d` is ever set to something else, or filled
        another way (`self.d.update(...)`, `setdefault`), which this does not follow."""
        for attr, kinds in cls.item_kinds.items():
            if attr not in cls.empty_dicts or attr in cls.other_values or not kinds or not kinds <= {T.TENSOR, T.BOOL}:
                continue
            if any(isinstance(sub, ast.Call) and isinstance(sub.func, ast.Attribute)
                   and sub.func.attr in ("update", "setdefault", "__setitem__") and self_attr(sub.func.value) == attr
                   for method in self.node.body if isinstance(method, FUNCS)
                   for sub in self.facts.of_kinds(method, CALLS)):
                continue
            cls.kinds[attr] = {T.DICT}

    def _run_parts(self, parts: Dict[str, List[str]]) -> Dict[str, List[str]]:
        """The `parts` worth the project pass's look: those of attributes this class runs
        (`self.x(...)`, `self.x.m(...)`, `self.x[i](...)`, `for m in self.x`, `f(self.x)`), or never
        reads (a base class elsewhere may run them); `self.dim = dim`, read as a number, is not."""
        run, read = set(), set()
        for method in self.node.body:
            if not isinstance(method, FUNCS) or method.name == "__init__":
                continue
            for sub in self.facts.nodes(method):
                kind = sub.__class__
                if kind is ast.Attribute and sub.ctx.__class__ is ast.Load and is_self(sub.value):
                    read.add(sub.attr)
                elif kind is ast.Call:
                    for value in [sub.func] + sub.args:
                        while value.__class__ in _HOLDERS and not is_self(value.value):
                            value = value.value  # self.x.m(...), self.x[i](...), f(*self.x) run self.x
                        if value.__class__ is ast.Attribute and is_self(value.value):
                            run.add(value.attr)
                elif kind is ast.For or kind is ast.comprehension:
                    if sub.iter.__class__ is ast.Attribute and is_self(sub.iter.value):
                        run.add(sub.iter.attr)
        return {attr: refs for attr, refs in parts.items() if attr in run or attr not in read}

    def _class_level(self, info: ClassInfo):
        """What the class body declares plainly: attributes typed by a class (`config: Seq2SeqConfig`,
        `config_class = Seq2SeqConfig`) and boolean defaults (`is_encoder_decoder: bool = True`), which
        a method assigning `self.<name>` makes unknown (or sets, when every such assignment is one constant)."""
        resolve = self.facts.resolve_plain
        for stmt in self.node.body:
            target = stmt.target if isinstance(stmt, ast.AnnAssign) else \
                stmt.targets[0] if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 else None
            if not isinstance(target, ast.Name):
                continue
            value = stmt.value
            if isinstance(value, ast.Constant) and type(value.value) in (bool, int, float):
                info.flags[target.id] = value.value  # `is_encoder_decoder: bool = True`, `layerdrop: float = 0.0`
            typed = annotation_class(stmt.annotation, resolve) if isinstance(stmt, ast.AnnAssign) else None
            if typed is None and isinstance(value, (ast.Name, ast.Attribute)):
                typed = annotation_class(value, resolve)
            if typed:
                info.attr_types[target.id] = typed
            if isinstance(value, ast.Dict) and value.values:  # `layer_classes = {nn.Linear: ScaledLinear}`
                classes = [self.facts.imports.resolve(v) or "" for v in value.values]
                if all(is_class_name(c) for c in classes):
                    info.registries[target.id] = classes
        assigned: Dict[str, set] = {}
        for method in self.node.body:
            if not isinstance(method, FUNCS):
                continue
            for sub in self.facts.of_kinds(method, ASSIGNS):
                if sub.value is not None:
                    for t in (sub.targets if isinstance(sub, ast.Assign) else [sub.target]):
                        for attr, value in self_targets(t, sub.value):
                            constant = isinstance(value, ast.Constant) and type(value.value) in (bool, int, float)
                            assigned.setdefault(attr, set()).add(value.value if constant else None)
        for attr, values in assigned.items():
            values |= {info.flags[attr]} if attr in info.flags else set()
            info.flags[attr] = values.pop() if len(values) == 1 else None

    def _method(self, cls: ClassFacts, method, probe: T.TensorInference):
        in_init = method.name == "__init__"
        if in_init:
            self._constructor_params(method, cls)
            self._config_copies(method, cls)
        if method.name == "forward":
            cls.forward_returns = T.annotation_kind(method.returns, self.facts.resolve_plain)
        # Outside `__init__`, what a method's callers pass it may fill the object's own members
        # (`def add(self, layer): self.add_module(name, layer)`): its parameters are references too.
        self.parts = Parts(self.facts, method, init=in_init, methods=cls.info.methods, method_params=not in_init)
        self._constructed = {}
        for sub in self.facts.of_kinds(method, _RECORDING_NODES):
            if isinstance(sub, (ast.Assign, ast.AnnAssign)):
                targets = sub.targets if isinstance(sub, ast.Assign) else [sub.target]
                if sub.value is None:
                    continue
                if isinstance(sub, ast.AnnAssign) and self_attr(sub.target):
                    typed = annotation_class(sub.annotation, self.facts.resolve_plain)
                    if typed:
                        cls.annotated[self_attr(sub.target)] = typed
                for t in targets:
                    for attr, value in self_targets(t, sub.value):
                        self._record_attr(cls, attr, value, probe, in_init)
                    if isinstance(t, ast.Subscript) and is_self(t.value):  # self[f"expert_{i}"] = Expert()
                        self._record_member(cls, sub.value, probe, in_init)
                    elif isinstance(t, ast.Subscript) and self_attr(t.value):  # self.routers[name] = build(cfg)
                        self._record_members(cls, self_attr(t.value), sub.value)
                        cls.item_kinds.setdefault(self_attr(t.value), set()).add(probe.kind(sub.value))
            elif isinstance(sub, ast.Call) and self_attr_store(sub):
                self._record_attr(cls, *self_attr_store(sub), probe, in_init)
            elif in_init and isinstance(sub, ast.Call) and is_super_init(sub.func):
                parent = next((self.facts.classes[b.id] for b in self.node.bases
                               if isinstance(b, ast.Name) and b.id in self.facts.classes), None)
                if parent is not None:  # super().__init__(Gate(), Router())
                    # the parent's methods read them (resolved on the parent's class), and ours
                    self._constructor_flow(parent, parent, sub)
                    self._constructor_flow(parent, cls, sub)
            elif isinstance(sub, ast.Call) and isinstance(sub.func, ast.Attribute) and is_self(sub.func.value):
                self._record_registration(cls, sub, probe, in_init)
            elif isinstance(sub, ast.Call) and isinstance(sub.func, ast.Attribute) and sub.args \
                    and sub.func.attr in ("append", "extend", "insert") and self_attr(sub.func.value):
                # `self.layer = nn.ModuleList(); self.layer.append(Block(...))`: members of the list.
                members = cls.info.submodules.setdefault(self_attr(sub.func.value), [])
                for c in self._constructed_classes(sub.args[-1]):
                    if c not in members:
                        members.append(c)
                if in_init:
                    self._record_parts(cls, self_attr(sub.func.value), sub.args[-1])

    def _record_registration(self, cls: ClassFacts, call: ast.Call, probe: T.TensorInference, in_init: bool):
        """`self.register_buffer("name", t)` / `register_parameter` (a tensor attribute) and
        `self.add_module(name, m)` (an attribute, or a member when the name is made at run time)."""
        if call.func.attr in ("register_buffer", "register_parameter") and call.args:
            name = call.args[0]
            if isinstance(name, ast.Constant) and isinstance(name.value, str):
                cls.kinds.setdefault(name.value, set()).add(T.TENSOR)
                cls.tensor_attrs.add(name.value)
                if call.func.attr == "register_buffer":
                    cls.buffer_attrs.add(name.value)
        elif call.func.attr == "add_module" and len(call.args) > 1:
            name = call.args[0]
            if isinstance(name, ast.Constant) and isinstance(name.value, str):
                self._record_attr(cls, name.value, call.args[1], probe, in_init)
            else:  # a name made at run time: one of the object's own members
                self._record_member(cls, call.args[1], probe, in_init)

    def _record_members(self, cls: ClassFacts, attr: str, value: ast.AST):
        """`self.routers[name] = Router(cfg)` / `= build(cfg)` in any method: the container's
        members are those classes, and what the builder returns (`parts`)."""
        classes = self._constructed_classes(value)
        if classes:
            members = cls.info.submodules.setdefault(attr, [])
            members.extend(c for c in classes if c not in members)
        self._record_parts(cls, attr, value)

    def _config_copies(self, init, cls: ClassFacts):
        """`self.layerdrop = config.encoder_layerdrop`: the attribute holds the config's value (an
        attribute assigned anything else as well holds no one config attribute)."""
        copies: Dict[str, Optional[str]] = {}
        for sub in self.facts.of_kinds(init, ASSIGNS):
            if sub.value is not None:
                for t in (sub.targets if isinstance(sub, ast.Assign) else [sub.target]):
                    for attr, value in self_targets(t, sub.value):
                        owner = dotted(value.value) or "" if isinstance(value, ast.Attribute) else ""
                        source = value.attr if "config" in owner.lower() else None
                        copies[attr] = source if attr not in copies or copies[attr] == source else None
        cls.config_attrs.update({a: c for a, c in copies.items() if c})
        for attr in [a for a, c in copies.items() if not c]:
            cls.config_attrs.pop(attr, None)

    def _constructor_params(self, init, cls: ClassFacts):
        """`self.gate = gate` for an __init__ parameter: what a constructor call passes there lands in
        `self.gate` (followed by `_constructor_flow` at the calls of this file)."""
        args = init.args
        params = [a.arg for a in (args.posonlyargs + args.args)[1:] + args.kwonlyargs]
        cls.init_params = params
        typed = _annotated_params(args, self.facts.resolve_plain)
        for sub in self.facts.of_kinds(init, _ASSIGN_OR_CALL):
            if isinstance(sub, ast.Assign) and isinstance(sub.value, ast.Name) and sub.value.id in params:
                for t in sub.targets:
                    if isinstance(t, ast.Attribute) and is_self(t.value):
                        cls.param_attrs[sub.value.id] = t.attr
            if isinstance(sub, ast.Assign) and typed:
                stored = _stored_param(sub.value, self.facts.resolve_plain)
                for t in sub.targets if stored in typed else ():
                    if isinstance(t, ast.Attribute) and is_self(t.value):
                        cls.info.param_types[t.attr] = typed[stored]
            elif isinstance(sub, ast.Call) and self_attr_store(sub):
                attr, value = self_attr_store(sub)
                if isinstance(value, ast.Name) and value.id in params:
                    cls.param_attrs[value.id] = attr
                stored = _stored_param(value, self.facts.resolve_plain) if typed else None
                if stored in typed:
                    cls.info.param_types[attr] = typed[stored]

    def _constructor_flow(self, callee: ClassFacts, owner: ClassFacts, call: ast.Call):
        """Modules constructed in the arguments of a call to `callee`'s constructor are submodules
        of the instance made (`owner`: the callee itself, or the subclass calling super().__init__)."""
        passed = list(zip(callee.init_params, call.args)) + [(k.arg, k.value) for k in call.keywords if k.arg]
        for param, value in passed:
            attr = callee.param_attrs.get(param)
            if attr is None:
                continue
            for c in self._constructed_classes(value):
                subs = owner.info.submodules.setdefault(attr, [])
                if c not in subs:
                    subs.append(c)

    def _record_parts(self, cls: ClassFacts, attr: str, value: ast.AST):
        """What `__init__` stores that other code decides (`self.heads = heads`, `self.head =
        build_head(cfg)`): `ClassInfo.parts`, resolved by the project pass (`part_flow`)."""
        refs = self.parts.refs(value)
        if refs:
            kept = cls.info.parts.setdefault(attr, [])
            kept.extend(r for r in refs if r not in kept)

    def _record_member(self, cls: ClassFacts, value: ast.AST, probe, in_init: bool):
        """A module stored under a run-time name (`self[key] = m`, `self.add_module(name, m)`) in
        any method: a member of the object (`ITEMS`). Its members are all it ever holds, so what a
        method other than `__init__` stores there counts too (`part_flow`: what the object's own
        calls of that method pass it)."""
        self._record_attr(cls, ITEMS, value, probe, in_init)
        if not in_init:
            self._record_parts(cls, ITEMS, value)

    def _record_attr(self, cls: ClassFacts, attr: str, value: ast.AST, probe, in_init: bool):
        if in_init:
            self._record_parts(cls, attr, value)
        for sub in walk(value):  # Holder(Gate(), Router()): the arguments become Holder's submodules
            if isinstance(sub, ast.Call) and isinstance(sub.func, ast.Name) and sub.func.id in self.facts.classes:
                callee = self.facts.classes[sub.func.id]
                self._constructor_flow(callee, callee, sub)
        kinds = cls.kinds.setdefault(attr, set())
        if (isinstance(value, ast.Dict) and not value.keys) or (is_call_to(value, "dict") and not value.args
                                                                and not value.keywords):
            cls.empty_dicts.add(attr)
        else:
            cls.other_values.add(attr)
        if isinstance(value, ast.Constant):
            if isinstance(value.value, (int, float)) and not isinstance(value.value, bool):
                if in_init:
                    cls.init_numbers.add(attr)
                kinds.add(T.SCALAR)
            else:
                kinds.add(T.NONE if value.value is None else T.SCALAR)
            return
        if isinstance(value, ast.List) or is_call_to(value, "list"):
            if in_init:
                cls.init_lists.add(attr)
            kinds.add(None)
            return
        if is_logger_factory(value, self.facts.imports):
            kinds.add(T.LOGGER)
            return
        if isinstance(value, ast.Call) and self.facts.resolve_plain(value.func) in TENSOR_CONTAINERS:
            kinds.add(TENSOR_CONTAINERS[self.facts.resolve_plain(value.func)])  # self.scales[name]: a tensor
            return
        kind = probe.kind(value)
        if kind in T.TENSORISH:  # nn.Parameter(...), torch.zeros(...)
            cls.tensor_attrs.add(attr)
            if isinstance(value, ast.Call) and self.facts.resolve_plain(value.func) in BUFFER_CLASSES:
                cls.buffer_attrs.add(attr)
                cls.marked_buffer_attrs.add(attr)
            kinds.add(kind)
            return
        classes = self._constructed_classes(value)
        if classes:
            cls.info.submodules.setdefault(attr, [])
            if attr != ITEMS and isinstance(value, ast.Call):  # `self.t = Table()`: the object itself
                built = cls.built.setdefault(attr, [])
                built.extend(c for c in classes if c not in built)
            for c in classes:
                if c not in cls.info.submodules[attr]:
                    cls.info.submodules[attr].append(c)
            kinds.add(T.MODULE)
            return
        kinds.add(kind)

    def _constructed_classes(self, value: ast.AST) -> List[str]:
        """Classes constructed anywhere in an expression of the method at hand (`parts`), once per
        expression: `__init__`'s attribute facts, config flags and option tests each ask it of the
        same assigned values (what a method's locals hold is worked out whole before an answer)."""
        key = id(value)
        found = self._constructed.get(key)
        if found is None:
            found = self._constructed[key] = self.parts.constructed_classes(value)
        return found


def built_under(init, class_row: int) -> Dict[str, list]:
    """`ClassInfo.built_under`: the `self.<attr> = ...` statements of `__init__` (down its `if`s
    only) that sit under a test, with the names their value calls."""
    out: Dict[str, list] = {}
    _built_under(init.body, (), class_row, out)
    return out


def _called(value) -> Tuple[str, ...]:
    return tuple(n.func.id for n in walk(value) if isinstance(n, ast.Call) and isinstance(n.func, ast.Name))


def _built_under(stmts, path, class_row: int, out: Dict[str, list]) -> None:
    """`built_under` of a block under the tests `path` (a module function, not a recursive closure:
    that is a reference cycle, which keeps the tree alive until a collection)."""
    for stmt in stmts:
        if isinstance(stmt, ast.If):
            _built_under(stmt.body, path + ((stmt.lineno - class_row, True),), class_row, out)
            _built_under(stmt.orelse, path + ((stmt.lineno - class_row, False),), class_row, out)
        elif isinstance(stmt, ast.Assign):
            attrs = [t.attr for t in stmt.targets if isinstance(t, ast.Attribute) and is_self(t.value)]
            value = stmt.value
            if isinstance(value, ast.IfExp):
                entries = [(_called(side), path + ((value.lineno - class_row, branch),))
                           for side, branch in ((value.body, True), (value.orelse, False))]
            else:
                entries = [(_called(value), path)] if path else []
            for attr in attrs:
                out.setdefault(attr, []).extend(e for e in entries if e[0])


def _option_test(test: ast.AST, params) -> Optional[Tuple[str, Tuple[str, ...], bool, str]]:
    """`kind == "a"` / `kind != "a"` / `kind in ("a", "b")` / `kind not in (...)` on a parameter
    `kind` of `__init__`, as (parameter, the constants' reprs, whether the test holds for them, the
    repr of the parameter's constant default or "": `params` maps each parameter to it)."""
    if not (isinstance(test, ast.Compare) and len(test.ops) == 1 and isinstance(test.left, ast.Name)
            and test.left.id in params):
        return None
    op, right = test.ops[0], test.comparators[0]
    if isinstance(op, (ast.Eq, ast.NotEq)) and isinstance(right, ast.Constant):
        consts = (right,)
    elif isinstance(op, (ast.In, ast.NotIn)) and isinstance(right, (ast.Tuple, ast.List, ast.Set)) and \
            all(isinstance(e, ast.Constant) for e in right.elts):
        consts = tuple(right.elts)
    else:
        return None
    return test.left.id, tuple(repr(c.value) for c in consts), isinstance(op, (ast.Eq, ast.In)), params[test.left.id]


def option_parts(init, constructed, nodes) -> Dict[str, list]:
    """`ClassInfo.option_parts`: per `self.<attr> = ...` statement of `__init__` (down its `if`s
    only) that constructs classes, (those classes, the option tests it sits under as (parameter,
    constants, branch, default)): tests of anything else, or of a parameter `__init__` rebinds,
    constrain nothing and are left out. `nodes`: every node of `__init__` (`FileFacts.nodes`)."""
    rebound = {n.id for n in nodes if n.__class__ is ast.Name and n.ctx.__class__ is ast.Store}
    defaults = {a.arg: repr(d.value) if isinstance(d, ast.Constant) else "" for a, d in parameter_defaults(init.args)}
    params = {p: defaults.get(p, "") for p in parameter_names(init.args) if p != "self" and p not in rebound}
    out: Dict[str, list] = {}
    _option_parts(init.body, (), params, constructed, out)
    return out


def _option_parts(stmts, path, params, constructed, out: Dict[str, list]) -> None:
    """`option_parts` of a block under the option tests `path` (a module function: see `_built_under`)."""
    for stmt in stmts:
        if isinstance(stmt, ast.If):
            test = _option_test(stmt.test, params)  # another test constrains no option: either branch may run
            _option_parts(stmt.body, path + (test,) if test else path, params, constructed, out)
            _option_parts(stmt.orelse, path + ((test[0], test[1], not test[2], test[3]),) if test else path,
                          params, constructed, out)
        elif isinstance(stmt, ast.Assign):
            classes = tuple(constructed(stmt.value))
            for t in stmt.targets:
                if classes and isinstance(t, ast.Attribute) and is_self(t.value):
                    out.setdefault(t.attr, []).append((classes, path))


# Expressions that reach into the value they hold (`parts` of the attributes a class runs).
_HOLDERS = (ast.Attribute, ast.Subscript, ast.Starred)
# The nodes a method's walk records facts from (`ClassCollector._method`).
_RECORDING_NODES = frozenset((ast.Assign, ast.AnnAssign, ast.Call))
_ASSIGN_OR_CALL = frozenset((ast.Assign, ast.Call))


def scan_noqa(source: SourceFile) -> Tuple[Dict[int, Optional[Tuple[str, ...]]], Optional[Tuple[str, ...]]]:
    """(row → codes or None for all, file-level codes: None none, () every code)."""
    noqa: Dict[int, Optional[Tuple[str, ...]]] = {}
    file_noqa: Optional[Tuple[str, ...]] = None
    if "noqa" not in source.text.lower():
        return noqa, file_noqa
    for i, line in comments(source.text):  # real comments only, never text in a string
        if "noqa" not in line.lower():
            continue
        m = FILE_NOQA.search(line)
        if m:
            codes = tuple(c.strip().upper() for c in (m.group("codes") or "").split(",") if c.strip())
            # () means every code; codes accumulate over several directives.
            if not codes or file_noqa == ():
                file_noqa = ()
            else:
                file_noqa = (file_noqa or ()) + codes
            continue
        m = NOQA.search(line)
        if m:
            codes = m.group("codes")
            noqa[i] = tuple(c.strip().upper() for c in codes.split(",")) if codes else None
    return noqa, file_noqa
