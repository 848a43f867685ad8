"""What a rule is, and the registry that rules join by being defined.

A rule is a small class in `compilelint/rules/<name>.py`: its code, kebab name, Dynamo's gb_type titles,
message, fix safety, the `visit_<ast node>` hooks the file walker calls, and its own examples
(`VALID`: must not flag, `INVALID`: must flag every line marked `# <-`). The examples are its tests
and its documentation (`compilelint rule CL101`).

While a file is walked a rule sees one `RuleContext` (`self.ctx`), declared here; fix builders
read the file through its `FixContext` (`ctx.fixes`).
"""
from __future__ import annotations

import ast
import importlib
import pkgutil
import re
import textwrap
from typing import TYPE_CHECKING, Callable, ClassVar, Dict, List, Optional, Set, Tuple, Type

from compilelint.file_text import FileText

if TYPE_CHECKING:
    from compilelint.finding import Finding, Region, Span
    from compilelint.summary import ClassInfo, FileSummary, FunctionInfo

GB_SITE = "https://meta-pytorch.github.io/compile-graph-break-site/gb/{}.html"
RECOMPILE_DOCS = "https://docs.pytorch.org/docs/stable/compile/programming_model.recompilation.html"
# The truth the messages assume unless `torch-version` says otherwise.
DEFAULT_TORCH_VERSION = "2.13"
KNOWN_TORCH_VERSIONS = ("2.11", "2.13")


# The rule-state contract. A rule instance lives for one file's walk and may keep notes between
# the functions it visits (`self.seen`, `self.methods`). The language server reuses a function's
# previous walk when the state every rule holds when the walk starts equals last time's, compared
# by value (`server/incremental.py`). So a rule's attributes, `ctx` aside, hold plain values only
# (str, int, float, bool, bytes, None, and lists, tuples, sets and dicts of them, `ClassInfo`),
# never a tree node or a function; an int above `OBJECT_ID_FLOOR` is taken for an `id()` (a note
# kept per node or per function, which another function's walk never looks up) and left out.
# A rule breaking it costs only speed: its state is not comparable, and nothing is reused.
OBJECT_ID_FLOOR = 1 << 40


def version_key(version: str) -> Tuple[int, ...]:
    """A torch version's major.minor as numbers, for comparing and sorting ("2.9" before "2.13")."""
    return tuple(int(p) for p in version.split(".")[:2] if p.isdigit())


def torch_at_least(version: str, minimum: str) -> bool:
    """`version` (major.minor) is `minimum` or newer, compared as numbers ("2.9" is older than "2.13")."""
    return version_key(version) >= version_key(minimum)

# A finding's message data, as (field, value) pairs (`("state", "self.cache")`): what the rule's
# project-pass hook reads back (`Finding.arg`), as Ruff's violation fields and pyflakes' message_args.
MessageArgs = Tuple[Tuple[str, str], ...]

# `{gb}` in a message is the rule's first GB id for the torch version in use, `{gb1}` its second, ...;
# `{gb@2.11}`: its first id on torch 2.11 whatever the version in use (a break only that version has).
GB_PLACEHOLDER = re.compile(r"\{gb(\d*)(?:@(\d+\.\d+))?\}")

_REGISTRY: Dict[str, Type["Rule"]] = {}
_LOADED = False


