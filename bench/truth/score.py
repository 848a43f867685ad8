"""Score compilelint's static findings against the truth corpus (what Dynamo really did).

    python bench/truth/score.py                      # every committed truth file; writes SCORE.md
    python bench/truth/score.py --lib transformers --only bert,longformer
    python bench/truth/score.py --site-packages DIR  # where the libraries' sources are

For each model that ran (status `ok`), the findings of `compilelint check <lib> --entry <defining
file>:<Class>` (run from the site-packages folder) are compared with the model's events. The library
is analysed once and the project pass runs per model, in this process, through the same engine
functions and JSON rendering that `check` uses (`--subprocess` runs the CLI for every model instead):
- a **site** is a distinct library line where Dynamo broke (graph break or skipped frame) or
  recompiled (input-driven shape recompiles excluded: automatic dynamic shapes absorb them);
  it is *found* when a finding of its kind in the same file lies within ±2 lines (a skipped
  frame reported at its `def` line: anywhere in that function);
- a finding is *true* when a site of its kind (break findings: break sites; recompile findings:
  recompile sites) lies within ±2 lines in the mode it claims (eval findings vs eval runs, train
  vs train; a finding with no condition claims both, and is true if either mode agrees); a
  recompile that names only its frame (its `def` line: the compilation metrics give no user line,
  so a guard failing in code inlined into a decorator's wrapper is placed at the wrapper) is also
  found by a recompile finding whose statement assigns the object attribute its failing guard
  reads (`if self.first_call: ... self.kernel = ...` for `args[0]._modules['window'].kernel`):
  only a store to that attribute makes that guard fail;
  `eval_precision` / `train_precision` judge every finding that claims the mode on that mode's run;
- where the committed truth has an executed-lines file (`<truth>.lines.json.gz`, run.py --lines:
  the library lines, and where each executed instruction starts, of the model's eager run in each
  mode), a finding is judged in a mode only if its run executed an instruction of its flagged
  expression (`torch.isfinite(x).all()` after `x.dtype == torch.float16 and`), or a line of it
  when columns were not recorded; otherwise it is *unexercised* there (a `layerdrop > 0` branch
  with layerdrop 0: a claim the run never tested), unless Dynamo reported a site of its kind on the
  finding's own rows (Dynamo ran them: a `functools.cache`d body runs once in eager, before the
  lines are recorded, and under Dynamo on every call). A finding the engine says is hidden behind an
  earlier break in a loop of its function (Dynamo skips the frame there) rides on that break's
  finding, as in every output of `check` (`compilelint.hidden`): it is not a finding of its own
  (`hidden_findings` counts them); one whose hiding break is not reported stands alone and is
  unexercised. So is, in a run, one after a break of that run in its function that Dynamo cannot
  resume after (a `skips_frame` rule's gb_type: the rest of the frame ran eager, Dynamo never saw
  the line), and one in a frame Dynamo gave up on (a break in a loop: the record's `frame`, from
  the compilation metrics; a resumed part of a function covers its lines past the resume line;
  a record that names no frame: the lines after a skip reported inside a loop of its function)
  unless a site lies near it. A mode whose eager run raised is not judged at all, and its events
  are not sites; a mode whose compiled run raised (Dynamo stopped early: a RecursionError while tracing) shows the
  sites it reported, but no executed line as clean (Dynamo never traced past where it stopped).
  `finding_precision` counts unexercised findings as false (the issue's literal definition); `judged_precision`,
  `eval_judged_precision` and `train_judged_precision` leave them out, and
  `unexercised_findings` counts them;
- where a truth file has variants files beside it (`<truth>.variants.json` and
  `<truth>.variants.lines.json.gz`, run.py --variants: the same model run with a config or inputs
  that open other paths), a model's findings are judged on ALL its runs: in a mode, a finding is true
  if some run that executed it there (per that run's own lines) has a site of its kind within ±2
  lines, false if some run executed it and none has, unexercised only if no run executed it (a
  variant without a lines record judges nothing). `variant_runs` and `judged_by_variants` (findings
  only a variant executed) are added. Sites, break/recompile-site recall, the clean-model alarm rates
  and model-level accuracy stay defined on the default runs only; without variants files nothing
  changes;
- a model is *clean* when its eval run has no break; the clean-model alarm rate counts clean
  models with at least one break finding;
- per class (the issue's "clean classes alarmed"): a model *class* is the `--entry` it is checked
  as (defining file and class; the findings depend on it alone, not on the model's config). A class
  is *clean* when no eval run of any of its models breaks, default or variant (every variant record
  that ran, with or without a lines record: a break a variant shows is a config of the class that
  breaks); it is *alarmed* when its findings hold a break finding that claims eval (the model-level
  alarm). `clean_classes`, `clean_classes_alarmed` and `clean_class_alarm_rate` count them, next to
  the model-level figures, which they leave unchanged: a claim about an option the default models
  leave off (`looped=True`) alarms every clean model of the class, but not a clean class once a
  variant shows that option breaking;
- model-level accuracy: "will this model compile as one graph in eval?" predicted by "has a
  break finding" against the eval truth;
- per class (`class_*`, the issue's "scored by class with `--entry`"): `check --entry` makes one
  claim per class whatever the config, so each class's findings also count once (by
  file:line:code), judged on the union of every run of every model and variant of the class (each
  by its own lines, the frame-skip and hidden rules kept); its break sites count once each, on the
  default runs (`class_default_break_site_recall`) and on all runs (`class_break_site_recall`).
  The per-model figures above are unchanged by it.
"""
from __future__ import annotations

