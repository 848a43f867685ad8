"""One file, one parse, one walk: from source text to a `FileSummary`.

The walk visits every function once with all rules batched (each rule's `visit_<Node>` hooks are
dispatched from a single traversal). Along the way it records what the project pass needs: the
calls each function makes, the compile roots written here, and the guards (`is_compiling()`
branches) each candidate finding sits under.
"""
from __future__ import annotations

import ast
import re
import sys
from typing import Dict, List, Optional, Set, Tuple

from compilelint import tensors as T
from compilelint.astutil import (
    FUNCS, LEAVES, exits, is_call_to, is_class_name, is_generator, is_logger_factory, is_self, keyword, keyword_str,
    module_statements, self_targets, walk,
)
from compilelint.bindings import function_inference
from compilelint.comments import comments
from compilelint.finding import Span
from compilelint.names import COMPILE_FUNCS, DYNAMO_OPTIMIZE, ImportTable, dotted, module_name_for
from compilelint.rule import registry
from compilelint.source import SourceFile
from compilelint.summary import Call, Candidate, ClassInfo, FileSummary, FunctionInfo, Root

# Modes whose compiled code is captured in CUDA graphs.
CUDAGRAPH_MODES = frozenset({"reduce-overhead", "max-autotune"})
# Calls whose name suggests a compile predicate; only these are kept as guards (keeps summaries small).
PREDICATE_NAME = re.compile(r"compil|script|trac|dynamo|export", re.I)
NOQA = re.compile(r"#\s*noqa(?::\s*(?P<codes>[A-Z]+[0-9]+(?:\s*,\s*[A-Z]+[0-9]+)*))?", re.I)
FILE_NOQA = re.compile(r"#\s*compilelint\s*:\s*noqa(?::\s*(?P<codes>[A-Z]+[0-9]*(?:\s*,\s*[A-Z]+[0-9]*)*))?", re.I)
LOOPS = (ast.For, ast.AsyncFor, ast.While)
STDLIB = frozenset(getattr(sys, "stdlib_module_names", ())) | {"builtins", "typing", "typing_extensions"}


def analyze(path: str, source: SourceFile, tree: Optional[ast.Module] = None, prefilter: bool = True) -> FileSummary:
    if tree is None:
        tree = ast.parse(source.text, filename=path)
    return FileAnalyzer(path, source, tree, prefilter).run()


class ClassFacts:
    """What a class's methods assign to `self`: the basis of `self.x` inference in this file."""

    def __init__(self, info: ClassInfo):
        self.info = info
        self.kinds: Dict[str, Set[Optional[str]]] = {}
        self.init_numbers: Set[str] = set()  # attrs set to an int/float constant in __init__
        self.init_lists: Set[str] = set()
        self.tensor_attrs: Set[str] = set()  # parameters, buffers, tensors
        self.forward_returns: Optional[str] = None  # kind of forward's return annotation

    def attr_kind(self, attr: str) -> Optional[str]:
        if attr == "training":
            return T.SCALAR
        kinds = self.kinds.get(attr, set()) - {T.NONE}
        return kinds.pop() if len(kinds) == 1 else None


