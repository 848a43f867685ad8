"""The command line: `compilelint check | rule | rules | verify | server`. Parses flags, calls the engine,
prints, exits 0 (clean) / 1 (findings) / 2 (usage or file errors). Never a traceback unless --debug.
"""
from __future__ import annotations

import os
import sys
from typing import List

import click

from compilelint import __version__
from compilelint.config import ConfigError, Settings, settings_for
from compilelint.report import FORMATS
from compilelint.rule import FIX_WORDS, KNOWN_TORCH_VERSIONS, registry, rule_page

OUTPUT_FORMATS = FORMATS
VERSION_TEXT = f"compilelint {__version__} (graph-break behaviour measured on torch {', '.join(KNOWN_TORCH_VERSIONS)})"


def _split(values) -> List[str]:
    out = []
    for v in values or ():
        out.extend(x.strip() for x in v.split(",") if x.strip())
    return out


def _color(output_file) -> bool:
    if os.environ.get("NO_COLOR") or output_file:
        return False
    if os.environ.get("FORCE_COLOR"):
        return True
    return sys.stdout.isatty()


def _excluded(path: str, settings: Settings) -> bool:
    return settings.is_excluded(path)


def _without_summary(text: str, report, *, color: bool, unsafe_fixes: bool) -> str:
    """`--quiet`: the text formats' findings without the closing summary ("Found 2 errors." or
    "All checks passed!") and the blank line before it."""
    from compilelint.report._style import Style
    from compilelint.report.summary import summary_lines

    tail = "\n".join(summary_lines(report, unsafe_fixes=unsafe_fixes, style=Style(color))) + "\n"
    if text.endswith(tail):
        text = text[: -len(tail)]
        if text.endswith("\n\n"):
            text = text[:-1]
    return text


def _fail(message: str) -> None:
    click.echo(f"compilelint: error: {message}", err=True)
    sys.exit(2)


class _Group(click.Group):
    def invoke(self, ctx):
        try:
            return super().invoke(ctx)
        except (click.exceptions.Exit, click.ClickException, click.exceptions.Abort, SystemExit):
            raise
        except KeyboardInterrupt:
            click.echo("compilelint: interrupted", err=True)
            sys.exit(130)
        except BrokenPipeError:  # `compilelint rules | head`: the reader left; so do we, quietly
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
            sys.exit(1)
        except Exception as e:  # a bug of ours: one line, the traceback only with --debug
            if os.environ.get("COMPILELINT_DEBUG") or "--debug" in sys.argv:
                raise
            _fail(f"internal error: {type(e).__name__}: {e} (rerun with --debug for the traceback)")


@click.group(cls=_Group, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, "-V", "--version", message=VERSION_TEXT.replace(__version__, "%(version)s"))
def main():
    """Find, fix and verify code that graph-breaks or recompiles under torch.compile."""


@main.command("version")
def version_command():
    """Print compilelint's version."""
    click.echo(VERSION_TEXT)