import argparse
import ast
import functools
import glob
import gzip
import json
import os
import re
import subprocess
import sys
from collections import Counter
from concurrent.futures import ThreadPoolExecutor

from compilelint.rule import KNOWN_TORCH_VERSIONS
from compilelint.verify.match import FunctionIndex

HERE = os.path.dirname(os.path.abspath(__file__))
NEAR = 2
BREAKS = ("graph-break", "frame-skipped")


# ------------------------------------------------------------------------------- pure scoring
def sites(model: dict, mode: str, kinds) -> set:
    """{(file, line)} of the model's events of `kinds` in `mode` that point into the library."""
    out = set()
    for e in (model.get(mode) or {}).get("events", []):
        if e["event"] in kinds and e.get("file") and not e.get("input_driven"):
            out.add((e["file"], e["line"]))
    return out


ROOT = {"dir": ""}  # the site-packages folder the sources are read from


FUNCTIONS = FunctionIndex()  # verify's parse of each file's function spans, once per file


def span(site) -> tuple:
    """The lines a site stands for: ±2 around it, or the whole function when Dynamo named only the
    function (a skipped frame is reported at its `def` line)."""
    file, line = site
    end = next((f.end for f in FUNCTIONS.spans(os.path.join(ROOT["dir"], file)) if f.start == line), None)
    return (line, end) if end else (line - NEAR, line + NEAR)


def near(site, places) -> bool:
    lo, hi = span(site)
    return any(f == site[0] and lo <= ln <= hi for f, ln in places)


def executed(lines, mode: str, finding: dict) -> bool:
    """Did the eager run of `mode` execute a line of the finding's own span (its flagged
    expression)? True when not recorded. Exact lines, not ±2: `if rare:` on the line above a
    flagged `logger.warning(...)` runs on every call, the warning does not."""
    if lines is None:
        return True
    first = finding["location"]["row"]
    last = (finding.get("end_location") or {}).get("row", first)
    columns = lines[mode].get("columns")
    if columns:  # where instructions started: did the flagged expression itself run?
        rows = columns.get(finding["filename"], {})
        start = (first, finding["location"]["column"] - 1)
        stop = (last, (finding.get("end_location") or {}).get("column", 1 << 30) - 1)
        return any(start <= (ln, col) < stop for ln in range(first, last + 1) for col in rows.get(str(ln), ()))
    ran = set(lines[mode]["lines"].get(finding["filename"], ()))
    return any(ln in ran for ln in range(first, last + 1))


def on_own_rows(finding: dict, run_sites) -> bool:
    """Did Dynamo report a site of the finding's kind on the finding's own rows? Then Dynamo ran them,
    whatever the eager record says: a `functools.cache`d helper runs its body once in eager (before
    the lines are recorded), while Dynamo ignores the cache and traces the body on every call."""
    first = finding["location"]["row"]
    last = (finding.get("end_location") or {}).get("row", first)
    return any(file == finding["filename"] and first <= line <= last for file, line in run_sites)


def valid_modes(lines) -> tuple:
    """The modes whose run can judge: those whose eager run did not raise (when recorded)."""
    if lines is None:
        return ("eval", "train")
    return tuple(m for m in ("eval", "train") if not lines[m]["error"])


def finding_modes(finding: dict) -> tuple:
    """The modes a finding claims: its `mode` (eval/train) when the engine knows one, else both."""
    mode = finding.get("mode") or (finding.get("region") or {}).get("mode") or "any"
    return ("eval", "train") if mode == "any" else (mode,)


def is_recompile_finding(finding: dict) -> bool:
    """A finding of a recompile rule (CL4xx): `check`'s JSON has no kind and an empty gb_type for
    them, so the rule registry says."""
    from compilelint.rule import registry

    rule = registry().get(finding.get("code", ""))
    return (rule is not None and rule.kind == "recompile") or finding.get("gb_type") == "recompile" or \
        finding.get("kind") == "recompile"


@functools.lru_cache(maxsize=None)
def no_resume_gb_types() -> frozenset:
    """The gb_types of breaks Dynamo cannot resume after (the rules' `skips_frame`): the rest of
    their frame runs eager."""
    from compilelint.rule import registry

    return frozenset(t for rule in registry().values() if rule.skips_frame for t in rule.gb_types)


def shadowed(model: dict, mode: str) -> list:
    """[(file, first, last)]: the lines Dynamo did not trace in `mode` because a break it cannot
    resume after came first in their function (sequencer2d's second LSTM, after its first), or
    because they lie in a frame Dynamo gave up on (`skipped_frame`; a record that does not name
    that frame: the lines after a skip reported inside a loop of its function, which Dynamo
    cannot resume in, so the rest of that function's frame ran eager)."""
    kinds, out = no_resume_gb_types(), []
    for e in (model.get(mode) or {}).get("events", []):
        if e["event"] in BREAKS and e.get("file") and (e.get("gb_type") in kinds or (
                e["event"] == "frame-skipped" and not e.get("frame") and in_loop(e["file"], e["line"]))):
            fn = FUNCTIONS.innermost(os.path.join(ROOT["dir"], e["file"]), e["line"])
            if fn is not None and fn.start != e["line"]:  # past the ±2 lines that are the break's own
                out.append((e["file"], e["line"] + NEAR + 1, fn.end))
        if e["event"] == "frame-skipped" and e.get("frame"):
            out.extend(skipped_frame(*e["frame"]))
    return out


