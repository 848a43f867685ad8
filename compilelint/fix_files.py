"""Applying fixes: `check --fix`, `--unsafe-fixes`, `--diff`, `--add-noqa`.

Ruff-style rounds: per file, the applicable fixes sorted by position, every fix whose edits do
not overlap an already taken one applied in one pass (the rest wait for the next round); then the
changed files are re-analysed (only those: the other files' summaries are kept) and the project
pass re-run, so fixes that only become visible after another fix are found too. At most
`MAX_ROUNDS` rounds.

A file is never hurt: a round's result for a file is kept only if it compiles (`compile()`, which
also parses it like `ast.parse`) and parses with libcst, and if the re-check no longer finds the
findings it fixed. Otherwise that file keeps its previous text and the reason is reported. Writes
go through a temporary file in the same folder and `os.replace`, keeping encoding, BOM, line ends
and permissions.
"""
from __future__ import annotations

import difflib
import os
import stat
import tempfile
import warnings
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from typing import Dict, List, Optional, Sequence, Tuple

from compilelint.finding import Finding, Report, Span
from compilelint.edits import apply_fixes
from compilelint.file_text import FileText
from compilelint.notebook import decode_any
from compilelint.rule import registry
from compilelint.source import SourceError, SourceFile, decode, encode, lines_with_ends

MAX_ROUNDS = 5


@dataclass
class Outcome:
    report: Report
    diff: str = ""
    messages: List[str] = field(default_factory=list)
    stdin_text: Optional[str] = None
    fixed_codes: Dict[str, Counter] = field(default_factory=dict)  # path -> code -> fixes applied
    noqa_added: int = 0  # lines that got (or had merged into) a `# noqa` directive


@dataclass
class _File:
    path: str
    data: bytes  # as read
    source: SourceFile  # as read (encoding, BOM, newline)
    text: str  # current text
    fixed: int = 0
    fixed_codes: Counter = field(default_factory=Counter)
    blocked: set = field(default_factory=set)  # (code, edit contents) of fixes that failed


def applicable(fix, unsafe: bool) -> bool:
    return fix is not None and (fix.applicability == "safe" or (unsafe and fix.applicability == "unsafe"))


def run_fixes(report: Report, settings, *, unsafe: bool, write: bool, add_noqa: bool,
              stdin: Optional[Tuple[str, bytes]] = None, paths: Optional[Sequence[str]] = None,
              fix: bool = True) -> Outcome:
    """Apply fixes (and/or noqa comments) to the files of `report`; see the module docstring."""
    return _Fixer(report, settings, unsafe=unsafe, write=write, add_noqa=add_noqa, stdin=stdin,
                  paths=paths, fix=fix).run()