def selection_options(f):
    options = [
        click.option("--select", multiple=True, help="Rule codes or prefixes to enable (CL1, CL201, ALL)."),
        click.option("--ignore", multiple=True, help="Rule codes or prefixes to disable."),
        click.option("--extend-select", multiple=True, help="Codes or prefixes to enable on top of the selection."),
        click.option("--entry", "entries", multiple=True, metavar="TARGET",
                     help="Only report code reachable from this compiled entry: file.py:QualName or pkg.mod:QualName."),
        click.option("--scope", type=click.Choice(["modules", "compiled", "all"]), default=None,
                     help="Roots: every nn.Module.forward too (modules, default), only compiled code, or everything."),
        click.option("--profile", type=click.Choice(["default", "vllm"]), default=None,
                     help="vllm: recompiles are errors, shape specialisation and CUDA-graph rules on."),
        click.option("--mode", type=click.Choice(["any", "eval", "train"]), default=None,
                     help="Keep the findings that can run in this mode: code under `if self.training:` is train only."),
        click.option("--follow-swapped", is_flag=True, default=None,
                     help="Also follow implementations picked at run time: forwards a decorator may replace "
                          "(@use_experts_implementation), flash attention (attn_implementation=\"flash_attention_2\")."),
        click.option("--follow-misuse", is_flag=True, default=None,
                     help="Also report code that runs only when a caller passes a deprecated or unexpected argument."),
        click.option("--torch-version", type=click.Choice(KNOWN_TORCH_VERSIONS), default=None,
                     help="Which measured torch the findings speak of (default: the installed torch's version)."),
        click.option("--config", "config_values", multiple=True, metavar="FILE | KEY=VALUE",
                     help="The configuration file for every file (compilelint.toml or pyproject.toml), "
                          "or a TOML `KEY = VALUE` pair overriding a setting (repeatable)."),
        click.option("--isolated", is_flag=True, help="Ignore all configuration files and judge the named files alone (the rest of their project is not read)."),
        click.option("--exclude", multiple=True, help="Paths or globs to skip."),
        click.option("--extend-exclude", multiple=True, help="Paths or globs to skip, on top of the configured ones."),
        click.option("--force-exclude", is_flag=True, help="Apply excludes to paths named on the command line too."),
        click.option("--no-respect-gitignore", is_flag=True, help="Also check files that .gitignore ignores."),
        click.option("--no-cache", is_flag=True, help="Neither read nor write the result cache."),
        click.option("--cache-dir", default=None, help="Where the cache lives (default .compilelint_cache)."),
        click.option("-j", "--jobs", type=click.IntRange(min=1), default=None, help="Worker processes (default: cores)."),
        click.option("--no-prefilter", is_flag=True, help="Analyse every file fully (for comparing results)."),
        click.option("--debug", is_flag=True, help="Print tracebacks of internal errors."),
    ]
    for option in reversed(options):
        f = option(f)
    return f


def build_settings(paths, select, ignore, extend_select, entries, scope, profile, torch_version, config_values,
                   isolated, exclude, extend_exclude, force_exclude, no_respect_gitignore, no_cache, cache_dir,
                   jobs, no_prefilter, mode=None, follow_swapped=None, follow_misuse=None, ignore_noqa=False, **_ignored) -> Settings:
    config_path, inline = None, []
    for value in config_values or ():
        if os.path.isfile(value) or "=" not in value:
            if config_path is not None:
                _fail(f"--config names two configuration files ({config_path}, {value}); give one")
            if not os.path.isfile(value):
                _fail(f"--config {value}: no such configuration file (or give a `KEY = VALUE` pair)")
            config_path = value
        else:
            inline.append(value)
    try:
        # Flags given on the command line only: each file's own configuration decides the rest.
        settings = settings_for(
            list(paths), config=config_path, isolated=isolated, inline=tuple(inline),
            select=_split(select) or None, ignore=_split(ignore), extend_select=_split(extend_select),
            entries=list(entries), scope=scope, profile=profile, torch_version=torch_version, mode=mode,
            follow_swapped=follow_swapped or None, follow_misuse=follow_misuse or None,
            exclude=_split(exclude), extend_exclude=_split(extend_exclude), jobs=jobs, cache_dir=cache_dir,
            force_exclude=True if force_exclude else None,
            respect_gitignore=False if no_respect_gitignore else None,
            cache=False if no_cache else None, prefilter=False if no_prefilter else None,
            ignore_noqa=True if ignore_noqa else None,
        )
    except ConfigError as e:
        _fail(str(e))
    return settings


@main.command()
@click.argument("paths", nargs=-1, type=click.Path(readable=False))  # unreadable: reported per file, not a usage error
@selection_options
@click.option("--output-format", type=click.Choice(OUTPUT_FORMATS), default=None,
              envvar="COMPILELINT_OUTPUT_FORMAT", help="How findings are printed (default concise).")