def in_loop(file: str, line: int) -> bool:
    """Is `line` inside a `for`/`while` loop of its innermost function?"""
    tree = _tree(os.path.join(ROOT["dir"], file))
    if tree is None:
        return False
    fns = [n for n in ast.walk(tree) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda))
           and n.lineno <= line <= (n.end_lineno or n.lineno)]
    scope = max(fns, key=lambda n: n.lineno) if fns else tree
    stack = list(ast.iter_child_nodes(scope))
    while stack:
        n = stack.pop()
        if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)):
            continue  # a nested function's loops are its own frame's
        if isinstance(n, (ast.For, ast.AsyncFor, ast.While)) and n.lineno <= line <= (n.end_lineno or n.lineno):
            return True
        stack.extend(ast.iter_child_nodes(n))
    return False


RESUMED = re.compile(r"^torch_dynamo_resume_in_.+_at_(\d+)$")


def skipped_frame(file: str, first: int, code_name: str) -> list:
    """[(file, first, last)] of a frame Dynamo skipped (a graph break in a loop, child.py's `frame`
    from the compilation metrics: its code's file, first line and name): the frame ran eager, so
    Dynamo traced none of it to the end and its lines judge nothing. A resumed part of a function
    (`torch_dynamo_resume_in_<name>_at_<line>`) covers the function's lines after the resume line:
    the lines before ran in the frame that broke there."""
    if not file:
        return []
    path = os.path.join(ROOT["dir"], file)
    resumed = RESUMED.match(code_name)
    if resumed:
        line = int(resumed.group(1))
        fn = FUNCTIONS.innermost(path, line)
        return [(file, line + 1, fn.end)] if fn is not None else []
    fn = next((f for f in FUNCTIONS.spans(path) if f.start == first), None)
    return [(file, fn.start, fn.end)] if fn is not None else []


# the object path a guard reads: `tensor 'args[0]._modules['window'].kernel' rank mismatch` quotes
# it; `self._modules['conv'].dilation == (2,)`, `___check_obj_id(L['self'].first_call, ...)` start with it
_TENSOR_GUARD = re.compile(r"^tensor '(?P<path>.+)' \w+ mismatch")
_GUARD_PATH = re.compile(r"[A-Za-z_]\w*(?:\[[^\]]*\]|\.[A-Za-z_]\w*)+")
_LEAF = re.compile(r"(?:\.(?P<attr>[A-Za-z_]\w*)|\._(?:buffers|parameters|modules)\['(?P<key>\w+)'\])$")


def guarded_attribute(reason: str):
    """The attribute whose guard failed (`kernel` of `args[0]._modules['window'].kernel`), or None
    when the failing guard reads no object attribute (a local, an input tensor)."""
    text = re.sub(r"^\s*(?:guard failed:\s*)?(?:\d+/\d+:\s*)?", "", reason or "")
    tensor = _TENSOR_GUARD.match(text)
    path = tensor.group("path") if tensor else next(iter(_GUARD_PATH.findall(text)), "")
    leaf = _LEAF.search(path)
    return (leaf.group("attr") or leaf.group("key")) if leaf else None


def frame_guards(model: dict, mode: str) -> dict:
    """{site: {attribute}} of the recompiles that name only their frame (the site is a `def` line:
    the compilation metrics give no user line, so a guard failing in code inlined into a decorator's
    wrapper is placed at the wrapper), each with the object attribute its failing guard reads."""
    out = {}
    for e in (model.get(mode) or {}).get("events", []):
        if e["event"] != "recompile" or not e.get("file") or e.get("input_driven"):
            continue
        attr = guarded_attribute(e.get("reason", ""))
        path = os.path.join(ROOT["dir"], e["file"])
        if attr and any(f.start == e["line"] for f in FUNCTIONS.spans(path)):
            out.setdefault((e["file"], e["line"]), set()).add(attr)
    return out


@functools.lru_cache(maxsize=None)
def _tree(path: str):
    try:
        with open(path, encoding="utf-8") as fh:
            return ast.parse(fh.read())
    except (OSError, SyntaxError, ValueError):
        return None


def stored_attributes(file: str, row: int) -> frozenset:
    """The attributes of the receiver (the enclosing function's first parameter) that the statement
    starting at `row` assigns, its nested body included (`if self.first_call: ... self.kernel = ...`)."""
    tree = _tree(os.path.join(ROOT["dir"], file))
    if tree is None:
        return frozenset()
    funcs = [n for n in ast.walk(tree) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))
             and n.lineno <= row <= (n.end_lineno or n.lineno) and n.args.args]
    if not funcs:
        return frozenset()
    fn = max(funcs, key=lambda n: n.lineno)  # the innermost
    receiver = fn.args.args[0].arg
    stmt = next((n for n in ast.walk(fn) if isinstance(n, ast.stmt) and n is not fn and n.lineno == row), None)
    if stmt is None:
        return frozenset()
    out = set()
    for n in ast.walk(stmt):
        targets = n.targets if isinstance(n, ast.Assign) else [n.target] if isinstance(n, (ast.AugAssign, ast.AnnAssign)) else []
        for t in targets:
            for a in ast.walk(t):
                if isinstance(a, ast.Attribute) and isinstance(a.value, ast.Name) and a.value.id == receiver:
                    out.add(a.attr)
    return frozenset(out)