class _Fixer:
    def __init__(self, report, settings, *, unsafe, write, add_noqa, stdin, paths, fix):
        self.report = report
        self.settings = settings
        self.unsafe = unsafe
        self.write = write and stdin is None
        self.diff = not write  # --diff: the files stay as they are, and so do the findings' rows
        self.add_noqa = add_noqa
        self.stdin = stdin
        self.paths = paths
        self.fix = fix
        self.messages: List[str] = []
        self.files: Dict[str, _File] = {}
        self.summaries = None  # path -> FileSummary, in check order
        self.order: List[str] = []
        self.noqa_added = 0

    # ----- driver ---------------------------------------------------------------------------------
    def run(self) -> Outcome:
        stdin_text = None
        if self.stdin is not None:
            try:
                stdin_text = decode(self.stdin[0], self.stdin[1]).text
            except SourceError:
                stdin_text = self.stdin[1].decode("utf-8", "replace")
        by_path = _group(self.report.findings)
        wanted = [p for p, fs in by_path.items() if self._has_work(fs)]
        if not wanted:
            return Outcome(self.report, "", self.messages, stdin_text)
        for path in wanted:
            self._load(path)
        if not self.files:
            return Outcome(self.report, "", self.messages, stdin_text)
        self._load_summaries()
        findings = self.report.findings
        if self.fix:
            findings = self._fix_rounds(findings)
        if self.add_noqa:
            findings = self._noqa(findings)
        changed = [f for f in self.files.values() if f.text != f.source.text]
        if self.write:
            failed = False
            for f in changed:
                if not self._write(f):
                    failed = True
                    f.text = f.source.text
                    f.fixed = 0
                    f.fixed_codes.clear()
                    self._reanalyze(f)
            if failed:
                findings = self._project()
            changed = [f for f in changed if f.text != f.source.text]
        # Only --diff (write=False) shows it; difflib is superlinear on big files with many fixes.
        diff = "" if self.write else "".join(_diff(f.path, f.source.text, f.text) for f in changed)
        fixed = sum(f.fixed for f in changed)
        if not self.write and self.stdin is None:
            if fixed:
                self.messages.append(f"Would fix {fixed} error{'s' if fixed != 1 else ''}.")
            fixed = 0
        if self.stdin is not None and self.stdin[0] in self.files:
            f = self.files[self.stdin[0]]
            stdin_text = encode(f.source, f.text).decode(f.source.encoding) if f.text != f.source.text else stdin_text
        would_fix = 0
        if self.diff:
            findings = self._at_original_rows(findings, changed)
            would_fix = sum(f.fixed for f in changed)
        out = Report(findings=findings, errors=list(self.report.errors),
                     files_checked=self.report.files_checked, fixed=fixed, would_fix=would_fix)
        fixed_codes = {f.path: f.fixed_codes for f in changed if f.fixed_codes}
        return Outcome(out, diff, list(dict.fromkeys(self.messages)), stdin_text, fixed_codes, self.noqa_added)

    def _at_original_rows(self, findings: List[Finding], changed: List["_File"]) -> List[Finding]:
        """--diff: the findings that remain after the fixes, where they are in the files as they
        are. One the original report has at that place is taken as it was (its fix's edits fit the
        file); one the fixes revealed gets its rows mapped back, without a fix (its edits are for
        text that exists only in the diff)."""
        maps = {f.path: line_map(f.source.text, f.text) for f in changed}
        before = {(f.path, f.span.row, f.span.col, f.code): f for f in self.report.findings}

        def old_row(m, row):
            return m[row][0] if 0 < row < len(m) else row

        out = []
        for f in findings:
            m = maps.get(f.path)
            if m is None:
                out.append(f)
                continue
            row, end_row = old_row(m, f.span.row), old_row(m, f.span.end_row)
            same = before.get((f.path, row, f.span.col, f.code))
            out.append(same or f.with_(span=Span(row, f.span.col, max(row, end_row), f.span.end_col),
                                       noqa_row=old_row(m, f.noqa_row), fix=None))
        return sorted(out, key=lambda f: f.sort_key)

    def _has_work(self, findings: List[Finding]) -> bool:
        if self.fix and any(applicable(f.fix, self.unsafe) for f in findings):
            return True
        return self.add_noqa and any(_noqa_applies(f.code) for f in findings)

    def _load(self, path: str):
        if self.stdin is not None and path == self.stdin[0]:
            data = self.stdin[1]
        else:
            if self.write:
                why = _not_writable(path)
                if why:
                    self.messages.append(f"{path}: {why}; fixes not applied")
                    return
            try:
                with open(path, "rb") as fh:
                    data = fh.read()
            except OSError as e:
                self.messages.append(f"{path}: cannot read ({e.strerror or e}); fixes not applied")
                return
        try:
            source = decode_any(path, data)
        except SourceError as e:
            self.messages.append(f"{path}: {e}; fixes not applied")
            return
        self.files[path] = _File(path, data, source, source.text)

    def _load_summaries(self):
        from compilelint.engine import analyze_files
        from compilelint.project import with_context

        if self.stdin is not None:
            files = [self.stdin[0]]
        elif self.paths:
            from compilelint.discover import discover

            s = self.settings
            files = discover(list(self.paths), s.is_excluded, s.respect_gitignore, s.force_exclude).files
        else:
            files = sorted({f.path for f in self.report.findings})
        self.named = set(files)
        files = with_context(files, self.settings)  # the same project context as the check
        summaries, _errors = analyze_files(files, self.settings, stdin=self.stdin)
        self.summaries = {s.path: s for s in summaries}
        self.order = [p for p in files if p in self.summaries]
        self.original_summaries = dict(self.summaries)

    def _project(self) -> List[Finding]:
        from compilelint.engine import project_findings
        from compilelint.project import named_only

        findings = project_findings([self.summaries[p] for p in self.order], self.settings)
        return named_only(findings, (), self.named)[0]

    def _reanalyze(self, f: _File) -> Optional[str]:
        """Re-analyse `f` from its current text; an error message, or None."""
        from compilelint.engine import analyze_bytes

        if f.text == f.source.text and f.path in self.original_summaries:
            self.summaries[f.path] = self.original_summaries[f.path]
            return None
        try:
            data = encode(f.source, f.text)
        except (UnicodeError, LookupError) as e:
            return f"the result can't be encoded as {f.source.encoding} ({e})"
        status, value = analyze_bytes(f.path, data)
        if status != "ok":
            return f"the result can't be analysed: {value}"
        self.summaries[f.path] = value
        return None

    # ----- fixing ---------------------------------------------------------------------------------
    def _fix_rounds(self, findings: List[Finding]) -> List[Finding]:
        for _ in range(MAX_ROUNDS):
            by_path = _group(findings)
            attempts = {}  # path -> (previous text, applied findings, counts before)
            for path, f in self.files.items():
                todo = [x for x in by_path.get(path, []) if applicable(x.fix, self.unsafe)
                        and _key(x) not in f.blocked]
                if not todo:
                    continue
                text, applied = self._apply_checked(f, todo)
                if not applied:
                    continue
                attempts[path] = (f.text, applied, Counter(x.code for x in by_path.get(path, [])))
                f.text = text
            if not attempts:
                break
            for path, (previous, applied, _) in list(attempts.items()):
                f = self.files[path]
                error = self._reanalyze(f)
                if error:
                    self._give_up(f, previous, applied, error)
                    del attempts[path]
            findings = self._project()
            after = _group(findings)
            reverted = False
            for path, (previous, applied, before) in attempts.items():
                f = self.files[path]
                now = Counter(x.code for x in after.get(path, []))
                done = Counter(x.code for x in applied)
                for x in applied:  # each applied fix leaves its own kept findings (summed per code)
                    done[x.code] -= x.fix.keeps
                stuck = {code for code in done if now[code] > before[code] - done[code]}
                if stuck:
                    self._give_up(f, previous, [x for x in applied if x.code in stuck],
                                  "the finding was still reported after fixing")
                    reverted = True
                else:
                    f.fixed += len(applied)
                    f.fixed_codes.update(x.code for x in applied)
            if reverted:
                findings = self._project()
        return findings

    def _give_up(self, f: _File, previous: str, culprits: List[Finding], why: str):
        f.text = previous
        self._reanalyze(f)
        for x in culprits:
            f.blocked.add(_key(x))
            self.messages.append(f"{f.path}: fix for {x.code} at {x.span.row}:{x.span.col} skipped: {why}")

    def _apply_checked(self, f: _File, todo: List[Finding]) -> Tuple[str, List[Finding]]:
        """The text with every non-overlapping fix applied, if it parses; else the fixes that do."""
        text, applied = apply_fixes(f.text, todo)
        if not applied or _parses(text, f.path) is None:
            return text, applied
        good = []
        for x in applied:
            single, ok = apply_fixes(f.text, [x])
            reason = _parses(single, f.path) if ok else "its edits are out of range"
            if reason is None:
                good.append(x)
            else:
                f.blocked.add(_key(x))
                self.messages.append(f"{f.path}: fix for {x.code} at {x.span.row}:{x.span.col} skipped: "
                                     f"result did not re-parse ({reason})")
        if good:
            text, applied = apply_fixes(f.text, good)
            if _parses(text, f.path) is None:
                return text, applied
            for x in applied:
                f.blocked.add(_key(x))
                self.messages.append(f"{f.path}: fix for {x.code} at {x.span.row}:{x.span.col} skipped: "
                                     f"result did not re-parse together with the file's other fixes")
        return f.text, []

    # ----- noqa -----------------------------------------------------------------------------------
    def _noqa(self, findings: List[Finding]) -> List[Finding]:
        by_path = _group(findings)
        touched = []
        for path, f in self.files.items():
            rows: Dict[int, List[str]] = defaultdict(list)
            for x in by_path.get(path, []):
                if _noqa_applies(x.code) and x.noqa_row and x.code not in rows[x.noqa_row]:
                    rows[x.noqa_row].append(x.code)
            if not rows:
                continue
            text = add_noqa_comments(f.text, rows, f.source.newline, lambda m: self.messages.append(f"{path}: {m}"))
            if text == f.text:
                continue
            reason = _parses(text, path)
            if reason is not None:
                self.messages.append(f"{path}: noqa comments not added: result did not re-parse ({reason})")
                continue
            previous, f.text = f.text, text
            error = self._reanalyze(f)
            if error:
                f.text = previous
                self._reanalyze(f)
                self.messages.append(f"{path}: noqa comments not added: {error}")
                continue
            touched.append(path)
            self.noqa_added += sum(a != b for a, b in zip(lines_with_ends(previous), lines_with_ends(text)))
        return self._project() if touched else findings

    # ----- writing --------------------------------------------------------------------------------
    def _write(self, f: _File) -> bool:
        try:
            data = encode(f.source, f.text)
        except (UnicodeError, LookupError) as e:
            self.messages.append(f"{f.path}: not written: the result can't be encoded as {f.source.encoding} ({e})")
            return False
        try:
            with open(f.path, "rb") as fh:
                if fh.read() != f.data:
                    self.messages.append(f"{f.path}: not written: the file changed during the run")
                    return False
        except OSError as e:
            self.messages.append(f"{f.path}: not written: {e.strerror or e}")
            return False
        why = _not_writable(f.path)
        if why:
            self.messages.append(f"{f.path}: {why}; fixes not applied")
            return False
        try:
            atomic_write(f.path, data)
        except OSError as e:
            self.messages.append(f"{f.path}: not written: {e.strerror or e}")
            return False
        return True