class RuleContext:
    """What a rule sees while the file is walked (`self.ctx`): the node's surroundings, name
    resolution and tensor inference, and `report()`. The walker implements it; these members are
    the whole interface, and rules use nothing else.
    """

    # ----- names and values -----------------------------------------------------------------------
    def resolve(self, node: ast.AST) -> Optional[str]:
        """The dotted name a Name/Attribute refers to through the imports (`F.relu` →
        `torch.nn.functional.relu`), None when a local shadows it or it is not an imported name."""
        raise NotImplementedError

    def kind(self, node: ast.AST) -> Optional[str]:
        """What an expression holds: `tensors.TENSOR`, `BOOL` (a boolean tensor), `SEQ`, `SCALAR`,
        `MODULE`, `LOGGER`, or None when unknown (say nothing rather than guess)."""
        raise NotImplementedError

    def is_tensor(self, node: ast.AST) -> bool:
        """`kind(node)` is a tensor or a boolean tensor."""
        raise NotImplementedError

    def untyped_param(self, node: ast.AST) -> str:
        """The parameter `node` reads when nothing in its own file tells what it holds (no
        annotation, no default, not rebound before, no call in the file deciding): what callers in
        other files pass decides (`Rule.report(fix_if_tensors=...)`); "" otherwise."""
        raise NotImplementedError

    def is_global_number(self, name: str) -> bool:
        """`name` is a module-level int/float that this function does not rebind locally."""
        raise NotImplementedError

    def is_global_list(self, name: str) -> bool:
        """`name` is a module-level list that this function does not rebind."""
        raise NotImplementedError

    def is_type_alias(self, name: str) -> bool:
        """`name` is a module-level alias of a builtin type's subscript (`Pair = tuple[int, int]`)
        that this function does not rebind."""
        raise NotImplementedError

    def nodes(self, fn: ast.AST) -> List[ast.AST]:
        """Every node of a function (nested ones included), in no particular order: one walk shared
        by the analysis and every rule that asks."""
        raise NotImplementedError

    def of_kinds(self, fn: ast.AST, kinds: frozenset) -> List[ast.AST]:
        """The nodes of a function of these classes (`kinds`: a module constant), in walk order:
        kept per function and set of kinds, shared like `nodes`."""
        raise NotImplementedError

    # ----- where the node is ------------------------------------------------------------------------
    @property
    def function(self) -> Optional["FunctionInfo"]:
        """The enclosing top-level function or method (None at module level)."""
        raise NotImplementedError

    @property
    def function_node(self) -> Optional[ast.AST]:
        """The `def` node of `function`."""
        raise NotImplementedError

    @property
    def cls(self):
        """The enclosing class's facts (`ClassFacts`: what its methods assign to `self`), or None."""
        raise NotImplementedError

    @property
    def locals(self) -> Set[str]:
        """Names bound in the enclosing function (they shadow imports)."""
        raise NotImplementedError

    @property
    def stack(self) -> List[ast.AST]:
        """Ancestors of the node being visited, outermost first, the node itself last."""
        raise NotImplementedError

    @property
    def loops(self) -> int:
        """How many loops enclose the node within its function."""
        raise NotImplementedError

    def parent(self, depth: int = 1) -> Optional[ast.AST]:
        """The node's ancestor `depth` levels up."""
        raise NotImplementedError

    def statement(self) -> Optional[ast.stmt]:
        """The statement holding the node."""
        raise NotImplementedError

    def path_condition(self, node: ast.AST) -> Tuple[Tuple[str, bool], ...]:
        """The compile predicates the node runs under, as (predicate, value it must have): branches
        of `if is_compiling():`, early returns, operands after `and`/`or`. The project pass drops a
        finding whose condition cannot hold while Dynamo traces."""
        raise NotImplementedError

    def span(self, node: ast.AST) -> "Span":
        """The node's 1-based span, columns in characters."""
        raise NotImplementedError

    # ----- output -----------------------------------------------------------------------------------
    def report(self, rule: "Rule", node: ast.AST, message: str, fix=None, condition: str = "",
               fix_if_tensors: Tuple[str, ...] = (), args: "MessageArgs" = (), behaviour: str = "",
               breaks_if: Tuple[ast.AST, ...] = (), skips_frame: bool = False) -> None:
        """A candidate finding at `node` (rules call `Rule.report`, which fills in the rule).
        `fix_if_tensors`: parameters (`untyped_param`) the fix needs to be tensors; `args`: the
        message's data, for the rule's own project-pass hook (`Finding.arg`); `behaviour`: the
        measured torch behaviour it relies on (`torch_version.holds`), "" when it breaks on every
        measured torch; `breaks_if`: expressions that must be true for it to break
        (`requires_grad_(flag)`), read like the tests of `if`s around it (a flag defaulting to False
        that no traced call passes); `skips_frame`: Dynamo cannot resume after this break."""
        raise NotImplementedError

    def constructed(self, node: ast.AST) -> Optional[str]:
        """The class of the object `node` is, when the function builds it: `Box(x)`, or a local
        bound to one (`box = Box(x)`); None otherwise."""
        raise NotImplementedError

    @property
    def fixes(self) -> "FixContext":
        """The file as fix builders need it."""
        raise NotImplementedError