def causes_frame_guard(finding: dict, guards) -> bool:
    """Does a recompile finding's statement assign an attribute whose guard failed in a recompile that
    names only its frame (`guards`: {site: {attribute}})? A guard on an object's attribute fails
    because code stored to it: that store is the recompile's cause, wherever Dynamo placed the frame."""
    stored = stored_attributes(finding["filename"], finding["location"]["row"])
    return any(stored & attrs for attrs in guards.values())


def caused(site, guards, recompile_findings) -> bool:
    """Is a frame-only recompile site (`guards` per mode: {site: {attribute}}) found by a recompile
    finding whose statement stores its guarded attribute?"""
    return any(causes_frame_guard(f, {site: g[site]}) for g in guards.values() if site in g
               for f in recompile_findings)


def _run_sites(model: dict, lines) -> tuple:
    """(valid modes, break sites per mode, recompile sites per mode, shadowed lines per mode, modes
    whose compiled run raised, frame-only recompiles' guarded attributes per mode) of one run."""
    modes = valid_modes(lines)
    fsites = {m: sites(model, m, BREAKS) if m in modes else set() for m in ("eval", "train")}
    rsites = {m: sites(model, m, ("recompile",)) if m in modes else set() for m in ("eval", "train")}
    shadows = {m: shadowed(model, m) if m in modes else [] for m in ("eval", "train")}
    failed = {m for m in ("eval", "train") if (model.get(m) or {}).get("error")}
    guards = {m: frame_guards(model, m) if m in modes else {} for m in ("eval", "train")}
    return modes, fsites, rsites, shadows, failed, guards


def place(finding: dict) -> tuple:
    return finding["filename"], finding["location"]["row"]


def judge(findings: list, runs: list) -> tuple:
    """(verdicts [(finding, True/False/None)], per mode [verdicts], judged_by [names of the runs that
    executed each finding]) of `findings` on `runs` ([(name, lines, *_run_sites(...))]; the name ""
    is reported as "default"): in a mode, true if a run that executed the finding there has a site
    of its kind near it, false if runs executed it and none has, unexercised if none executed it."""
    verdicts, per_mode, judged_by = [], {"eval": [], "train": []}, []
    for f in findings:
        recompile = is_recompile_finding(f)
        hidden = bool((f.get("region") or {}).get("hidden_by"))  # its frame is skipped earlier: untestable
        by_mode, by = {}, set()
        for m in finding_modes(f):
            seen = []  # the verdict of each run that executed the finding in this mode
            for name, run_lines, run_modes, run_f, run_r, run_shadows, run_failed, run_guards in runs:
                if m not in run_modes:
                    continue
                by_mode.setdefault(m, None)
                traced = not any(file == f["filename"] and lo <= f["location"]["row"] <= hi
                                 for file, lo, hi in run_shadows[m])
                run_sites = (run_r if recompile else run_f)[m]
                found = any(near(s, [place(f)]) for s in run_sites) or \
                    (recompile and causes_frame_guard(f, run_guards[m]))
                # a site near it says Dynamo traced it, whatever else says its frame was left
                if (executed(run_lines, m, f) or on_own_rows(f, run_sites)) and not hidden and (traced or found):
                    if not found and m in run_failed:
                        continue  # a run whose compile raised (Dynamo stopped early) shows no line clean
                    seen.append(found)
                    by.add(name or "default")
            if seen:
                by_mode[m] = any(seen)
        values = list(by_mode.values())
        verdicts.append((f, True if True in values else False if False in values else None))
        judged_by.append(sorted(by))
        for m, ok in by_mode.items():
            per_mode[m].append(ok)
    return verdicts, per_mode, judged_by