def _parses(text: str, path: str) -> Optional[str]:
    """None when `text` compiles and libcst parses it; else the reason."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            compile(text, path, "exec", dont_inherit=True)
    except (SyntaxError, ValueError) as e:
        line = getattr(e, "lineno", None)
        return f"{getattr(e, 'msg', e)}" + (f" at line {line}" if line else "")
    except (RecursionError, MemoryError):
        return "too deeply nested"
    try:
        import libcst

        libcst.parse_module(text)
    except Exception as e:  # libcst.ParserSyntaxError and friends
        return f"libcst: {str(e).splitlines()[0] if str(e) else type(e).__name__}"
    return None


# ----- noqa comments --------------------------------------------------------------------------------
def add_noqa_comments(text: str, rows: Dict[int, List[str]], nl: str, note) -> str:
    """`  # noqa: CODE, CODE` at the end of each row (merged into an existing `# noqa: X`)."""
    from compilelint.analysis.facts import NOQA

    ft = FileText(text)
    edits = []
    for row in sorted(rows):
        codes = rows[row]
        if not 1 <= row <= len(ft.lines):
            continue
        line = ft.line(row)
        ends_in_string = ft.row_ends_in_string(row)
        if ends_in_string is None:
            note(f"noqa for {', '.join(codes)} at line {row} not added: the file does not tokenize")
            continue
        if ends_in_string:
            note(f"noqa for {', '.join(codes)} at line {row} not added: the line ends inside a string")
            continue
        comment = ft.comment_on(row)
        if comment is None and line.rstrip().endswith("\\"):
            note(f"noqa for {', '.join(codes)} at line {row} not added: the line continues with a backslash")
            continue
        if comment is not None:
            col, ctext = comment
            m = NOQA.search(ctext)
            if m is not None:
                if m.group("codes") is None:
                    continue  # a bare `# noqa` already covers every code
                existing = [c.strip().upper() for c in m.group("codes").split(",")]
                merged = existing + [c for c in codes if c not in existing]
                if merged == existing:
                    continue
                start = col - 1 + m.start()
                end = col - 1 + m.end()
                new_line = line[:start] + "# noqa: " + ", ".join(merged) + line[end:]
                edits.append((row, new_line))
                continue
        stripped = line.rstrip()
        edits.append((row, f"{stripped}  # noqa: {', '.join(codes)}"))
    if not edits:
        return text
    lines = list(ft.lines)
    for row, new_line in edits:
        old = lines[row - 1]
        ending = old[len(old.rstrip("\r\n")):]
        lines[row - 1] = new_line + ending
    return "".join(lines)


# ----- files ----------------------------------------------------------------------------------------
def _not_writable(path: str) -> Optional[str]:
    real = os.path.realpath(path)
    try:
        st = os.stat(real)
    except OSError as e:
        return f"cannot stat ({e.strerror or e})"
    if not os.access(real, os.W_OK) or not st.st_mode & (stat.S_IWUSR | stat.S_IWGRP | stat.S_IWOTH):
        return "read-only file"
    return None


def atomic_write(path: str, data: bytes) -> None:
    """Write via a temporary file in the same folder, renamed over `path`; keeps permissions."""
    real = os.path.realpath(path)
    mode = stat.S_IMODE(os.stat(real).st_mode)
    folder = os.path.dirname(real) or "."
    fd, tmp = tempfile.mkstemp(prefix="." + os.path.basename(real) + ".", suffix=".compilelint-tmp", dir=folder)
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        os.chmod(tmp, mode)
        os.replace(tmp, real)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise


def _key(x: Finding):
    return (x.code, tuple(e.content for e in x.fix.edits))


def _group(findings) -> Dict[str, List[Finding]]:
    out: Dict[str, List[Finding]] = {}
    for f in findings:
        out.setdefault(f.path, []).append(f)
    return out


def line_map(old: str, new: str) -> list:
    """new row (1-based index) → (old row, whether the line is one a fix wrote)."""
    a, b = old.splitlines(), new.splitlines()
    out = [(0, False)] * (len(b) + 1)
    for tag, i1, i2, j1, j2 in difflib.SequenceMatcher(None, a, b, autojunk=False).get_opcodes():
        for j in range(j1, j2):
            out[j + 1] = (i1 + (j - j1) + 1, False) if tag == "equal" else (i1 + 1, True)
    return out


def _diff(path: str, before: str, after: str) -> str:
    a = lines_with_ends(before)
    b = lines_with_ends(after)
    out = []
    for line in difflib.unified_diff(a, b, fromfile=path, tofile=path):
        if not line.endswith(("\n", "\r")):
            line += "\n\\ No newline at end of file\n"
        out.append(line)
    return "".join(out)


def _noqa_applies(code: str) -> bool:
    """Whether `# noqa: CODE` can silence the code (not for unused-noqa findings themselves)."""
    rule = registry().get(code)
    return rule is None or rule.noqa_applies
