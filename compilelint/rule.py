"""What a rule is, and the registry that rules join by being defined.

A rule is a small class in `compilelint/rules/<name>.py`: its code, kebab name, Dynamo's gb_type titles,
message, fix safety, the `visit_<ast node>` hooks the file walker calls, and its own examples
(`VALID`: must not flag, `INVALID`: must flag every line marked `# <-`). The examples are its tests
and its documentation (`compilelint rule CL101`).
"""
from __future__ import annotations

import importlib
import pkgutil
import textwrap
from typing import ClassVar, Dict, List, Optional, Tuple, Type

GB_SITE = "https://meta-pytorch.github.io/compile-graph-break-site/gb/{}.html"
RECOMPILE_DOCS = "https://docs.pytorch.org/docs/stable/compile/programming_model.recompilation.html"
# The truth the messages assume unless `torch-version` says otherwise.
DEFAULT_TORCH_VERSION = "2.13"
KNOWN_TORCH_VERSIONS = ("2.11", "2.13")

_REGISTRY: Dict[str, Type["Rule"]] = {}
_LOADED = False


class Rule:
    code: ClassVar[str] = ""
    name: ClassVar[str] = ""
    message: ClassVar[str] = ""  # what breaks, why, the rewrite; one line
    gb_types: ClassVar[Tuple[str, ...]] = ()  # Dynamo's titles, as in Unsupported.gb_type
    # GB ids per torch version ("2.13" -> ("GB0124",)); ids are version specific, titles are not.
    gb_ids: ClassVar[Dict[str, Tuple[str, ...]]] = {}
    kind: ClassVar[str] = "break"  # "break" | "recompile" | "usage" (what verify looks for)
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
    VALID: ClassVar[List[str]] = []
    INVALID: ClassVar[List[str]] = []

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        if cls.code:
            if cls.code in _REGISTRY and _REGISTRY[cls.code] is not cls:
                raise RuntimeError(f"duplicate rule code {cls.code}")
            _REGISTRY[cls.code] = cls

    def __init__(self, ctx):
        self.ctx = ctx  # the file walker's context: names, tensor inference, report()

    def report(self, node, message: Optional[str] = None, *, fix=None, condition: str = ""):
        self.ctx.report(self, node, message or self.message, fix=fix, condition=condition)

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


def expand_selection(patterns, codes) -> set:
    """Codes matching any of `patterns` (exact codes, prefixes like `CL2`, or `ALL`)."""
    out = set()
    for p in patterns:
        p = p.strip().upper()
        if not p:
            continue
        out.update(c for c in codes if p == "ALL" or c.startswith(p))
    return out