def score_model(model: dict, findings: list, lines=None, variants=()) -> dict:
    """Everything the totals need for one model. `lines`: its executed-lines record, if any.
    A finding's verdict is True (a site of its kind near it, in a mode it claims), False (its line
    ran in a claimed mode and did not break there) or None (unexercised: no claimed mode ran it).
    `variants`: `(record, lines)` of the model's variant runs (run.py --variants); a finding is then
    judged in a mode on every run (default and variants) that executed it there: true if one of them
    has a site of its kind near it, false if none has, unexercised only if no run executed it.
    Sites, recall and the clean-model figures stay those of the default run."""
    findings = [f for f in findings if (f.get("region") or {}).get("root")]  # usage rules claim no break
    modes, fsites, rsites, shadows, failed, guards = _run_sites(model, lines)
    runs = [("", lines, modes, fsites, rsites, shadows, failed, guards)]
    for record, vlines in variants:
        if lines is not None and vlines is None:
            continue  # what the variant executed is not recorded: it can judge nothing
        runs.append((record.get("variant", "?"), vlines, *_run_sites(record, vlines)))
    break_places = [place(f) for f in findings if not is_recompile_finding(f)]
    recompile_places = [place(f) for f in findings if is_recompile_finding(f)]
    verdicts, per_mode, judged_by = judge(findings, runs)
    break_sites = fsites["eval"] | fsites["train"]
    recompile_sites = rsites["eval"] | rsites["train"]
    eval_breaks = any(e["event"] in BREAKS for e in model["eval"]["events"])
    variant_eval_breaks = any(e["event"] in BREAKS for record, _ in variants for e in record["eval"]["events"])
    eval_findings = [f for f in findings if "eval" in finding_modes(f) and not is_recompile_finding(f)]
    judged_eval = [f for f in eval_findings if "eval" in modes and executed(lines, "eval", f)]
    return {
        "name": model["name"],
        "break_sites": sorted(break_sites),
        "break_found": sorted(s for s in break_sites if near(s, break_places)),
        "recompile_sites": sorted(recompile_sites),
        "recompile_found": sorted(s for s in recompile_sites if near(s, recompile_places) or
                                  caused(s, guards, [f for f in findings if is_recompile_finding(f)])),
        "findings": verdicts,
        "hidden_findings": sum(len(f.get("hidden") or ()) for f in findings),
        "per_mode": per_mode,  # mode -> [verdict of each finding that claims it, judged on that mode's run]
        "clean_eval": not eval_breaks,
        "entry": entry_of(model),  # the class the findings are of
        "clean_class_eval": not (eval_breaks or variant_eval_breaks),  # nor does any variant break in eval
        "alarm_eval": bool(eval_findings),
        "alarm_eval_judged": bool(judged_eval),
        **({"variant_runs": [r[0] for r in runs[1:]], "judged_by": judged_by,
            "judged_by_variants": sum(1 for (_, ok), by in zip(verdicts, judged_by) if ok is not None and "default" not in by)}
           if variants else {}),
    }


def entry_of(model: dict) -> str:
    """The `--entry` a model is checked as: its defining file and class."""
    return f"{model.get('file', '')}:{model.get('class', model['name'])}"


def score_class(entry: str, members: list) -> dict:
    """One `--entry` class, as `check --entry file:Class` claims it whatever the configuration.
    `members`: `(model, findings, lines, variants)` of every model of the class (the arguments of
    `score_model`). Its findings count once each (by file:line:code), judged by `judge` on the
    union of every run of every model and variant of the class (each run by its own lines; a
    variant without a lines record judges nothing where its model has one); two findings with one
    key (two flagged expressions on a line) give the key the better verdict, True, else False,
    else None. Its sites are those of all these runs, variants included (any variant that ran);
    `default_break_sites` those of the models' default runs only (as per model, each site once)."""
    by_key, runs, fsites, rsites, default_fsites, guards = {}, [], set(), set(), set(), []
    for model, findings, lines, variants in members:
        for f in findings:
            if (f.get("region") or {}).get("root"):  # usage rules claim no break
                by_key.setdefault((f["filename"], f["location"]["row"], f["code"]), []).append(f)
        for name, record, run_lines in [(model["name"], model, lines)] + [
                (f"{model['name']}:{record.get('variant', '?')}", record, vlines) for record, vlines in variants]:
            run = _run_sites(record, run_lines)
            fsites |= run[1]["eval"] | run[1]["train"]
            if record is model:
                default_fsites |= run[1]["eval"] | run[1]["train"]
            rsites |= run[2]["eval"] | run[2]["train"]
            guards.append(run[5])
            if record is model or lines is None or run_lines is not None:
                runs.append((name, run_lines, *run))
    findings = [f for same in by_key.values() for f in same]
    verdicts, _, judged_by = judge(findings, runs)
    rank = {True: 2, False: 1, None: 0}
    merged = {}  # key -> (verdict, runs that executed it)
    for (f, ok), by in zip(verdicts, judged_by):
        key = (f["filename"], f["location"]["row"], f["code"])
        was, was_by = merged.get(key, (None, []))
        merged[key] = (ok if rank[ok] > rank[was] else was, sorted(set(was_by) | set(by)))
    first = {key: same[0] for key, same in by_key.items()}
    break_places = [place(f) for f in first.values() if not is_recompile_finding(f)]
    recompile_places = [place(f) for f in first.values() if is_recompile_finding(f)]
    return {
        "entry": entry, "models": [m["name"] for m, *_ in members], "runs": [r[0] for r in runs],
        "findings": [[*key, ok, "/".join(finding_modes(first[key])), by] for key, (ok, by) in merged.items()],
        "break_sites": sorted(fsites), "break_found": sorted(s for s in fsites if near(s, break_places)),
        "default_break_sites": sorted(default_fsites),  # those of the models' default runs only
        "default_break_found": sorted(s for s in default_fsites if near(s, break_places)),
        "recompile_sites": sorted(rsites),
        "recompile_found": sorted(s for s in rsites if near(s, recompile_places) or any(
            caused(s, g, [f for f in first.values() if is_recompile_finding(f)]) for g in guards)),
    }


def score_classes(members: list) -> list:
    """`score_class` of every class among `members` ((model, findings, lines, variants)), in order."""
    classes = {}
    for member in members:
        classes.setdefault(entry_of(member[0]), []).append(member)
    return [score_class(entry, group) for entry, group in classes.items()]