class FixContext:
    """What fix builders read besides the `RuleContext`: the file's text, tree and imports, and
    what builders compute once per file (the `FileText`, the names bound to torch, the edit that
    imports torch)."""

    def __init__(self, source, tree: ast.Module, module: str, imports, classes):
        self.source = source
        self.tree = tree
        self.module = module
        self.imports = imports  # ImportTable
        self.classes = classes  # class qualname → ClassInfo, this file's
        self.compiled_names: Set[str] = set()  # module functions the file hands to torch.compile
        self._text: Optional[FileText] = None
        self.memo: Dict[str, object] = {}  # per-file results of builders, by name

    @property
    def text(self) -> FileText:
        """The file as a `FileText` (rows, columns, tokens), built on first use."""
        if self._text is None:
            self._text = FileText(self.source.text)
        return self._text

    @property
    def newline(self) -> str:
        return self.source.newline or "\n"

    def once(self, key: str, compute: Callable[[], object]):
        """`compute()` the first time `key` is asked for in this file, the same value after."""
        if key not in self.memo:
            self.memo[key] = compute()
        return self.memo[key]


class ProjectContext:
    """What a rule's project-pass hook (`Rule.check_project`) sees: the summaries of every checked
    file and what the project pass computed over them. `project_pass.context.PassContext` implements it."""

    @property
    def summaries(self) -> List["FileSummary"]:
        """Every checked file's summary."""
        raise NotImplementedError

    @property
    def roots(self) -> List[Tuple[str, str, bool, bool, Optional[str]]]:
        """Compile roots: (function id, how it is compiled, in a CUDA-graph mode, written explicitly,
        the class it runs for: a subclass inheriting it, else None)."""
        raise NotImplementedError

    @property
    def disabled_calls(self) -> list:
        """Calls from a function to one decorated `torch.compiler.disable` (`regions.DisabledCall`)."""
        raise NotImplementedError

    def function(self, fid: str) -> Optional[Tuple["FileSummary", "FunctionInfo"]]:
        """The file and function behind a function id (`module.Class.method`)."""
        raise NotImplementedError

    def facts(self, rule: Type["Rule"], fid: str):
        """What `rule.function_facts` said of the function during its file's walk (None: nothing)."""
        raise NotImplementedError

    def class_info(self, cls: str) -> Optional["ClassInfo"]:
        """The record of a project class by its dotted name (None: no such class)."""
        raise NotImplementedError

    def canonical(self, dotted: str) -> str:
        """A project name through re-exports (`pkg.Model` → `pkg.modeling.Model`); itself otherwise."""
        raise NotImplementedError

    def mro(self, cls: str) -> List[str]:
        """A project class's method resolution order, itself first (project classes only)."""
        raise NotImplementedError

    def display(self, fid: str) -> str:
        """A function id as findings name a root: `path.py:Class.method`."""
        raise NotImplementedError

    def region(self, fid: str) -> Optional["Region"]:
        """How torch.compile reaches the function, None when it does not."""
        raise NotImplementedError

    def dead(self, guards) -> bool:
        """Code under these guards never runs while Dynamo traces (`if not is_compiling():`)."""
        raise NotImplementedError

    @property
    def reached(self) -> Dict[str, object]:
        """Function id → how torch.compile reaches it (`regions.Reach`: root, path, mode)."""
        raise NotImplementedError

    @property
    def torch_version(self) -> str:
        """The measured torch version the findings speak of (`torch-version`, else the installed
        torch's; `torch_version.holds(behaviour, version)` says what holds on it). A per-file rule
        has no such input: it names the behaviour a finding relies on (`report(..., behaviour=)`),
        so the file's cached summary serves every version."""
        raise NotImplementedError

    def frames(self, mode: str):
        """Which reached functions Dynamo runs as frames of their own in `mode` (eval / train):
        `project_pass.frames.Frames`, computed once per pass (its questions about the project, such as
        `frames.execution_order`, take it alone)."""
        raise NotImplementedError

    @property
    def trees(self):
        """The files' parsed modules (`project_pass.trees.Trees`): the texts the pass analysed, which in
        the language server are the editor's, not the disk's."""
        raise NotImplementedError

    def unused_noqa(self) -> List[Tuple["FileSummary", int, str]]:
        """(file, row, code) of `# noqa: CODE` directives that suppressed nothing (complete only in
        the `after_suppressions` phase)."""
        raise NotImplementedError

    def findings_of(self, code: str) -> List["Finding"]:
        """The findings of rule `code` placed so far (its candidates in reached code, in the `reach`
        phase)."""
        raise NotImplementedError

    def withdraw(self, finding: "Finding") -> None:
        """Drop a finding placed before: a rule that sees, over the whole project, that Dynamo never
        names it (CL407: one first-call recompile per frame, named at its first failing guard)."""
        raise NotImplementedError

    def report(self, rule: Type["Rule"], summary: "FileSummary", function: str, span: "Span",
               message: Optional[str] = None, region: Optional["Region"] = None, *, guards=(),
               distinct: str = "") -> None:
        """A finding in `function` of `summary`'s file; selection, per-file ignores and noqa apply
        unless the rule says `noqa_applies = False`. `distinct` tells apart several findings of the
        rule at one span."""
        raise NotImplementedError