@click.option("-o", "--output-file", type=click.Path(dir_okay=False), default=None, help="Write the report here.")
@click.option("--statistics", is_flag=True, help="Print counts per rule instead of each finding (json too).")
@click.option("--exit-zero", is_flag=True, help="Exit 0 even when there are findings.")
@click.option("--fix", is_flag=True, help="Apply safe fixes.")
@click.option("--unsafe-fixes", is_flag=True, help="Also apply (and show) fixes that change eager behaviour.")
@click.option("--fix-only", is_flag=True, help="Apply fixes and report only how many; implies --fix.")
@click.option("--show-fixes", is_flag=True, help="With --fix: list the fixes applied, per file and rule.")
@click.option("--diff", is_flag=True, help="Print the diff fixes would make; write nothing.")
@click.option("--exit-non-zero-on-fix", is_flag=True, help="Exit 1 when fixes were applied (for pre-commit).")
@click.option("--add-noqa", is_flag=True, help="Add `# noqa: CODE` to every line with a finding.")
@click.option("--ignore-noqa", is_flag=True, help="Report findings that noqa comments suppress.")
@click.option("--stdin-filename", default=None, help="The name of the file read from stdin (`-`, or no path).")
@click.option("--show-settings", is_flag=True, help="Print the settings that judge the first file, and exit.")
@click.option("--show-files", is_flag=True, help="Print the files that would be checked, and exit.")
@click.option("-q", "--quiet", is_flag=True, help="Print findings only: no summary line.")
def check(paths, output_format, output_file, statistics, exit_zero, fix, unsafe_fixes, fix_only, show_fixes, diff,
          exit_non_zero_on_fix, add_noqa, ignore_noqa, stdin_filename, show_settings, show_files, quiet, **options):
    """Check PATHS (files or folders; `-` for stdin) for code that breaks or recompiles torch.compile."""
    from compilelint.engine import UsageError, check_paths
    from compilelint.file_errors import with_file_findings
    from compilelint.hidden import folded
    from compilelint.report import render, render_statistics

    fix = fix or fix_only
    if not paths:
        if stdin_filename:  # Ruff: a stdin file name alone means "read stdin"
            paths = ("-",)
        elif options.get("force_exclude"):
            paths = ()
        else:
            paths = (".",)
    reading_stdin = list(paths) == ["-"]
    # Configuration is found from where the stdin file would live, as for a file on disk.
    settings = build_settings([stdin_filename] if reading_stdin and stdin_filename else paths,
                              ignore_noqa=ignore_noqa, **options)
    if show_settings:
        from compilelint.show import settings_text

        click.echo(settings_text(settings, (stdin_filename if reading_stdin else None) or (paths or ["."])[0]), nl=False)
        sys.exit(0)
    if show_files:
        from compilelint.show import files_text

        click.echo(files_text(list(paths), settings), nl=False)
        sys.exit(0)
    stdin = None
    if reading_stdin:
        stdin = (stdin_filename or "<stdin>", sys.stdin.buffer.read())
        paths = (stdin[0],)
        if stdin_filename and settings.force_exclude and _excluded(stdin_filename, settings):
            # Excluded: nothing to report; a fixer on stdin hands the text back unchanged.
            if fix and not diff:
                click.get_binary_stream("stdout").write(stdin[1])
            sys.exit(0)
    if not paths:
        if not quiet:
            click.echo("No files to check.", err=True)
        sys.exit(0)
    try:
        report = check_paths(list(paths), settings, debug=options.get("debug", False), stdin=stdin)
    except UsageError as e:
        _fail(str(e))

    outcome = None
    if fix or diff or add_noqa:
        from compilelint.fix_files import run_fixes

        outcome = run_fixes(report, settings, unsafe=unsafe_fixes, write=not diff, add_noqa=add_noqa,
                            stdin=stdin, paths=list(paths), fix=fix or diff)
        if diff:
            click.echo(outcome.diff, nl=False)
        if stdin is not None and not diff:
            click.echo(outcome.stdin_text, nl=False)
        report = outcome.report
        for message in outcome.messages:
            click.echo(message, err=True)
        if add_noqa and not diff:
            n = outcome.noqa_added
            click.echo(f"Added {n} noqa directive{'s' if n != 1 else ''}.", err=True)

    for error in report.errors:
        click.echo(f"compilelint: error: {error.path}: {error.message}", err=True)
    report, unreadable = with_file_findings(folded(report))

    fmt = output_format or "concise"
    color = _color(output_file)
    if fix_only:
        text = _fixed_text(report.fixed, outcome.fixed_codes if show_fixes else None)
    elif statistics:
        text = render_statistics(report, color=color, unsafe_fixes=unsafe_fixes, fmt=fmt)
    elif add_noqa and not diff:
        text = ""
    else:
        text = render(report, fmt, color=color, unsafe_fixes=unsafe_fixes, torch_version=settings.torch_version)
        if quiet and fmt in ("concise", "full", "grouped"):
            text = _without_summary(text, report, color=color, unsafe_fixes=unsafe_fixes)
        if show_fixes and outcome is not None and fmt in ("concise", "full", "grouped"):
            text = _fixed_text(report.fixed, outcome.fixed_codes) + text
    if stdin is not None and fix and not diff:
        # stdout holds the fixed code: the findings that remain go to stderr (Ruff), where a file
        # that could not be read was already reported
        if not unreadable and report.findings and not fix_only:
            click.echo(text, nl=not text.endswith("\n"), err=True)
        text = ""
    _write_report(text, output_file, color, skip=diff and fmt == "concise" and not report.findings)

    if report.errors or (unreadable and not exit_zero):
        sys.exit(2)
    if diff:
        sys.exit(1 if outcome.diff else 0)
    if fix and exit_non_zero_on_fix and report.fixed:
        sys.exit(1)
    if fix_only or (add_noqa and not diff):
        sys.exit(0)
    if report.findings and not exit_zero:
        sys.exit(1)
    sys.exit(0)


