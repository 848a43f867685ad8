"""One file, one parse, one walk: from source text to a `FileSummary`.

The walk visits every function once with all rules batched (each rule's `visit_<Node>` hooks are
dispatched from a single traversal). Along the way it records the guards (`is_compiling()`
branches) each node sits under; `calls` records the call graph and roots, `facts` holds what
the file declares, `bindings` what each function's names hold. The walker is the `RuleContext`
the rules see.
"""
from __future__ import annotations

import ast
import functools
from typing import Dict, List, Optional, Set, Tuple

from compilelint.analysis import tensors as T
from compilelint.analysis.astutil import (CHILD_FIELDS, FUNCS, child_fields, enclosing_tests, exits, is_class_name,
                                         parameter_defaults)
from compilelint.analysis.call_sites import CallSites
from compilelint.analysis.conditions import Conditions
from compilelint.analysis.calls import CallRecorder
from compilelint.analysis.config_flags import condition_flags
from compilelint.analysis.facts import KEPT_KINDS, ClassFacts, FileFacts, scan_noqa
from compilelint.analysis.misuse import MISUSE, misuse_branch, reads_self
from compilelint.analysis import self_items
from compilelint.analysis.parts import record as record_parts
from compilelint.analysis.state import foreign_stores, state_guards
from compilelint.analysis.call_binding import RETURNS_NONE
from compilelint.analysis.none_paths import handler_returns_none
from compilelint.analysis.passed_args import needed_params
from compilelint.analysis.stops import is_stop_decorator
from compilelint.analysis.wrappers import returned_wrapper
from compilelint.finding import Span
from compilelint.rule import FixContext, RuleContext, registry
from compilelint.source import SourceFile
from compilelint.summary import TRAINING, Candidate, FileSummary, FunctionInfo

LOOPS = (ast.For, ast.AsyncFor, ast.While)
# The nodes `_visit` walks in a way of its own (branches, short circuits, scopes, loops).
# Constructs that may leave out code inside them on a call (`_every_call`).
_MAY_SKIP = frozenset((ast.IfExp, ast.BoolOp, ast.ExceptHandler, ast.Try, ast.comprehension, ast.Lambda, ast.ClassDef)
                      + FUNCS + LOOPS + ((ast.TryStar,) if hasattr(ast, "TryStar") else ())
                      + ((ast.match_case,) if hasattr(ast, "match_case") else ()))
_SPECIAL = frozenset((ast.If, ast.BoolOp, ast.IfExp, ast.ClassDef) + FUNCS + LOOPS)
# The node classes without fields that hold nodes (`Constant`, `Name`, `alias`, `Eq`, `Pass`).
_CHILDLESS = tuple(c for c in vars(ast).values() if isinstance(c, type) and issubclass(c, ast.AST)
                   and c._fields is not None and not child_fields(c) and c not in _SPECIAL)


def _functions(top):
    """The module's functions and its classes' methods (nested functions are in their nodes)."""
    for stmt in top:
        if isinstance(stmt, FUNCS):
            yield stmt
        elif isinstance(stmt, ast.ClassDef):
            yield from (m for m in stmt.body if isinstance(m, FUNCS))


def analyze(path: str, source: SourceFile, tree: Optional[ast.Module] = None, prefilter: bool = True,
            graph_key: bool = True, unasked: frozenset = frozenset()) -> FileSummary:
    """`graph_key`: make the summary's call-graph hash now, else when first read (a run that keeps
    no cache never reads it). `unasked`: codes of rules not to run (`engine.unasked_rules`)."""
    if tree is None:
        tree = ast.parse(source.text, filename=path)
    analyzer = FileAnalyzer(path, source, tree, prefilter)
    analyzer.graph_key_now = graph_key
    analyzer.unasked = unasked
    summary = analyzer.run()
    # The rules hold the analyzer, and the bindings the call sites keep call back into them (what a
    # call of the file returns): this frees the file's tree now, not when a collection finds the cycles
    analyzer.hooks.clear()
    analyzer.sites.forget()
    analyzer.rules = []
    return summary


@functools.lru_cache(maxsize=None)
def _visit_methods(rule_class) -> Tuple[str, ...]:
    """A rule class's `visit_<Node>` methods (`dir` is too slow to call per file)."""
    return tuple(name for name in dir(rule_class) if name.startswith("visit_"))