def class_totals(classes: list) -> dict:
    """The per-class figures (keys `class_*`), beside the per-model ones of `totals`."""
    pct = lambda a, b: round(100.0 * a / b, 1) if b else None  # noqa: E731
    verdicts = [f[3] for c in classes for f in c["findings"]]
    bs, bf = (sum(len(c[k]) for c in classes) for k in ("break_sites", "break_found"))
    ds, df = (sum(len(c[k]) for c in classes) for k in ("default_break_sites", "default_break_found"))
    rs, rf = (sum(len(c[k]) for c in classes) for k in ("recompile_sites", "recompile_found"))
    judged, tf = sum(v is not None for v in verdicts), verdicts.count(True)
    return {
        "classes": len(classes), "class_findings": len(verdicts), "class_true_findings": tf,
        "class_finding_precision": pct(tf, len(verdicts)), "class_judged_findings": judged,
        "class_unexercised_findings": len(verdicts) - judged, "class_judged_precision": pct(tf, judged),
        "class_break_sites": bs, "class_break_sites_found": bf, "class_break_site_recall": pct(bf, bs),
        "class_default_break_sites": ds, "class_default_break_sites_found": df,
        "class_default_break_site_recall": pct(df, ds),
        "class_recompile_sites": rs, "class_recompile_sites_found": rf, "class_recompile_site_recall": pct(rf, rs),
    }


def totals(scored: list) -> dict:
    bs = sum(len(s["break_sites"]) for s in scored)
    bf = sum(len(s["break_found"]) for s in scored)
    rs = sum(len(s["recompile_sites"]) for s in scored)
    rf = sum(len(s["recompile_found"]) for s in scored)
    nf = sum(len(s["findings"]) for s in scored)
    tf = sum(ok is True for s in scored for _, ok in s["findings"])
    judged = sum(ok is not None for s in scored for _, ok in s["findings"])
    per_mode = {m: [ok for s in scored for ok in s["per_mode"][m]] for m in ("eval", "train")}
    clean = [s for s in scored if s["clean_eval"]]
    alarmed = [s for s in clean if s["alarm_eval"]]
    alarmed_judged = [s for s in clean if s.get("alarm_eval_judged", s["alarm_eval"])]
    right = sum(1 for s in scored if s["alarm_eval"] == (not s["clean_eval"]))
    classes = {}  # entry -> (clean: no run of any of its models breaks in eval, alarmed)
    for s in scored:
        was_clean, was_alarmed = classes.get(s["entry"], (True, False))
        classes[s["entry"]] = (was_clean and s["clean_class_eval"], was_alarmed or s["alarm_eval"])
    clean_classes = [alarmed_class for clean_class, alarmed_class in classes.values() if clean_class]
    pct = lambda a, b: round(100.0 * a / b, 1) if b else None  # noqa: E731
    return {
        "models": len(scored), "breaking_models": len(scored) - len(clean),
        "break_sites": bs, "break_sites_found": bf, "break_site_recall": pct(bf, bs),
        "recompile_sites": rs, "recompile_sites_found": rf, "recompile_site_recall": pct(rf, rs),
        "findings": nf, "true_findings": tf, "finding_precision": pct(tf, nf),
        "eval_precision": pct(per_mode["eval"].count(True), len(per_mode["eval"])),
        "train_precision": pct(per_mode["train"].count(True), len(per_mode["train"])),
        "judged_findings": judged, "unexercised_findings": nf - judged, "judged_precision": pct(tf, judged),
        "hidden_findings": sum(s.get("hidden_findings", 0) for s in scored),
        "eval_judged_precision": pct(per_mode["eval"].count(True), len(per_mode["eval"]) - per_mode["eval"].count(None)),
        "train_judged_precision": pct(per_mode["train"].count(True),
                                      len(per_mode["train"]) - per_mode["train"].count(None)),
        "clean_models": len(clean), "clean_models_alarmed": len(alarmed),
        "clean_model_alarm_rate": pct(len(alarmed), len(clean)),
        "clean_model_judged_alarm_rate": pct(len(alarmed_judged), len(clean)),
        "model_accuracy": pct(right, len(scored)),
        "clean_classes": len(clean_classes), "clean_classes_alarmed": sum(clean_classes),
        "clean_class_alarm_rate": pct(sum(clean_classes), len(clean_classes)),
        **({"variant_runs": sum(len(s.get("variant_runs", ())) for s in scored),
            "judged_by_variants": sum(s.get("judged_by_variants", 0) for s in scored)}
           if any("variant_runs" in s for s in scored) else {}),
    }


# ----------------------------------------------------------------------------------- running
def site_packages_default():
    import sysconfig

    return sysconfig.get_paths()["purelib"]


def compilelint_cmd():
    exe = os.path.join(os.path.dirname(sys.executable), "compilelint")
    return [exe] if os.path.exists(exe) else [sys.executable, "-m", "compilelint"]


def check(lib: str, model: dict, site_packages: str, extra, torch_version: str = "") -> list:
    entry = f"{model['file']}:{model['class']}"
    version = ["--torch-version", torch_version] if torch_version in KNOWN_TORCH_VERSIONS else []
    cmd = compilelint_cmd() + ["check", lib, "--entry", entry, "--output-format", "json", "--exit-zero", *version,
                               *extra]
    proc = subprocess.run(cmd, cwd=site_packages, capture_output=True, text=True)
    try:
        return json.loads(proc.stdout or "[]")
    except json.JSONDecodeError:
        sys.exit(f"compilelint failed on {entry}: {proc.stderr.strip()[-400:]}")