def _fixed_text(fixed: int, by_file) -> str:
    """"Fixed 2 errors." and, with `--show-fixes`, each file's fixes per rule (Ruff's wording)."""
    from compilelint.rule import registry

    if not fixed:
        return "No errors fixed.\n" if by_file is not None else ""
    plural = "s" if fixed != 1 else ""
    if not by_file:
        return f"Fixed {fixed} error{plural}.\n"
    rules = registry()
    out = [f"Fixed {fixed} error{plural}:"]
    for path in sorted(by_file):
        out.append(f"- {path}:")
        for code, n in sorted(by_file[path].items()):
            name = rules[code].name if code in rules else code
            out.append(f"    {n} × {code} ({name})")
    return "\n".join(out) + "\n\n"


def _write_report(text: str, output_file, color: bool, skip: bool) -> None:
    if output_file:
        try:
            parent = os.path.dirname(os.path.abspath(output_file))
            os.makedirs(parent, exist_ok=True)
            with open(output_file, "w", encoding="utf-8", errors="backslashreplace") as f:
                f.write(text)
        except OSError as e:
            _fail(f"cannot write {output_file}: {e.strerror or e}")
    elif text and not skip:
        click.echo(text, nl=not text.endswith("\n"), color=color)


def _split_command(paths):
    """`compilelint verify src/ -- pytest -x`: what follows `--` is the user's command."""
    argv = sys.argv
    if "--" not in argv:
        return list(paths), []
    n = len(argv) - argv.index("--") - 1
    if n <= 0:
        return list(paths), []
    return list(paths[:-n]), list(paths[-n:])


class _Progress:
    """A one-line progress bar on stderr, only on a terminal."""

    def __init__(self, enabled: bool):
        self.enabled = enabled

    def __call__(self, done: int, total: int, label: str) -> None:
        if not self.enabled or total <= 0:
            return
        width = 24
        filled = int(width * done / total)
        bar = "#" * filled + "-" * (width - filled)
        click.echo(f"\r[{bar}] {done}/{total} {label[:50]:<50}", nl=False, err=True)
        if done >= total:
            click.echo("", err=True)


@main.command(context_settings={"ignore_unknown_options": True})
@click.argument("paths", nargs=-1, type=click.UNPROCESSED)
@selection_options
@click.option("--run", "run_cmd", default=None, metavar="CMD",
              help='Your own command, e.g. "pytest tests/ -x"; flagged functions are wrapped while it runs.')
@click.option("--example", default=None, metavar="MOD_OR_FILE:FACTORY",
              help="A factory returning (callable, args, kwargs) or an iterable of them.")
@click.option("--device", default="auto", help="auto (cuda when available), cuda, cuda:N or cpu.")
@click.option("--backend", type=click.Choice(["eager", "aot_eager", "inductor"]), default="eager",
              help="Backend for the compiled runs (Dynamo decides breaks; eager is fastest).")
@click.option("--timeout", type=float, default=300.0, show_default=True, help="Seconds per target.")
@click.option("--output-format", type=click.Choice(OUTPUT_FORMATS + ("html",)), default=None,
              envvar="COMPILELINT_OUTPUT_FORMAT", help="html: with --cost only.")