class FileAnalyzer(Conditions, RuleContext):
    """Walks one file with every rule; the `RuleContext` the rules see (its other attributes are
    the walker's own business; the conditions around a node: `Conditions`). Long because it is that
    context whole: one short method for each thing a rule may ask while the walk stands on a node
    (its scope, kinds, spans, loops), beside the walk itself and `report`."""

    facts_class = FileFacts  # the language server's re-analysis uses a subclass that remembers
    graph_key_now = True  # `run` makes the summary's `graph_key` (else it is made when first read)
    unasked: frozenset = frozenset()  # codes of the rules not run: a run that reads no candidate of theirs

    def __init__(self, path: str, source: SourceFile, tree: ast.Module, prefilter: bool = True):
        self.prefilter = prefilter
        self.facts = self.facts_class(path, source, tree)
        self.path = path
        self.source = source
        self.tree = tree
        self.module = self.facts.module
        self.imports = self.facts.imports
        self.summary = FileSummary(path=path, module=self.module)
        self.calls = CallRecorder(self.facts, self.summary)
        self._fixes = FixContext(source, tree, self.module, self.imports, self.summary.classes)

    # ----- driver -----------------------------------------------------------------------------
    def run(self) -> FileSummary:
        facts = self.facts.collect()
        self.summary.classes.update((name, c.info) for name, c in facts.classes.items())
        self.summary.swap_default_eager = facts.swap_default_eager
        self._fixes.compiled_names = facts.compiled_names
        self.sites = CallSites(facts)
        self.summary.noqa, self.summary.file_noqa = scan_noqa(self.source)
        text = self.source.text
        rules = [cls(self) for cls in registry().values() if cls.code not in self.unasked and
                 (not (self.prefilter and cls.triggers) or any(t in text for t in cls.triggers))]
        self.rules = rules  # this file's rule instances (their `walk_state`: the rule-state contract)
        self.hooks: Dict[type, list] = {}  # node class → the rules' `visit_<class>` methods
        # project-pass rules' own facts of each function: every function, whatever the prefilter
        self.fact_rules = [cls for cls in registry().values() if cls.has_function_facts()]
        for rule in rules:
            for name in _visit_methods(rule.__class__):
                node_class = getattr(ast, name[6:], None)
                if node_class is not None:
                    self.hooks.setdefault(node_class, []).append(getattr(rule, name))
        # Childless nodes no hook looks at (constants, `==`): visiting them would only push and pop
        self.inert = frozenset(c for c in _CHILDLESS if c not in self.hooks)
        self.scope = Scope(facts, None, None, None)
        self._walk_block(self.tree.body)
        self.summary.aliases = dict(self.imports.aliases)
        for stmt in facts.top:
            if isinstance(stmt, FUNCS):
                self.walk_function(stmt, None)
            elif isinstance(stmt, ast.ClassDef):
                for item in stmt.body:
                    if isinstance(item, FUNCS):
                        self.walk_function(item, facts.classes[stmt.name])
        self.summary.foreign_stores = tuple(sorted({a for fn in _functions(self.facts.top)
                                                    for a in foreign_stores(fn, self.facts.of_kinds)}))
        if self.graph_key_now:
            self.summary.graph_key = self.summary.compute_graph_key()
        return self.summary

    def walk_function(self, node, cls: Optional[ClassFacts]) -> None:
        """Walk one top-level function or method (`cls`: its class's facts) with every rule: its
        `FunctionInfo` goes into the summary, and what the rules report in it. The one step a
        subclass may replace (the language server's re-analysis reuses the previous walk of an
        unchanged function: all a walk adds to the summary comes from this call)."""
        info = self.facts.function_info(node, cls)
        self.summary.functions[info.qualname] = info
        if self.fact_rules:
            nodes = self.facts.of_kinds(node, KEPT_KINDS)  # its statements and calls: what the hooks read
            for rule in self.fact_rules:
                said = rule.function_facts(node, nodes)
                if said is not None:
                    info.rule_facts[rule.code] = said
        record_parts(self.facts, node, f"{self.module}.{cls.info.qualname}" if cls else "", info, self.summary,
                     cls.info.methods if cls else ())
        self.scope = Scope(self.facts, node, cls, info, self.sites)
        info.tensor_returns = self_items.tensor_returns(node, self.resolve, self.facts.of_kinds)
        info.grows = self_items.grown_every_call(node)
        if "def " in "".join(self.facts.source.lines[node.lineno: node.end_lineno]):  # lines keep their ends
            info.wrapper = returned_wrapper(node)  # only a function with a nested `def` can return one
        self._walk_block(node.body)
        self.scope = Scope(self.facts, None, None, None)

    # ----- the walk -------------------------------------------------------------------------------
    def _walk_block(self, stmts):
        pushed = exited = 0
        for stmt in stmts:
            self._visit(stmt)
            # `if is_compiling(): return ...` makes the rest of the block eager-only (and vice versa).
            if isinstance(stmt, ast.If) and not stmt.orelse and stmt.body and exits(stmt.body[-1]):
                guards = self._branch_guards(stmt.test, False) + self._state_guards(stmt.test, False)
                self.scope.guards.extend(guards)
                pushed += len(guards)
                # `if not check: return True`: the rest runs only when the test is false.
                self.scope.exits.append((stmt.test, False))
                exited += 1
        if pushed:
            del self.scope.guards[-pushed:]
        if exited:
            del self.scope.exits[-exited:]

    def _visit(self, node: ast.AST):
        """Every rule's hooks for `node`, then its children. Long because it runs for every node of
        every file: the dispatch is written out in one function, not spread over calls."""
        scope = self.scope
        scope.stack.append(node)
        cls = node.__class__
        for hook in self.hooks.get(cls, ()):
            hook(node)
        if cls is ast.Call:
            self.calls.record(node, scope)
            self_items.note(node, scope.info, scope.node, self._is_certain_tensor, self.resolve)
        elif cls is ast.Attribute and scope.info is not None:
            self.calls.record_read(node, scope)
        elif cls is ast.Assign:
            self._note_flag(node)
            self_items.note(node, scope.info, scope.node, self._is_certain_tensor, self.resolve)
        elif cls is ast.AugAssign or cls is ast.AnnAssign:
            self_items.note(node, scope.info, scope.node, self._is_certain_tensor, self.resolve)
        if cls not in _SPECIAL:  # most nodes: their children, in order
            inert = self.inert
            fields = CHILD_FIELDS.get(cls)
            for name in child_fields(cls) if fields is None else fields:
                value = getattr(node, name, None)
                if value.__class__ is list:
                    if value and isinstance(value[0], ast.stmt):
                        self._walk_block(value)
                    else:
                        for item in value:
                            if item is not None and item.__class__ not in inert:
                                self._visit(item)
                elif value is not None and value.__class__ not in inert:
                    self._visit(value)
        elif isinstance(node, ast.If):
            self._visit(node.test)
            self._guarded(node.test, True, node.body)
            self._guarded(node.test, False, node.orelse)
        elif isinstance(node, ast.BoolOp):
            # `not is_compiling() and t.any()`: later operands only run when earlier ones allow it
            # (`self.exact or torch.equal(a, b)`: the module's state flag too).
            pushed = 0
            for value in node.values:
                self._visit(value)
                taken = isinstance(node.op, ast.And)
                guards = self._branch_guards(value, taken) + self._state_guards(value, taken)
                scope.guards.extend(guards)
                pushed += len(guards)
            if pushed:
                del scope.guards[-pushed:]
        elif isinstance(node, ast.IfExp):
            self._visit(node.test)
            for branch, value in ((True, node.body), (False, node.orelse)):
                guards = self._branch_guards(node.test, branch) + self._state_guards(node.test, branch)
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
        scope.stack.pop()

    def _state_guards(self, test, branch: bool):
        """The module's own state flags the branch needs (`if self.is_folded:`): `state.py`."""
        cls = self.scope.cls
        return state_guards(test, branch, f"{self.module}.{cls.info.qualname}") if cls is not None else []

    def _guarded(self, test, branch: bool, body):
        guards = self._branch_guards(test, branch) + self._state_guards(test, branch)
        stateful = any(name == TRAINING for name, _ in self.scope.guards) or \
            any(self._reads_self(outer) for outer, _ in self.scope.conditions)
        if misuse_branch(test, branch, body, self.scope.node, stateful):
            guards.append((MISUSE, True))  # runs only when a caller misuses an argument (misuse.py)
        self.scope.guards.extend(guards)
        plain = not self._only_guards(test)
        if plain:
            self.scope.conditions.append((test, branch))
        self._walk_block(body)
        if plain:
            self.scope.conditions.pop()
        if guards:
            del self.scope.guards[-len(guards):]

    def _reads_self(self, test) -> bool:
        """`reads_self(test)`, once per test: an outer test is asked again at each `if` inside it."""
        memo = self.scope.reads_self
        if id(test) not in memo:
            memo[id(test)] = reads_self(test)
        return memo[id(test)]

    def _is_stopped(self, node) -> bool:
        return any(is_stop_decorator(d) for d in (self.facts.decorator_name(x) for x in node.decorator_list) if d)

    # ----- the context rules see ------------------------------------------------------------------
    def resolve(self, node: ast.AST) -> Optional[str]:
        """`Scope.resolve`, once per node while the imports stay as they are: each rule asks it of
        every call's function."""
        scope = self.scope
        imports = scope.imports
        got = scope.resolved.get(id(node))
        if got is not None and got[0] is node and got[1] == imports.imported:
            return got[2]
        name = imports.resolve(node, scope.locals)
        scope.resolved[id(node)] = (node, imports.imported, name)  # the node kept: its id is not reused
        return name

    def kind(self, node: ast.AST) -> Optional[str]:
        return self.scope.inference.kind(node)

    def is_tensor(self, node: ast.AST) -> bool:
        return self.scope.inference.kind(node) in T.TENSORISH

    def _is_certain_tensor(self, node: ast.AST) -> bool:
        return self.scope.inference.certain_kind(node) in T.TENSORISH

    def untyped_param(self, node: ast.AST) -> str:
        fn = self.scope.node
        if not isinstance(node, ast.Name) or not isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)):
            return ""
        args = fn.args
        param = next((a for a in args.posonlyargs + args.args + args.kwonlyargs if a.arg == node.id), None)
        if param is None or param.annotation is not None or any(a is param for a, _ in parameter_defaults(args)):
            return ""
        here = (getattr(node, "lineno", 0), getattr(node, "col_offset", 0))
        before = [kind for pos, kind in self.scope.inference.env.get(node.id) or () if pos < here]
        return node.id if before == [None] else ""

    @property
    def function(self) -> Optional[FunctionInfo]:
        return self.scope.info

    @property
    def function_node(self) -> Optional[ast.AST]:
        return self.scope.node

    @property
    def cls(self) -> Optional[ClassFacts]:
        return self.scope.cls

    @property
    def locals(self) -> Set[str]:
        return self.scope.locals

    @property
    def fixes(self) -> FixContext:
        return self._fixes

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

    def _every_call(self, path, tests) -> bool:
        """Does the node run on every call of its function that gives what `needs` asks: no
        construct that may skip it around it, and each `if` test (or early exit) above it one that
        names an optional argument of the function (`if minlength is None:`)."""
        fn = self.scope.node
        if fn.__class__ not in FUNCS or any(n.__class__ in _MAY_SKIP and n is not fn for n in self.scope.stack + path):
            return False
        return all(needed_params([test], fn, self.facts.nodes, self.facts.none_tests) for test in tests)

    def constructed(self, node: ast.AST) -> Optional[str]:
        if isinstance(node, ast.Name) and node.id in self.scope.constructed:
            return self.scope.constructed[node.id]
        if isinstance(node, ast.Call):
            name = self.resolve(node.func)
            if name and is_class_name(name) and not name.startswith(("builtins.", "torch.")):
                return name
        return None

    def _raises_after(self) -> bool:
        """Is the statement being walked a `raise`, or followed by one in its block? Its path
        fails either way, so a break on it costs a working model nothing."""
        stack = self.scope.stack
        at = next((i for i in range(len(stack) - 1, -1, -1) if isinstance(stack[i], ast.stmt)), None)
        if at is None:
            return False
        stmt = stack[at]
        if isinstance(stmt, ast.Raise):
            return True
        if at == 0:
            return False
        holder = stack[at - 1]
        for field in ("body", "orelse", "finalbody"):
            block = getattr(holder, field, None)
            if isinstance(block, list):
                for i, s in enumerate(block):
                    if s is stmt:
                        return any(isinstance(r, ast.Raise) for r in block[i + 1:])
        return False

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

    def is_global_number(self, name: str) -> bool:
        return name in self.facts.global_numbers and name not in self.scope.locals_only

    def is_global_list(self, name: str) -> bool:
        return name in self.facts.global_lists and name not in self.scope.locals

    def is_type_alias(self, name: str) -> bool:
        return name in self.facts.type_aliases and name not in self.scope.locals

    def nodes(self, fn: ast.AST) -> List[ast.AST]:
        return self.facts.nodes(fn)

    def of_kinds(self, fn: ast.AST, kinds: frozenset) -> List[ast.AST]:
        return self.facts.of_kinds(fn, kinds)

    def path_condition(self, node: ast.AST) -> Tuple[Tuple[str, bool], ...]:
        return tuple(self.scope.guards) + tuple(self._short_circuit_guards(self._path_to(node)))

    def report(self, rule, node, message, fix=None, condition="", fix_if_tensors=(), args=(), behaviour="",
               breaks_if=(), skips_frame=False):
        path = self._path_to(node)
        if any(_error_message(parent, child) for parent, child in zip(path, path[1:])):
            return  # `assert ok, f"{t}"`, `raise ValueError(t.tolist())`: built only when failing
        if self._raises_after():
            return  # `bad = idx.nonzero()[0].item(); raise ValueError(bad)`: a path that fails either way
        guards = tuple(self.scope.guards) + tuple(self._short_circuit_guards(path))
        when = " and ".join(x for x in [self._condition_text()] + self._short_circuit_texts(path) if x)
        bound = self._binding_conditions(node)
        for test, branch in bound:
            guards += tuple(self._branch_guards(test, branch))
            when = " and ".join(x for x in (when, self._test_text(test, branch)) if x)
        for test in breaks_if:  # `requires_grad=self.training`: breaks only in the mode that makes it true
            guards += tuple(self._branch_guards(test, True))
        # what the path needs of config flags and arguments, `x is not None and x.any()` included
        conditions = list(self.scope.conditions) + bound + self._short_circuit_conditions(path) + \
            [(e, True) for e in breaks_if]
        every_call = self.scope.loops == 0 and self._every_call(path, self.scope.exits + conditions)
        candidate = Candidate(rule.code, message, self.span(node), fix, guards, condition, when, self.scope.loops > 0,
                              every_call=every_call,
                              flags=condition_flags(conditions, self.scope.cls.info.qualname if self.scope.cls else "",
                                                    self.scope.cls.config_attrs if self.scope.cls else None),
                              needs=needed_params(self.scope.exits + conditions, self.scope.node, self.facts.nodes,
                                                  self.facts.none_tests) +
                              ((RETURNS_NONE,) if handler_returns_none(self.scope.node, self.scope.stack) else ()),
                              tests=tuple((ast.unparse(test), branch) for test, branch in
                                          enclosing_tests(self.scope.node, node.lineno)) if "self." in when else (),
                              fix_if_tensors=tuple(fix_if_tensors) if fix is not None else (), args=tuple(args),
                              behaviour=behaviour,
                              assumes=self.scope.inference.assumptions_under(node), skips_frame=skips_frame)
        if not rule.region_only:
            self.summary.anywhere.append(candidate)
        elif self.scope.info is not None:
            self.scope.info.candidates.append(candidate)