class InProcess:
    """`compilelint check <lib> --entry E --output-format json` for many entries, the files analysed
    once: discovery, per-file analysis (cached), then the project pass per entry."""

    def __init__(self, lib: str, site_packages: str, extra, torch_version: str = "", user_files=()):
        from compilelint.cache import Cache, default_directory
        from compilelint.config import settings_for
        from compilelint.discover import discover
        from compilelint.engine import analyze_files

        if extra:
            raise SystemExit("extra check arguments need --subprocess")
        cwd = os.getcwd()
        os.chdir(site_packages)
        try:
            self.settings = settings_for([lib])
            # the user's code that builds the models (`--with`), analysed with the library
            files = discover([lib, *user_files], self.settings.all_excludes, self.settings.respect_gitignore,
                             False).files
            self.summaries, _ = analyze_files(files, self.settings)
            from compilelint.project_pass.regions import Project

            self.project = Project(self.summaries, self.settings.extra_roots, self.settings.extra_stops)
            self.cache = Cache(default_directory(self.settings.project_root))
        finally:
            os.chdir(cwd)
        self.site_packages = site_packages
        # the findings speak of the torch the truth was run on (messages, version-gated claims)
        self.torch_version = torch_version if torch_version in KNOWN_TORCH_VERSIONS else self.settings.torch_version

    def __call__(self, lib: str, model: dict, site_packages: str, extra) -> list:
        from dataclasses import replace

        from compilelint.engine import project_findings
        from compilelint.finding import Report
        from compilelint.hidden import fold_hidden
        from compilelint.report.json_output import finding_dicts

        settings = replace(self.settings, entries=[f"{model['file']}:{model['class']}"],
                           torch_version=self.torch_version)
        cwd = os.getcwd()
        os.chdir(self.site_packages)
        try:
            findings = project_findings(self.summaries, settings, None, self.project)
        finally:
            os.chdir(cwd)
        return list(finding_dicts(Report(findings=fold_hidden(findings), errors=[], files_checked=len(self.summaries)),
                                  settings.torch_version))


def load_truth(paths):
    out = []
    for path in paths:
        with open(path, encoding="utf-8") as f:
            doc = json.load(f)
        out.append((os.path.basename(path), doc, load_lines(path), load_variants(path)))
    return out


def load_variants(truth_path: str) -> dict:
    """{model name: [(variant record, its executed-lines record or None)]} from
    `<truth>.variants.json` (run.py --variants) and `<truth>.variants.lines.json.gz`; {} when absent.
    Only variants that ran (status ok)."""
    path = truth_path[: -len(".json")] + ".variants.json"
    if not os.path.exists(path):
        return {}
    with open(path, encoding="utf-8") as f:
        records = [m for m in json.load(f)["models"] if m["status"] == "ok"]
    lines_path = path[: -len(".json")] + ".lines.json.gz"
    lines = {}
    if os.path.exists(lines_path):
        with gzip.open(lines_path, "rt", encoding="utf-8") as f:
            lines = {(m["name"], m.get("variant")): m for m in json.load(f)["models"] if m["status"] == "ok"}
    out = {}
    for record in records:
        out.setdefault(record["name"], []).append((record, lines.get((record["name"], record.get("variant")))))
    return out


def load_lines(truth_path: str) -> dict:
    """{model name: its executed-lines record} from `<truth>.lines.json.gz`, or {} when absent."""
    path = truth_path[: -len(".json")] + ".lines.json.gz"
    if not os.path.exists(path):
        return {}
    with gzip.open(path, "rt", encoding="utf-8") as f:
        return {m["name"]: m for m in json.load(f)["models"] if m["status"] == "ok"}


def worst(scored, lib):
    missed = Counter()
    false = Counter()
    unexercised = Counter()
    for s in scored:
        found = set(map(tuple, s["break_found"])) | set(map(tuple, s["recompile_found"]))
        for site in map(tuple, s["break_sites"] + s["recompile_sites"]):
            if site not in found:
                missed[site] += 1
        for f, ok in s["findings"]:
            reach = (f.get("region") or {}).get("reason", "")
            key = (f["filename"], f["location"]["row"], f["code"], reach.split(" → ")[-1])
            if ok is False:
                false[key] += 1
            elif ok is None:
                unexercised[key] += 1
    return missed.most_common(20), false.most_common(20), unexercised.most_common(10)