class Rule:
    code: ClassVar[str] = ""
    name: ClassVar[str] = ""
    message: ClassVar[str] = ""  # what breaks, why, the rewrite; one line
    gb_types: ClassVar[Tuple[str, ...]] = ()  # Dynamo's titles, as in Unsupported.gb_type
    # GB ids per torch version ("2.13" -> ("GB0124",)); ids are version specific, titles are not.
    gb_ids: ClassVar[Dict[str, Tuple[str, ...]]] = {}
    kind: ClassVar[str] = "break"  # "break" | "recompile" | "usage" (what verify looks for)
    # A break Dynamo meets outside a call (loading an RNN submodule): it has no point to resume at,
    # so the rest of the frame runs eager and later breaks in it are not met (`project_pass.placement.hidden_by`).
    skips_frame: ClassVar[bool] = False
    # The fixes it can make: "none" | "safe" | "unsafe" (only with --unsafe-fixes) | "sometimes" (safe for
    # some code, unsafe for other). A fix need not exist for every finding.
    fix: ClassVar[str] = "none"
    default_enabled: ClassVar[bool] = True
    # Only findings inside compiled regions count; usage rules (CL5xx, compile-in-loop) count anywhere.
    region_only: ClassVar[bool] = True
    severity: ClassVar[str] = "error"
    # Words one of which must appear in a file for the rule to possibly fire (the name it resolves
    # through imports always appears, at least in the import). Empty: the rule always runs.
    # The prefilter skips the rule elsewhere; `--no-prefilter` runs every rule on every file.
    triggers: ClassVar[Tuple[str, ...]] = ()
    # False: `# noqa` and per-file ignores do not silence it (the unused-noqa rule itself).
    noqa_applies: ClassVar[bool] = True
    # Rules with a project-pass hook: run after the per-file candidates ("reach"), or once every
    # other finding has been suppressed or kept ("after_suppressions").
    project_phase: ClassVar[str] = "reach"
    # Codes only `verify` reports (a break no rule found): the verify event they stand for.
    verify_event: ClassVar[str] = ""
    VALID: ClassVar[List[str]] = []
    INVALID: ClassVar[List[str]] = []

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        if cls.code:
            if cls.code in _REGISTRY and _REGISTRY[cls.code] is not cls:
                raise RuntimeError(f"duplicate rule code {cls.code}")
            _REGISTRY[cls.code] = cls

    def __init__(self, ctx: RuleContext):
        self.ctx = ctx

    def walk_state(self) -> Dict[str, object]:
        """What this instance keeps between the functions of its file (see the rule-state contract
        above `OBJECT_ID_FLOOR`): its attributes but the context."""
        return {k: v for k, v in vars(self).items() if k != "ctx"}

    def report(self, node, message: Optional[str] = None, *, fix=None, condition: str = "",
               fix_if_tensors: Tuple[str, ...] = (), args: MessageArgs = (), behaviour: str = "",
               breaks_if: Tuple[ast.AST, ...] = (), skips_frame: bool = False):
        self.ctx.report(self, node, message or self.message, fix=fix, condition=condition,
                        fix_if_tensors=fix_if_tensors, args=args, behaviour=behaviour, breaks_if=breaks_if,
                        skips_frame=skips_frame)

    @classmethod
    def function_facts(cls, fn: ast.AST, nodes: List[ast.AST]):
        """A project-pass rule's own facts about one function (`fn`, a `def`; `nodes`: its nodes of
        `facts.KEPT_KINDS`, its assignments, loops, calls, returns and imports, in walk order),
        worked out while its file is walked: a small picklable value (it is cached with the
        file's summary; the language server compares it by value), or None for nothing to say.
        The project pass hands it back through `ProjectContext.facts`, so the hook can tell which
        functions are worth parsing again. Runs for every function of every file (no prefilter)."""
        return None

    @classmethod
    def has_function_facts(cls) -> bool:
        return cls.function_facts.__func__ is not Rule.function_facts.__func__

    @classmethod
    def check_project(cls, project: ProjectContext) -> None:
        """The project-pass hook: findings that need every file (reach, roots, noqa use) are
        reported here through `project.report`. Most rules need none."""

    @classmethod
    def has_project_hook(cls) -> bool:
        return cls.check_project.__func__ is not Rule.check_project.__func__

    @classmethod
    def render(cls, message: str, torch_version: str = DEFAULT_TORCH_VERSION) -> str:
        """`message` with its `{gb}` placeholders filled from this rule's GB ids for the version."""
        if "{gb" not in message:
            return message
        ids = cls.gb_ids.get(torch_version) or cls.gb_ids.get(DEFAULT_TORCH_VERSION) or ()

        def fill(m):
            i = int(m.group(1) or 0)
            of = cls.gb_ids.get(m.group(2), ()) if m.group(2) else ids
            return of[i] if i < len(of) else m.group(0)

        return GB_PLACEHOLDER.sub(fill, message)

    @classmethod
    def gb_id(cls, torch_version: str = DEFAULT_TORCH_VERSION) -> str:
        ids = cls.gb_ids.get(torch_version) or cls.gb_ids.get(DEFAULT_TORCH_VERSION) or ()
        return ids[0] if ids else ""

    @classmethod
    def url(cls, torch_version: str = DEFAULT_TORCH_VERSION) -> str:
        gb = cls.gb_id(torch_version)
        if gb:
            return GB_SITE.format(gb.lower())
        if cls.kind == "recompile":
            return RECOMPILE_DOCS
        return "https://docs.pytorch.org/docs/stable/compile/programming_model.common_graph_breaks.html"

    @classmethod
    def doc(cls) -> str:
        return textwrap.dedent(cls.__doc__ or "").strip()