class FileAnalyzer:
    def __init__(self, path: str, source: SourceFile, tree: ast.Module, prefilter: bool = True):
        self.prefilter = prefilter
        self.path = path
        self.source = source
        self.tree = tree
        self.module = module_name_for(path)
        self.top_package = self.module.split(".", 1)[0]
        self.imports = ImportTable(self.module, path.endswith("__init__.py"))
        self.summary = FileSummary(path=path, module=self.module)
        self.classes: Dict[str, ClassFacts] = {}
        self.global_kinds: Dict[str, Optional[str]] = {}
        self.global_numbers: Set[str] = set()
        self.global_lists: Set[str] = set()
        self.module_defs: Set[str] = set()
        self._nodes: Dict[int, List[ast.AST]] = {}
        self._class_names: Dict[str, List[str]] = {}  # names holding a class in the method at hand

    def nodes(self, fn: ast.AST) -> List[ast.AST]:
        """Every node of a function, walked once and shared by all the passes that need it."""
        key = id(fn)
        if key not in self._nodes:
            self._nodes[key] = walk(fn)
        return self._nodes[key]

    # ----- driver -----------------------------------------------------------------------------
    def run(self) -> FileSummary:
        top = list(module_statements(self.tree.body))
        for node in top:
            if isinstance(node, (ast.Import, ast.ImportFrom)):
                self.imports.add_import(node)
        for stmt in top:
            if isinstance(stmt, FUNCS + (ast.ClassDef,)):
                self.imports.aliases[stmt.name] = f"{self.module}.{stmt.name}"
                self.module_defs.add(stmt.name)
        for stmt in top:
            if isinstance(stmt, (ast.Assign, ast.AnnAssign)):
                self._module_assignment(stmt)
        for stmt in top:
            if isinstance(stmt, ast.ClassDef):
                self._class_facts(stmt)
        self._scan_noqa()
        text = self.source.text
        rules = [cls(self) for cls in registry().values()
                 if not (self.prefilter and cls.triggers) or any(t in text for t in cls.triggers)]
        self.hooks: Dict[str, list] = {}
        for rule in rules:
            for name in dir(rule):
                if name.startswith("visit_"):
                    self.hooks.setdefault(name[6:], []).append(getattr(rule, name))
        self.scope = Scope(self, None, None, None)
        self._walk_block(self.tree.body)
        self.summary.aliases = dict(self.imports.aliases)
        for stmt in top:
            if isinstance(stmt, FUNCS):
                self._function(stmt, None)
            elif isinstance(stmt, ast.ClassDef):
                for item in stmt.body:
                    if isinstance(item, FUNCS):
                        self._function(item, self.classes[stmt.name])
        self.summary.graph_key = self.summary.compute_graph_key()
        return self.summary

    # ----- module and class facts -------------------------------------------------------------
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
            elif is_logger_factory(value, self.imports):
                self.global_kinds[name] = T.LOGGER
            elif isinstance(value, ast.Constant):
                self.global_kinds[name] = T.SCALAR
            else:
                aliased = self.imports.resolve(value) if isinstance(value, (ast.Name, ast.Attribute)) else None
                if aliased and (aliased.startswith("torch.") or aliased in self.imports.aliases.values()):
                    self.imports.aliases[name] = aliased  # tc = torch.compile

    def _class_facts(self, node: ast.ClassDef):
        info = ClassInfo(
            qualname=node.name,
            row=node.lineno,
            bases=[b for b in (self.imports.resolve(x) or dotted(x) for x in node.bases) if b],
            decorators=[d for d in (self._decorator_name(x) for x in node.decorator_list) if d],
            methods=[m.name for m in node.body if isinstance(m, FUNCS)],
        )
        facts = ClassFacts(info)
        # Attributes inherited from a base class defined earlier in this file.
        for base in node.bases:
            if isinstance(base, ast.Name) and base.id in self.classes:
                parent = self.classes[base.id]
                for k, v in parent.kinds.items():
                    facts.kinds.setdefault(k, set()).update(v)
                facts.init_numbers |= parent.init_numbers
                facts.init_lists |= parent.init_lists
                facts.tensor_attrs |= parent.tensor_attrs
                for k, v in parent.info.submodules.items():
                    info.submodules.setdefault(k, list(v))
        self.classes[node.name] = facts
        self.summary.classes[node.name] = info
        probe = T.TensorInference(self._resolve_plain, {}, lambda a: None, self.global_kind, lambda a: None)
        for method in node.body:
            if not isinstance(method, FUNCS):
                continue
            in_init = method.name == "__init__"
            if method.name == "forward":
                facts.forward_returns = T.annotation_kind(method.returns, self._resolve_plain)
            self._class_names = self._class_valued_names(method)
            for sub in self.nodes(method):
                if isinstance(sub, (ast.Assign, ast.AnnAssign)):
                    targets = sub.targets if isinstance(sub, ast.Assign) else [sub.target]
                    if sub.value is None:
                        continue
                    for t in targets:
                        for attr, value in self_targets(t, sub.value):
                            self._record_attr(facts, attr, value, probe, in_init)
                elif isinstance(sub, ast.Call) and isinstance(sub.func, ast.Attribute) and is_self(sub.func.value):
                    if sub.func.attr in ("register_buffer", "register_parameter") and sub.args:
                        name = sub.args[0]
                        if isinstance(name, ast.Constant) and isinstance(name.value, str):
                            facts.kinds.setdefault(name.value, set()).add(T.TENSOR)
                            facts.tensor_attrs.add(name.value)
                    elif sub.func.attr == "add_module" and len(sub.args) > 1:
                        name = sub.args[0]
                        if isinstance(name, ast.Constant) and isinstance(name.value, str):
                            self._record_attr(facts, name.value, sub.args[1], probe, in_init)

    def _record_attr(self, facts: ClassFacts, attr: str, value: ast.AST, probe, in_init: bool):
        kinds = facts.kinds.setdefault(attr, set())
        if isinstance(value, ast.Constant):
            if isinstance(value.value, (int, float)) and not isinstance(value.value, bool):
                if in_init:
                    facts.init_numbers.add(attr)
                kinds.add(T.SCALAR)
            else:
                kinds.add(T.NONE if value.value is None else T.SCALAR)
            return
        if isinstance(value, ast.List) or is_call_to(value, "list"):
            if in_init:
                facts.init_lists.add(attr)
            kinds.add(None)
            return
        if is_logger_factory(value, self.imports):
            kinds.add(T.LOGGER)
            return
        kind = probe.kind(value)
        if kind in T.TENSORISH:  # nn.Parameter(...), torch.zeros(...)
            facts.tensor_attrs.add(attr)
            kinds.add(kind)
            return
        classes = self._constructed_classes(value)
        if classes:
            facts.info.submodules.setdefault(attr, [])
            for c in classes:
                if c not in facts.info.submodules[attr]:
                    facts.info.submodules[attr].append(c)
            kinds.add(T.MODULE)
            return
        kinds.add(kind)

    def _constructed_classes(self, value: ast.AST) -> List[str]:
        """Classes constructed anywhere in an expression (ModuleList([...]), make_layers(lambda: X()))."""
        found = []
        for sub in ast.walk(value):
            if isinstance(sub, ast.Call):
                if isinstance(sub.func, ast.Name) and sub.func.id in self._class_names:
                    found.extend(self._class_names[sub.func.id])  # layer_type(...), layer_type=LlamaDecoderLayer
                    continue
                name = self.imports.resolve(sub.func)
                if name and is_class_name(name):
                    found.append(name)
        return found

    def _class_valued_names(self, method) -> Dict[str, List[str]]:
        """Names in a method that hold a class: `layer_type: type = LlamaDecoderLayer` parameters
        (vLLM's models pass the decoder layer class this way) and `cls = A if cond else B`."""
        def classes(expr) -> List[str]:
            if isinstance(expr, ast.IfExp):
                return classes(expr.body) + classes(expr.orelse)
            if isinstance(expr, (ast.Name, ast.Attribute)):
                name = self.imports.resolve(expr)
                return [name] if name and is_class_name(name) else []
            return []

        out: Dict[str, List[str]] = {}
        args = method.args
        positional = args.posonlyargs + args.args
        pairs = list(zip(positional[len(positional) - len(args.defaults):], args.defaults))
        pairs += [(a, d) for a, d in zip(args.kwonlyargs, args.kw_defaults) if d is not None]
        for arg, default in pairs:
            found = classes(default)
            if found:
                out[arg.arg] = found
        for sub in self.nodes(method):
            if isinstance(sub, ast.Assign) and len(sub.targets) == 1 and isinstance(sub.targets[0], ast.Name):
                found = classes(sub.value)
                if found:
                    out.setdefault(sub.targets[0].id, []).extend(found)
        return out

    def _scan_noqa(self):
        if "noqa" not in self.source.text.lower():
            return
        for i, line in comments(self.source.text):  # real comments only, never text in a string
            if "noqa" not in line.lower():
                continue
            m = FILE_NOQA.search(line)
            if m:
                codes = tuple(c.strip().upper() for c in (m.group("codes") or "").split(",") if c.strip())
                previous = self.summary.file_noqa
                # () means every code; codes accumulate over several directives.
                if not codes or previous == ():
                    self.summary.file_noqa = ()
                else:
                    self.summary.file_noqa = (previous or ()) + codes
                continue
            m = NOQA.search(line)
            if m:
                codes = m.group("codes")
                self.summary.noqa[i] = tuple(c.strip().upper() for c in codes.split(",")) if codes else None

    # ----- names --------------------------------------------------------------------------------
    def _resolve_plain(self, node):
        return self.imports.resolve(node)

    def global_kind(self, name: str) -> Optional[str]:
        if name in self.global_kinds:
            return self.global_kinds[name]
        # `from .utils import logger`: a logger made in another module of the project.
        if name in self.imports.aliases and name.lower().lstrip("_") in ("logger", "log"):
            return T.LOGGER
        return None

    def _decorator_name(self, node: ast.AST) -> Optional[str]:
        target = node.func if isinstance(node, ast.Call) else node
        name = self.imports.resolve(target) or dotted(target)
        if name and isinstance(node, ast.Call):
            mode = keyword_str(node, "mode")
            if mode in CUDAGRAPH_MODES:
                return name + "#cudagraph"
        return name

    # ----- functions ----------------------------------------------------------------------------
    def _function(self, node, cls: Optional[ClassFacts]):
        qual = f"{cls.info.qualname}.{node.name}" if cls else node.name
        info = FunctionInfo(
            qualname=qual,
            row=node.lineno,
            end_row=node.end_lineno or node.lineno,
            decorators=[d for d in (self._decorator_name(x) for x in node.decorator_list) if d],
            is_generator=self._is_generator(node),
        )
        self._predicate_returns(node, info)
        self.summary.functions[qual] = info
        self.scope = Scope(self, node, cls, info)
        self._walk_block(node.body)
        self.scope = Scope(self, None, None, None)

    def _is_generator(self, func) -> bool:
        lines = self.source.lines[func.lineno - 1: func.end_lineno]
        if not any("yield" in line for line in lines):
            return False
        return is_generator(func)

    def _predicate_returns(self, node, info: FunctionInfo):
        """Record `return torch.compiler.is_compiling()`-style bodies: project wrappers of predicates."""
        if not PREDICATE_NAME.search(node.name) or node.args.args:
            return
        preds, only = [], True
        for sub in self.nodes(node):
            if isinstance(sub, ast.Return) and sub.value is not None:
                values = sub.value.values if isinstance(sub.value, ast.BoolOp) and isinstance(sub.value.op, ast.Or) else [sub.value]
                for v in values:
                    if isinstance(v, ast.Call) and not v.args:
                        name = self.imports.resolve(v.func) or dotted(v.func)
                        if name:
                            preds.append(name)
                            continue
                    if isinstance(v, ast.Constant) and isinstance(v.value, bool):
                        continue
                    only = False
        info.returns_predicates = preds
        info.returns_only_predicates = only and bool(preds)

    # ----- the walk -------------------------------------------------------------------------------
    def _walk_block(self, stmts):
        pushed = 0
        for stmt in stmts:
            self._visit(stmt)
            # `if is_compiling(): return ...` makes the rest of the block eager-only (and vice versa).
            if isinstance(stmt, ast.If) and not stmt.orelse and stmt.body and exits(stmt.body[-1]):
                guards = self._branch_guards(stmt.test, False)
                self.scope.guards.extend(guards)
                pushed += len(guards)
        if pushed:
            del self.scope.guards[-pushed:]

    def _visit(self, node: ast.AST):
        scope = self.scope
        scope.stack.append(node)
        for hook in self.hooks.get(type(node).__name__, ()):
            hook(node)
        if isinstance(node, ast.Call):
            self._record_call(node)
        if isinstance(node, ast.If):
            self._visit(node.test)
            self._guarded(node.test, True, node.body)
            self._guarded(node.test, False, node.orelse)
        elif isinstance(node, ast.BoolOp):
            # `not is_compiling() and t.any()`: later operands only run when earlier ones allow it.
            pushed = 0
            for value in node.values:
                self._visit(value)
                guards = self._branch_guards(value, isinstance(node.op, ast.And))
                scope.guards.extend(guards)
                pushed += len(guards)
            if pushed:
                del scope.guards[-pushed:]
        elif isinstance(node, ast.IfExp):
            self._visit(node.test)
            for branch, value in ((True, node.body), (False, node.orelse)):
                guards = self._branch_guards(node.test, branch)
                scope.guards.extend(guards)
                self._visit(value)
                if guards:
                    del scope.guards[-len(guards):]
        elif isinstance(node, FUNCS + (ast.ClassDef,)):
            # At module level functions and classes are walked as scopes of their own; inside a
            # function, nested helpers belong to it (unless they are never traced).
            nested = scope.info is not None
            if nested and isinstance(node, FUNCS) and not self._is_stopped(node):
                for d in node.decorator_list:
                    self._visit(d)
                self._walk_block(node.body)
        elif isinstance(node, LOOPS):
            for child in ast.iter_child_nodes(node):
                if child in getattr(node, "body", ()) or child in getattr(node, "orelse", ()):
                    continue
                self._visit(child)
            scope.loops += 1
            self._walk_block(node.body)
            scope.loops -= 1
            self._walk_block(node.orelse)
        else:
            for name in node._fields:
                value = getattr(node, name, None)
                if isinstance(value, list):
                    if value and isinstance(value[0], ast.stmt):
                        self._walk_block(value)
                    else:
                        for item in value:
                            if isinstance(item, ast.AST):
                                self._visit(item)
                elif isinstance(value, ast.AST) and not isinstance(value, LEAVES):
                    self._visit(value)
        scope.stack.pop()

    def _guarded(self, test, branch: bool, body):
        guards = self._branch_guards(test, branch)
        self.scope.guards.extend(guards)
        self._walk_block(body)
        if guards:
            del self.scope.guards[-len(guards):]

    def _branch_guards(self, test: ast.AST, branch: bool) -> List[Tuple[str, bool]]:
        """Predicates that must have a given value for this branch of `if test:` to run."""
        if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
            return self._branch_guards(test.operand, not branch)
        if isinstance(test, ast.BoolOp):
            if isinstance(test.op, ast.And) and branch or isinstance(test.op, ast.Or) and not branch:
                return [g for v in test.values for g in self._branch_guards(v, branch)]
            return []
        if isinstance(test, ast.Call) and not test.args:
            name = self.resolve(test.func) or dotted(test.func)
            if name and PREDICATE_NAME.search(name.rsplit(".", 1)[-1]):
                return [(name, branch)]
        return []

    def _is_stopped(self, node) -> bool:
        from compilelint.regions import is_stop_decorator

        return any(is_stop_decorator(d) for d in (self._decorator_name(x) for x in node.decorator_list) if d)

    # ----- calls and roots ------------------------------------------------------------------------
    def _record_call(self, node: ast.Call):
        scope = self.scope
        func = node.func
        name = self.resolve(func)
        if name in COMPILE_FUNCS or name in DYNAMO_OPTIMIZE:
            self._compile_site(node, name)
        if isinstance(func, ast.Call) and self.resolve(func.func) in DYNAMO_OPTIMIZE and node.args:
            self._root_for(node.args[0], "torch._dynamo.optimize(...)(fn)", node, False)
        self._record_opaque(node, name)
        if isinstance(func, ast.Attribute) and func.attr == "compile" and not node.args and name not in COMPILE_FUNCS:
            cls = self._class_of_expr(func.value)
            if cls:
                self._add_root(Root(cls, "forward", "model.compile()", node.lineno))
        if scope.info is None:
            return
        targets = list(self._call_targets(func))
        # Functions and submodules passed as arguments are called too (checkpoint(self.block, x)).
        for arg in node.args:
            if isinstance(arg, ast.Attribute) and is_self(arg.value):
                targets.append(("self", arg.attr, "forward", f"self.{arg.attr}"))
            elif isinstance(arg, ast.Name) and arg.id in self.module_defs and arg.id not in scope.locals:
                targets.append(("name", f"{self.module}.{arg.id}", "", arg.id))
        guards = tuple(scope.guards)
        for kind, target, member, label in targets:
            if kind == "name" and target.split(".", 1)[0] in STDLIB and target.split(".", 1)[0] != self.top_package:
                continue  # never a function of the checked project
            key = (kind, target, member, guards)
            if key not in scope.seen_calls:  # one edge per callee is all reach needs
                scope.seen_calls.add(key)
                scope.info.calls.append(Call.of(kind, target, member, node.lineno, node.col_offset + 1, label, guards))

    def _record_opaque(self, node: ast.Call, name: Optional[str]):
        """Functions registered as custom ops are opaque to Dynamo: reach stops there."""
        op = None
        if name and name.rsplit(".", 1)[-1] == "direct_register_custom_op":
            op = keyword(node, "op_func") or (node.args[1] if len(node.args) > 1 else None)
        elif isinstance(node.func, ast.Call) and (self.resolve(node.func.func) or "").endswith(("library.custom_op", "allow_in_graph")) and node.args:
            op = node.args[0]
        elif name in ("torch._dynamo.allow_in_graph", "torch.compiler.allow_in_graph") and node.args:
            op = node.args[0]
        if op is not None:
            target = self.resolve(op)
            if target:
                self.summary.opaque.append(target)

    def _call_targets(self, func):
        scope = self.scope
        if isinstance(func, ast.Name):
            if func.id in scope.module_locals:
                attr = scope.module_locals[func.id]
                return [("attr", attr, "forward", f"self.{attr}[i]")]
            name = self.resolve(func)
            if name and not name.startswith("builtins."):
                return [("name", name, "", func.id)]
            return []
        if isinstance(func, ast.Subscript):
            base = func.value
            if isinstance(base, ast.Attribute) and is_self(base.value):
                return [("attr", base.attr, "forward", f"self.{base.attr}[i]")]
            return []
        if not isinstance(func, ast.Attribute):
            return []
        value = func.value
        if is_self(value):
            return [("self", func.attr, "forward", f"self.{func.attr}")]
        if isinstance(value, ast.Call) and isinstance(value.func, ast.Name) and value.func.id == "super":
            return [("super", func.attr, "", f"super().{func.attr}")]
        if isinstance(value, ast.Attribute) and is_self(value.value):
            return [("attr", value.attr, func.attr, f"self.{value.attr}.{func.attr}")]
        if isinstance(value, ast.Subscript) and isinstance(value.value, ast.Attribute) and is_self(value.value.value):
            return [("attr", value.value.attr, func.attr, f"self.{value.value.attr}[i].{func.attr}")]
        if isinstance(value, ast.Name) and value.id in scope.module_locals:
            attr = scope.module_locals[value.id]
            return [("attr", attr, func.attr, f"self.{attr}[i].{func.attr}")]
        name = self.resolve(func)
        if name and not name.startswith(("builtins.", "torch.")):
            return [("name", name, "", dotted(func) or func.attr)]
        return []

    def _compile_site(self, node: ast.Call, name: str):
        target = node.args[0] if node.args else keyword(node, "model")
        if target is None or name in DYNAMO_OPTIMIZE:
            return
        mode = keyword_str(node, "mode")
        self._root_for(target, "torch.compile(...)", node, mode in CUDAGRAPH_MODES)

    def _root_for(self, target: ast.AST, via: str, site: ast.AST, cudagraph: bool):
        # torch.no_grad()(model.forward), functools.partial(f, ...): look through the wrapper.
        while isinstance(target, ast.Call) and target.args and (isinstance(target.func, ast.Call) or self.resolve(target.func) == "functools.partial"):
            target = target.args[0]
        row = site.lineno
        scope = self.scope
        if isinstance(target, ast.Attribute):
            owner = target.value
            if is_self(owner) and scope.cls is not None:
                if target.attr in scope.cls.info.methods:
                    self._add_root(Root(f"{self.module}.{scope.cls.info.qualname}", target.attr, via, row, cudagraph))
                else:
                    self._add_root(Root(f"{self.module}.{scope.cls.info.qualname}", None, via, row, cudagraph, self_attr_of=target.attr))
                return
            if isinstance(owner, ast.Attribute) and is_self(owner.value) and scope.cls is not None:
                self._add_root(Root(f"{self.module}.{scope.cls.info.qualname}", target.attr, via, row, cudagraph, self_attr_of=owner.attr))
                return
            cls = self._class_of_expr(owner)
            if cls:
                self._add_root(Root(cls, target.attr, via, row, cudagraph))
                return
            name = self.resolve(target)
            if name:
                self._add_root(Root(name, None, via, row, cudagraph))
            return
        cls = self._class_of_expr(target)
        if cls:
            self._add_root(Root(cls, "forward", via, row, cudagraph))
            return
        if isinstance(target, ast.Name):
            name = self.resolve(target)
            if name:
                self._add_root(Root(name, None, via, row, cudagraph))

    def _class_of_expr(self, node: ast.AST) -> Optional[str]:
        """`MyModel(...)` or a name bound to one in this scope or at module level."""
        if isinstance(node, ast.Call):
            name = self.resolve(node.func)
            if name and name.rsplit(".", 1)[-1][:1].isupper() and not name.startswith(("builtins.", "torch.")):
                return name
            return None
        if isinstance(node, ast.Name):
            return self.scope.constructed.get(node.id) or self.module_constructed().get(node.id)
        return None

    def module_constructed(self) -> Dict[str, str]:
        if not hasattr(self, "_module_constructed"):
            found = {}
            for stmt in module_statements(self.tree.body):
                if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name):
                    if isinstance(stmt.value, ast.Call):
                        name = self.imports.resolve(stmt.value.func)
                        if name and name.rsplit(".", 1)[-1][:1].isupper() and not name.startswith(("builtins.", "torch.")):
                            found[stmt.targets[0].id] = name
            self._module_constructed = found
        return self._module_constructed

    def _add_root(self, root: Root):
        self.summary.roots.append(root)

    # ----- the context rules see ------------------------------------------------------------------
    def resolve(self, node: ast.AST) -> Optional[str]:
        return self.imports.resolve(node, self.scope.locals)

    def kind(self, node: ast.AST) -> Optional[str]:
        return self.scope.inference.kind(node)

    def is_tensor(self, node: ast.AST) -> bool:
        return self.scope.inference.kind(node) in T.TENSORISH

    @property
    def function(self) -> Optional[FunctionInfo]:
        return self.scope.info

    @property
    def cls(self) -> Optional[ClassFacts]:
        return self.scope.cls

    @property
    def stack(self) -> List[ast.AST]:
        """Ancestors of the node being visited, outermost first, the node itself last."""
        return self.scope.stack

    @property
    def loops(self) -> int:
        return self.scope.loops

    def parent(self, depth: int = 1) -> Optional[ast.AST]:
        stack = self.scope.stack
        return stack[-1 - depth] if len(stack) > depth else None

    def statement(self) -> Optional[ast.stmt]:
        for node in reversed(self.scope.stack):
            if isinstance(node, ast.stmt):
                return node
        return None

    def span(self, node: ast.AST) -> Span:
        src = self.source
        row, end_row = node.lineno, node.end_lineno or node.lineno
        return Span(row, src.char_col(row, node.col_offset) + 1, end_row,
                    src.char_col(end_row, node.end_col_offset if node.end_col_offset is not None else node.col_offset) + 1)

    def _path_to(self, node: ast.AST) -> List[ast.AST]:
        """Ancestors of `node` from the enclosing statement down to it (the node itself last)."""
        stack = self.scope.stack
        start = next((i for i in range(len(stack) - 1, -1, -1) if isinstance(stack[i], ast.stmt)), None)
        if start is None:
            return list(stack) + ([node] if not stack or stack[-1] is not node else [])
        path = list(stack[start:])
        if path[-1] is node:
            return path
        below = _find_path(path[-1], node)
        return path + below[1:] if below else path + [node]

    def _short_circuit_guards(self, path: List[ast.AST]) -> List[Tuple[str, bool]]:
        """`not is_compiling() and t.any()`: an operand after a predicate runs only when it allows."""
        out: List[Tuple[str, bool]] = []
        for parent, child in zip(path, path[1:]):
            if isinstance(parent, ast.BoolOp):
                for value in parent.values:
                    if value is child:
                        break
                    out.extend(self._branch_guards(value, isinstance(parent.op, ast.And)))
            elif isinstance(parent, ast.IfExp) and child is not parent.test:
                out.extend(self._branch_guards(parent.test, child is parent.body))
        return out

    def is_global_number(self, name: str) -> bool:
        return name in self.global_numbers and name not in self.scope.locals_only

    def is_global_list(self, name: str) -> bool:
        return name in self.global_lists and name not in self.scope.locals

    def report(self, rule, node, message, fix=None, condition=""):
        path = self._path_to(node)
        if any(_error_message(parent, child) for parent, child in zip(path, path[1:])):
            return  # `assert ok, f"{t}"`, `raise ValueError(t.tolist())`: built only when failing
        guards = tuple(self.scope.guards) + tuple(self._short_circuit_guards(path))
        candidate = Candidate(rule.code, message, self.span(node), fix, guards, condition)
        if not rule.region_only:
            self.summary.anywhere.append(candidate)
        elif self.scope.info is not None:
            self.scope.info.candidates.append(candidate)


