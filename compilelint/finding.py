"""The values that flow out of the engine: findings, their fixes, and per-file errors.

Everything here is plain, picklable data (it crosses process boundaries and lives in the cache).
Rows and columns are 1-based everywhere, columns counted in characters, end columns exclusive
(Ruff's convention: `end_location` points just past the span).
"""
from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Optional, Tuple


@dataclass(frozen=True)
class Span:
    row: int
    col: int
    end_row: int
    end_col: int


@dataclass(frozen=True)
class Edit:
    """Replace the text in `span` with `content` (an insertion has an empty span)."""

    content: str
    span: Span


@dataclass(frozen=True)
class Fix:
    applicability: str  # "safe" | "unsafe"
    message: str  # what the fix does and, for an unsafe one, what it changes in eager behaviour
    edits: Tuple[Edit, ...]
    # A few words for an editor's quick-fix menu (with the code and "unsafe", ≤ 60 characters: the
    # language server's test holds every fix of the fixtures to it); the message carries the detail.
    title: str = ""
    # The measured torch behaviour the rewrite relies on (data/torch_behaviour.toml): offered only on
    # a torch where it holds; "" when it works on every measured version.
    behaviour: str = ""
    # Findings of its own code the rewrite leaves on purpose, moved to the path it does not change (the
    # sparse construction kept under `else:`): the fixing loop does not count them as still reported.
    keeps: int = 0
    # The rewrite offered instead on a torch where `behaviour` does not hold (None: no fix there).
    otherwise: Optional["Fix"] = None


@dataclass(frozen=True)
class Region:
    root: str  # "path.py:Class.forward"
    reason: str  # "Llama.forward → self.layers[i] → DecoderLayer.forward"
    mode: str = "any"  # "train" / "eval": the finding runs only in that mode (`if self.training:`)
    condition: str = ""  # another condition the path needs ("@use_experts_implementation keeps ...")
    # The row of a break of the same function that Dynamo meets first and cannot resume after (one
    # in a loop, or one of a `skips_frame` rule): this line runs in eager until that one is fixed. 0: none.
    hidden_by: int = 0

    def note(self) -> str:
        """`only when self.training` / `only when not self.training; @x keeps the eager forward`."""
        parts = {"train": ["self.training"], "eval": ["not self.training"]}.get(self.mode, [])
        parts += [self.condition] if self.condition else []
        when = "only when " + " and ".join(parts) if parts else ""
        if self.hidden_by:
            hidden = (f"hidden today: the break at line {self.hidden_by} is met first and Dynamo cannot resume "
                      "after it, so it runs the rest of this function in eager; this one breaks once that is fixed")
            return f"{when}; {hidden}" if when else hidden
        return when


@dataclass(frozen=True)
class Finding:
    code: str
    name: str
    message: str
    path: str  # as the user named it (relative when given relative)
    span: Span
    function: str  # qualified name of the enclosing function inside its module, "" at module level
    fix: Optional[Fix] = None
    gb_type: str = ""
    url: str = ""
    noqa_row: int = 0
    region: Optional[Region] = None
    severity: str = "error"  # "error" | "warning" | "info"
    verification: Optional[dict] = None  # filled in by `compilelint verify`
    # In a notebook: (cell number, the row where that cell starts in the cells joined as one module).
    cell: Optional[Tuple[int, int]] = None
    # The findings of this function that Dynamo does not meet until this one is fixed (their
    # `region.hidden_by` is this row): reported with it, not alone (`compilelint.hidden`).
    hidden: Tuple["Finding", ...] = ()
    # The message's data as (field, value) pairs (`Rule.report(args=...)`), for project-pass hooks.
    args: Tuple[Tuple[str, str], ...] = ()

    def arg(self, name: str) -> str:
        """A field of the message's data ("" when the rule gave none by that name)."""
        return next((value for key, value in self.args if key == name), "")

    @property
    def sort_key(self):
        return (self.path, self.span.row, self.span.col, self.code)

    def with_(self, **changes) -> "Finding":
        return replace(self, **changes)


@dataclass(frozen=True)
class FileError:
    """A file that could not be checked: reported in one line, the run goes on (exit 2)."""

    path: str
    message: str


@dataclass
class Report:
    findings: list = field(default_factory=list)  # list[Finding], sorted
    errors: list = field(default_factory=list)  # list[FileError]
    files_checked: int = 0
    fixed: int = 0  # filled by --fix
    would_fix: int = 0  # filled by --diff: the fixes the diff shows (nothing written)