def registry() -> Dict[str, Type[Rule]]:
    """Every rule, by code, in code order. Importing the rules package registers them."""
    global _LOADED
    if not _LOADED:
        import compilelint.rules as pkg

        for info in pkgutil.iter_modules(pkg.__path__):
            importlib.import_module(f"compilelint.rules.{info.name}")
        _LOADED = True
    return dict(sorted(_REGISTRY.items()))


def break_codes() -> frozenset:
    """The codes of the rules whose findings are graph breaks (not verify's own codes): what the
    project pass counts as a break when it works out Dynamo's frames (`project_pass.frames`)."""
    return frozenset(code for code, rule in registry().items() if rule.kind == "break" and not rule.verify_event)


def expand_selection(patterns, codes) -> set:
    """Codes matching any of `patterns` (exact codes, prefixes like `CL2`, or `ALL`)."""
    out = set()
    for p in patterns:
        p = p.strip().upper()
        if not p:
            continue
        out.update(c for c in codes if p == "ALL" or c.startswith(p))
    return out


# A rule's `fix` as users read it: which fixes `--fix` applies, and which need `--unsafe-fixes`.
FIX_WORDS = {"none": "", "safe": "safe", "unsafe": "unsafe", "sometimes": "safe/unsafe"}


def rule_page(r, examples: bool = True) -> str:
    """A rule's page as Markdown: `compilelint rule` prints it, the language server's hover shows it
    (without the examples)."""
    out = [f"# {r.name} ({r.code})\n"]
    if r.gb_types:
        out.append(f"Dynamo: {'; '.join(r.gb_types)}  ({r.gb_id() or 'no GB id'})")
    out.append(f"Fix: {FIX_WORDS[r.fix] or 'none'}    On by default: {'yes' if r.default_enabled else 'no'}    Docs: {r.url()}\n")
    out.append(r.doc())
    if examples and r.INVALID:
        out.append("\n## Flagged (lines marked `# <-`)\n")
        out.extend("```python\n" + example.strip("\n") + "\n```" for example in r.INVALID)
    if examples and r.VALID:
        out.append("\n## Not flagged\n")
        out.extend("```python\n" + example.strip("\n") + "\n```" for example in r.VALID)
    return "\n".join(out)