def worst_classes(classes):
    """The class findings judged false, and those no run of their class executed: (file, line, code)
    with the number of classes claiming it, most first."""
    false, unexercised = Counter(), Counter()
    for c in classes:
        for file, line, code, ok, *_ in c["findings"]:
            if ok is False:
                false[(file, line, code)] += 1
            elif ok is None:
                unexercised[(file, line, code)] += 1
    return false.most_common(20), unexercised.most_common(10)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("truth", nargs="*", help="truth JSON files (default: bench/truth/*.json)")
    ap.add_argument("--lib", action="append", default=[])
    ap.add_argument("--only", default="")
    ap.add_argument("--site-packages", default="")
    ap.add_argument("-j", "--jobs", type=int, default=2)
    ap.add_argument("--write", default=os.path.join(HERE, "SCORE.md"), help="'' to skip writing")
    ap.add_argument("--json", default="", help="also write the totals and per-model verdicts here")
    ap.add_argument("--subprocess", action="store_true", help="run the compilelint CLI once per model")
    ap.add_argument("--with", dest="user_files", action="append", default=[], metavar="FILE",
                    help="also analyse this file with the library: a user's code that builds the models "
                         "(an experiment: the committed scores analyse the library alone)")
    ap.add_argument("compilelint_args", nargs=argparse.REMAINDER, help="after --: extra check arguments")
    args = ap.parse_args(argv)
    extra = [a for a in args.compilelint_args if a != "--"]
    site_packages = args.site_packages or site_packages_default()
    ROOT["dir"] = site_packages
    paths = args.truth or sorted(p for p in glob.glob(os.path.join(HERE, "*.json")) if not p.endswith(".variants.json"))
    only = set(filter(None, args.only.split(",")))

    all_scored, all_classes, per_lib = [], [], {}
    for fname, doc, lines, variants in load_truth(paths):
        lib = doc["lib"]
        if args.lib and lib not in args.lib:
            continue
        models = [m for m in doc["models"] if m["status"] == "ok" and (not only or m["name"] in only)]
        if args.subprocess:
            if args.user_files:
                raise SystemExit("--with runs in process only")
            with ThreadPoolExecutor(args.jobs) as pool:
                results = list(pool.map(lambda m: check(lib, m, site_packages, extra, doc.get("torch", "")), models))
        else:
            run = InProcess(lib, site_packages, extra, doc.get("torch", ""), [os.path.abspath(f) for f in args.user_files])
            results = [run(lib, m, site_packages, extra) for m in models]
        members = [(m, r, lines.get(m["name"]) if lines else None, variants.get(m["name"], ()))
                   for m, r in zip(models, results)]
        scored = [score_model(*member) for member in members]
        classes = score_classes(members)
        per_lib[fname] = ({**totals(scored), **class_totals(classes)}, *worst(scored, lib), scored,
                          worst_classes(classes))
        all_scored += scored
        all_classes += classes
    total = {**totals(all_scored), **class_totals(all_classes)}
    text = render(per_lib, total, extra)
    print(text)
    if args.write and not only:
        with open(args.write, "w", encoding="utf-8") as f:
            f.write(text)
    if args.json:
        with open(args.json, "w", encoding="utf-8") as f:
            json.dump({"total": total, "per_file": {k: v[0] for k, v in per_lib.items()},
                       "models": [{**{k: v for k, v in s.items() if k != "judged_by"},
                                   "findings": [[f["filename"], f["location"]["row"], f["code"], ok, "/".join(finding_modes(f)),
                                                 *([by] if "judged_by" in s else [])]
                                                for (f, ok), by in zip(s["findings"], s.get("judged_by") or [None] * len(s["findings"]))]}
                                  for s in all_scored],
                       "classes": all_classes},
                      f, indent=1)


def render(per_lib, total, extra) -> str:
    keys = ("models", "breaking_models", "break_site_recall", "recompile_site_recall", "finding_precision",
            "eval_precision", "train_precision", "judged_precision", "eval_judged_precision",
            "train_judged_precision", "unexercised_findings", "hidden_findings",
            "clean_model_alarm_rate", "clean_model_judged_alarm_rate", "model_accuracy", "findings", "true_findings", "break_sites",
            "break_sites_found", "recompile_sites", "recompile_sites_found", "clean_models", "clean_models_alarmed",
            "clean_classes", "clean_classes_alarmed", "clean_class_alarm_rate")
    keys += tuple(k for k in ("variant_runs", "judged_by_variants") if k in total)
    keys += tuple(k for k in ("classes", "class_break_site_recall", "class_default_break_site_recall",
                              "class_recompile_site_recall",
                              "class_finding_precision", "class_judged_precision", "class_unexercised_findings",
                              "class_findings", "class_true_findings", "class_break_sites", "class_break_sites_found",
                              "class_default_break_sites", "class_default_break_sites_found",
                              "class_recompile_sites", "class_recompile_sites_found") if k in total)
    lines = ["# Truth score", "",
             "`python bench/truth/score.py" + (" -- " + " ".join(extra) if extra else "") + "`: compilelint's static "
             "findings against Dynamo's own breaks and recompiles (see the docstring of score.py for every definition).", "",
             "| | " + " | ".join(per_lib) + " | all |", "|---|" + "---|" * (len(per_lib) + 1)]
    for k in keys:
        lines.append(f"| {k} | " + " | ".join(str(v[0].get(k, "")) for v in per_lib.values()) + f" | {total[k]} |")
    for fname, (_, missed, false, unexercised, _, (class_false, class_unexercised)) in per_lib.items():
        lines += ["", f"## {fname}: missed sites (most models first)", ""]
        lines += [f"- `{f}:{ln}` ({n} models)" for (f, ln), n in missed] or ["- none"]
        lines += ["", f"## {fname}: false findings (most models first)", ""]
        lines += [f"- `{f}:{ln}` {code} via `{via}` ({n} models)" for (f, ln, code, via), n in false] or ["- none"]
        if unexercised:
            lines += ["", f"## {fname}: unexercised findings (the eager run never reached them)", ""]
            lines += [f"- `{f}:{ln}` {code} via `{via}` ({n} models)" for (f, ln, code, via), n in unexercised]
        if class_false or class_unexercised:
            lines += ["", f"## {fname}: per class, false and unexercised findings (every run of the class judging)", ""]
            lines += [f"- `{f}:{ln}` {code} false ({n} classes)" for (f, ln, code), n in class_false]
            lines += [f"- `{f}:{ln}` {code} unexercised ({n} classes)" for (f, ln, code), n in class_unexercised]
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    main()