class Scope:
    """The function being walked: its locals, their kinds, the guards and loops around the node."""

    def __init__(self, facts: FileFacts, node, cls: Optional[ClassFacts], info: Optional[FunctionInfo],
                 sites: Optional[CallSites] = None):
        self.node = node
        self.cls = cls
        self.info = info
        self.imports = facts.imports
        self.stack: List[ast.AST] = []
        self.guards: List[Tuple[str, bool]] = []
        self.loops = 0
        self.seen_calls: Set[tuple] = set()
        self.flags: Dict[str, Tuple[str, bool]] = {}  # local name → the predicate guard it holds
        # local name → the guards that hold where it is true (`drop = self.training and p > 0`)
        self.implied: Dict[str, Tuple[Tuple[str, bool], ...]] = {}
        self.conditions: List[Tuple[ast.AST, bool]] = []  # the plain `if` tests around the node, and which branch
        self.exits: List[Tuple[ast.AST, bool]] = []  # the tests of `if ...: return` above it in its blocks (False)
        self.reads_self: Dict[int, bool] = {}  # id(test) → does it read `self` (misuse.reads_self)
        self.resolved: Dict[int, tuple] = {}  # id(node) → (node, imports added then, its name): `resolve`
        if node is not None:
            b = sites.bindings(node, cls, info.decorators if info is not None else [])
            self.inference = b.inference
            self.locals, self.locals_only = b.locals, b.locals_only
            self.module_locals, self.constructed = b.module_locals, b.constructed
            self.typed = b.typed
        else:  # module level: no locals
            self.inference = T.TensorInference(facts.resolve_plain, {}, lambda a: None, facts.global_kind,
                                               lambda key: None)
            self.locals: Set[str] = set()
            self.locals_only: Set[str] = set()  # assigned here without a `global` statement
            self.module_locals: Dict[str, str] = {}  # local name → self attribute holding submodules
            self.constructed: Dict[str, str] = {}  # local name → class constructed into it
            self.typed: Dict[str, str] = {}  # parameter → the class its annotation names

    def resolve(self, node: ast.AST) -> Optional[str]:
        """A name through the imports, unless a local of this function shadows it."""
        return self.imports.resolve(node, self.locals)


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