class Scope:
    """The function being walked: its locals, their kinds, the guards and loops around the node."""

    def __init__(self, analyzer: FileAnalyzer, node, cls: Optional[ClassFacts], info: Optional[FunctionInfo]):
        self.node = node
        self.cls = cls
        self.info = info
        self.stack: List[ast.AST] = []
        self.guards: List[Tuple[str, bool]] = []
        self.loops = 0
        self.locals: Set[str] = set()
        self.locals_only: Set[str] = set()  # assigned here without a `global` statement
        self.module_locals: Dict[str, str] = {}  # local name → self attribute holding submodules
        self.seen_calls: Set[tuple] = set()
        self.constructed: Dict[str, str] = {}  # local name → class constructed into it
        if node is not None:
            self.inference = function_inference(analyzer, node, cls, self)
        else:  # module level: no locals
            self.inference = T.TensorInference(analyzer._resolve_plain, {}, lambda a: None, analyzer.global_kind,
                                               lambda key: None)


def _find_path(root: ast.AST, target: ast.AST) -> Optional[List[ast.AST]]:
    """root, ..., target when target lies under root (expressions only: small trees)."""
    if root is target:
        return [root]
    for child in ast.iter_child_nodes(root):
        if isinstance(child, ast.stmt):
            continue
        found = _find_path(child, target)
        if found:
            return [root] + found
    return None


def _error_message(parent: ast.AST, child: ast.AST) -> bool:
    """`child` is the message of an assert or the exception of a raise: evaluated only on failure."""
    return (isinstance(parent, ast.Assert) and child is parent.msg) or \
        (isinstance(parent, ast.Raise) and child is parent.exc)