@click.option("-o", "--output-file", type=click.Path(dir_okay=False), default=None)
@click.option("--fix", "fix", is_flag=True, help="Prove each safe fix: run the code before and after it (on a copy).")
@click.option("--unsafe-fixes", is_flag=True, help="With --fix: the unsafe fixes too.")
@click.option("--proven-only", is_flag=True, help="With --fix: write the proven fixes to your files.")
@click.option("--try-settings", is_flag=True, help="Measure the Dynamo settings the findings point to (--example).")
@click.option("--cost", "cost_mode", is_flag=False, flag_value="default", default=None,
              type=click.Choice(["default", "reduce-overhead", "max-autotune", "max-autotune-no-cudagraphs"]),
              help="Time eager, compiled, fixed and each proven fix alone (--example; inductor unless --backend); "
                   "--cost=MODE compiles in that torch.compile mode.")
def verify(paths, run_cmd, example, device, backend, timeout, output_format, output_file, fix, unsafe_fixes,
           proven_only, try_settings, cost_mode=None, **options):
    """Run the flagged code under torch.compile and mark each finding confirmed or not.

    \b
    compilelint verify src/ --run "pytest tests/ -x"
    compilelint verify src/ -- python train.py --steps 2
    compilelint verify src/ --example mypkg.examples:make_inputs
    """
    import shlex

    from compilelint.engine import UsageError
    from compilelint.report import render
    from compilelint.verify import VerifyUsageError, run_verify, summarize

    paths, command = _split_command(paths)
    if run_cmd:
        command = shlex.split(run_cmd) + command
    if not paths:
        paths = ["."]
    settings = build_settings(paths, **options)
    from compilelint.verify import torch_missing

    if torch_missing():  # one message, not an import error on every finding
        _fail(torch_missing())
    if try_settings:
        from compilelint.verify.fix_command import verify_settings

        if command:
            _fail("--try-settings needs --example")
        sys.exit(verify_settings(paths, settings, example=example, device=device, backend=backend,
                                 timeout=timeout, output_file=output_file, progress=_Progress(sys.stderr.isatty())))
    if cost_mode:
        from compilelint.verify.cost_command import verify_cost

        if command:
            _fail("--cost needs --example")
        explicit = click.get_current_context().get_parameter_source("backend") != click.core.ParameterSource.DEFAULT
        sys.exit(verify_cost(paths, settings, example=example, device=device,
                             backend=backend if explicit else "inductor",
                             compile_mode=None if cost_mode == "default" else cost_mode, timeout=timeout,
                             unsafe=unsafe_fixes, output_format=output_format, output_file=output_file,
                             progress=_Progress(sys.stderr.isatty())))
    if output_format == "html":
        _fail("--output-format html needs --cost")
    if fix or unsafe_fixes or proven_only:
        from compilelint.verify.fix_command import verify_fixes

        sys.exit(verify_fixes(paths, settings, example=example, run_cmd=command or None, device=device,
                              backend=backend, timeout=timeout, unsafe=unsafe_fixes, write=proven_only,
                              output_file=output_file, progress=_Progress(sys.stderr.isatty()),
                              output_format=output_format))
    try:
        report = run_verify(paths, settings=settings, example=example, run_cmd=command or None, device=device,
                            backend=backend, timeout=timeout, progress=_Progress(sys.stderr.isatty()))
    except (VerifyUsageError, UsageError) as e:
        _fail(str(e))
    from compilelint.file_errors import with_file_findings
    from compilelint.hidden import folded

    for error in report.errors:
        click.echo(f"compilelint: error: {error.path}: {error.message}", err=True)
    report, unreadable = with_file_findings(folded(report))
    text = render(report, output_format or "concise", color=_color(output_file), torch_version=settings.torch_version)
    if output_file:
        with open(output_file, "w", encoding="utf-8", errors="backslashreplace") as f:
            f.write(text)
    else:
        click.echo(text, nl=not text.endswith("\n"))
    counts = summarize(report)
    meta = getattr(report, "verify", None) or {}
    line = (f"verify: {counts['confirmed']} confirmed, {counts['not-reproduced']} not reproduced, "
            f"{counts['not-reached']} not reached, {counts['error']} error, {counts['missed']} missed"
            f" (torch {meta.get('torch') or '?'}, {meta.get('device') or device}, backend {backend})")
    click.echo(line, err=True)
    problems = [meta["error"]] if meta.get("error") else []
    problems += meta.get("failures") or []
    command = meta.get("command")
    if command and command != "exited with status 0" and f"the command {command}" not in problems:
        problems.append(f"the command {command}")
    for problem in dict.fromkeys(problems):
        click.echo(f"compilelint: verify: {problem}", err=True)
    if meta.get("output_tail"):  # the command's own words on why it failed
        click.echo(f"compilelint: verify: the command's last output:\n{meta['output_tail']}", err=True)
    if problems or report.errors or unreadable:
        sys.exit(2)  # the verification is incomplete: what failed is said above
    sys.exit(1 if counts["confirmed"] or counts["missed"] else 0)


@main.command("rules")
@click.option("--output-format", type=click.Choice(["text", "json", "markdown"]), default="text")
def rules_command(output_format):
    """The rule table: code, name, Dynamo gb_type, fix availability, on by default."""
    import json

    rules = registry()
    if output_format == "markdown":
        click.echo(rules_markdown(rules))
        return
    if output_format == "json":
        click.echo(json.dumps([{
            "code": r.code, "name": r.name, "gb_type": list(r.gb_types), "kind": r.kind, "fix": r.fix,
            "default": r.default_enabled, "url": r.url(),
        } for r in rules.values()], indent=2))
        return
    rows = [("CODE", "NAME", "FIX", "DEFAULT", "DYNAMO GB_TYPE")]
    for r in rules.values():
        fix = FIX_WORDS[r.fix]
        gb = "; ".join(r.gb_types) or ("(recompile)" if r.kind == "recompile" else "")
        rows.append((r.code, r.name, fix, "on" if r.default_enabled else "off", gb))
    widths = [max(len(row[i]) for row in rows) for i in range(4)]
    for row in rows:
        click.echo("  ".join(cell.ljust(widths[i]) for i, cell in enumerate(row[:4])) + "  " + row[4])


def rules_markdown(rules) -> str:
    """The README's rule table (a test keeps README.md in step with the registry)."""
    lines = ["| Code | Name | What it finds | Dynamo gb_type | Fix | Default |", "|---|---|---|---|---|---|"]
    for r in rules.values():
        what = r.doc().split("## What it does", 1)[-1].split("##", 1)[0].strip().replace("\n", " ")
        gb = "; ".join(f"`{g}`" for g in r.gb_types) or ("recompile" if r.kind == "recompile" else "—")
        fix = FIX_WORDS[r.fix]
        lines.append(f"| {r.code} | `{r.name}` | {what} | {gb} | {fix} | {'on' if r.default_enabled else 'off'} |")
    return "\n".join(lines)


@main.command("rule")
@click.argument("code", required=False)
@click.option("--all", "all_rules", is_flag=True, help="Print every rule's documentation.")
def rule_command(code, all_rules):
    """Print a rule's documentation and its examples (`--all`: every rule's)."""
    rules = registry()
    if all_rules:
        for i, r in enumerate(rules.values()):
            if i:
                click.echo("\n" + "-" * 80 + "\n")
            _print_rule(r)
        return
    if not code:
        _fail("give a rule code or name (`compilelint rule CL101`), or --all")
    selected = rules.get(code.upper()) or next((r for r in rules.values() if r.name == code.lower()), None)
    if selected is None:
        _fail(f"unknown rule '{code}' (see `compilelint rules`)")
    _print_rule(selected)


def _print_rule(r) -> None:
    click.echo(rule_page(r))


@main.command("server")
def server_command():
    """Run the language server over stdio, for editors (needs the `server` extra: pygls)."""
    try:
        from compilelint.server.lsp import serve
    except ImportError as e:
        if (e.name or "").split(".")[0] not in ("pygls", "lsprotocol", "cattrs"):
            raise
        _fail("the language server needs pygls: python -m pip install 'pygls>=2.0,<3'")
    serve()


if __name__ == "__main__":  # pragma: no cover
    main()
