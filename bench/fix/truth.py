"""Do fixes and settings remove the breaks of the truth corpus's breaking models?

bench/truth/*-torch2.11.json records every Dynamo break of 373 real models built tiny. For each
model that breaks there (eval or train):
1. run it from the installed library, eval and train (prove_child: seeded, eager then
   `torch.compile(backend="eager")`, 3 calls, gradients too in train), keeping its eager outputs;
2. copy the libraries to a temporary folder and run `compilelint check <copy>/<lib>/models
   --entry <file>:<Class>... --fix --unsafe-fixes` there (twice: idempotence; every written file
   imported);
3. run it again from the copy and compare with step 1 (eager: what the fixes change in eager;
   compiled: the fixed code under compile vs the original eager run);
4. where breaks are left, try the Dynamo settings their gb_types point to (verify --try-settings'
   table), each alone and the good ones together, and keep the set that removes the most with
   outputs equal;
5. where the `copy.deepcopy` of `DynamicCache(config=...)` is left, run once more with the call
   argument `use_cache=False` (a change of the call, not of the code; counted apart).

    .venv/bin/python bench/fix/truth.py [--only bart,xlm] [-j 2] [--tag truth]

Writes bench/fix/<tag>.json, .md and .diff. Runs of step 1 are kept in ~/.cache/compilelint-bench/
fix-truth/ (they do not depend on compilelint) so a rerun starts at step 2; `--fresh` drops them.
timm does not import beside torch 2.13's CPU wheel here: its models are listed, not run.
"""
from __future__ import annotations

import argparse
import difflib
import glob
import json
import os
import subprocess
import sys
import time
import threading
from concurrent.futures import ThreadPoolExecutor

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)
sys.path.insert(0, ROOT)

from run import digest  # noqa: E402

from compilelint.verify.knobs import EQUAL, nested_breaks, pointed_to, run_kwargs, source_lines  # noqa: E402
from compilelint.verify.code_copy import make_copy  # noqa: E402
from compilelint.verify.prove import breaks, run_target  # noqa: E402

FACTORY = os.path.join(HERE, "truth_models.py") + ":targets"
MODES = ("eval", "train")  # --modes eval: the eval runs alone (the breadth corpus on the lent GPU)
# where each library's models are: the folder `check --fix` runs on (the package itself by default)
MODEL_FOLDERS = {"transformers": "models", "diffusers": "models", "timm": "models"}
CACHE = os.path.expanduser("~/.cache/compilelint-bench/fix-truth")
DEEPCOPY = "copy.deepcopy()"


def breaking_models(libs) -> list:
    """(lib, name, file, class, {mode: breaks recorded}) of every truth model that breaks."""
    out = []
    for path in sorted(glob.glob(os.path.join(ROOT, "bench", "truth", "*-torch2.11.json"))):
        with open(path, encoding="utf-8") as f:
            doc = json.load(f)
        for m in doc["models"]:
            if m["status"] != "ok":
                continue
            events = [e for mode in MODES for e in m[mode]["events"] if e["event"] != "recompile"]
            recorded = {mode: sum(e["count"] for e in m[mode]["events"] if e["event"] != "recompile") for mode in MODES}
            if any(recorded.values()):
                out.append({"lib": doc["lib"], "name": m["name"], "file": m["file"], "class": m["class"],
                            "truth": recorded, "run": doc["lib"] in libs,
                            "deepcopy_only": all(e["gb_type"] == DEEPCOPY for e in events)})
    # the models that break only at the config deepcopy last: one cause, and torch 2.13 traces it
    return sorted(out, key=lambda m: m["deepcopy_only"])


def lib_dir(lib: str) -> str:
    code = f"import importlib.util; print(importlib.util.find_spec({lib!r}).submodule_search_locations[0])"  # not imported
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.strip()


DEVICE = "cpu"
OLD_AUDIO = True  # the committed results' speech inputs (truth_models._old_audio); --fresh: models.py's


def run(model: dict, mode: str, **kw):
    """One prove_child run of `model` (its environment names it to the factory)."""
    env = {"TRUTH_LIB": model["lib"], "TRUTH_NAME": model["name"], "TRUTH_KWARGS": json.dumps(kw.pop("call_kwargs", {})),
           "OMP_NUM_THREADS": "1", "HF_HUB_OFFLINE": "1", "TRANSFORMERS_VERBOSITY": "error",
           "TOKENIZERS_PARALLELISM": "false", **({} if OLD_AUDIO else {"TRUTH_MODELS_AUDIO": "1"})}
    return run_target(FACTORY, 0, mode, env_extra=env, device=DEVICE, **kw)


def summary(r, under: str) -> dict:
    """Breaks under the library, where they are, and the comparison with the reference."""
    events = [e for e in r.events if e["event"] != "recompile"
              and os.path.realpath(e["file"]).startswith(under + os.sep)]
    return {"breaks": breaks(r.events, under), "breaks_all": breaks(r.events),
            "lines": sorted({f"{os.path.relpath(e['file'], os.path.dirname(under))}:{e['line']}" for e in events}),
            "gb_types": sorted({e.get("gb_type", "") for e in events}),
            "sources": sorted({line.strip() for line in source_lines(events)}),  # what points to trace_numpy
            "nested": nested_breaks(events),  # what points to nested_graph_breaks
            "compare": r.compare, "error": r.error}


def before(model: dict, under: str, timeout: float, fresh: bool) -> dict:
    """Step 1, cached: {mode: summary}; the eager outputs saved beside it for step 3's comparison."""
    os.makedirs(CACHE, exist_ok=True)
    key = os.path.join(CACHE, f"{model['lib']}-{model['name']}")
    if not fresh and os.path.exists(key + ".json") and all(os.path.exists(f"{key}-{m}.pt") for m in MODES):
        with open(key + ".json", encoding="utf-8") as f:
            return json.load(f)
    out = {mode: summary(run(model, mode, save=f"{key}-{mode}.pt", timeout=timeout), under) for mode in MODES}
    with open(key + ".json", "w", encoding="utf-8") as f:
        json.dump(out, f)
    return out


def reference(model: dict, mode: str) -> str:
    return os.path.join(CACHE, f"{model['lib']}-{model['name']}-{mode}.pt")


def equal(s: dict) -> bool:
    """The compiled run computes what the original eager run did, and the fixed eager run too."""
    c = s.get("compare") or {}
    return not s.get("error") and all((c.get(k) or {}).get("equal") in EQUAL for k in ("eager", "compiled"))


def after(model: dict, under: str, copy, timeout: float, unchanged: bool = False) -> dict:
    """Steps 3 to 5 for one model on the fixed copy. `unchanged`: the fixes wrote no file of the
    model's library, so its code runs as before: step 3 is step 1 (not rerun)."""
    def both(**kw):
        return {mode: summary(run(model, mode, copy=copy, reference=reference(model, mode), timeout=timeout,
                                  **{k: dict(v) if isinstance(v, dict) else v for k, v in kw.items()}), under)
                for mode in MODES}

    row = {"fixed": model["before"] if unchanged else both(), "unchanged": unchanged}
    fixed = row["fixed"]
    left = sum(fixed[m]["breaks"] for m in MODES)
    best = {"knobs": [], "runs": fixed}
    if left:
        knobs = pointed_to([], [g for m in MODES for g in fixed[m]["gb_types"]],
                           [t for m in MODES for t in fixed[m].get("sources", [])],
                           any(fixed[m].get("nested", True) for m in MODES))  # a cached run without it: try it
        trials = []
        for knob in knobs:
            trials.append({"knobs": [knob], "runs": both(**run_kwargs([knob]))})
        good = [t for t in trials if all(equal(t["runs"][m]) for m in MODES)]
        if len(good) > 1:
            together = [k for t in good for k in t["knobs"]]
            trials.append({"knobs": together, "runs": both(**run_kwargs(together))})
        row["trials"] = [{"knobs": t["knobs"], **{m: t["runs"][m] for m in MODES}} for t in trials]
        for t in trials:
            n = sum(t["runs"][m]["breaks"] for m in MODES)
            if all(equal(t["runs"][m]) for m in MODES) and n < sum(best["runs"][m]["breaks"] for m in MODES):
                best = t
    row["settings"] = {"knobs": best["knobs"], **{m: best["runs"][m] for m in MODES}}
    if any(DEEPCOPY in best["runs"][m]["gb_types"] for m in MODES):
        row["use_cache_false"] = both(call_kwargs={"use_cache": False}, **run_kwargs(best["knobs"]))
    return row


def scope(lib: str, d: str) -> str:
    return os.path.join(d, MODEL_FOLDERS.get(lib, ""))


def check_fix(copy, models: list, dirs: dict) -> subprocess.CompletedProcess:
    cmd = [sys.executable, "-m", "compilelint", "check", *[copy.to_copy(scope(lib, d)) for lib, d in dirs.items()],
           "--fix", "--unsafe-fixes", "--no-cache", "--exit-zero", "-q", "--output-format", "concise"]
    for m in models:
        rel = m["file"].split("/", 1)[1]  # "transformers/models/x/y.py" → "models/x/y.py"
        cmd += ["--entry", f"{copy.to_copy(os.path.join(dirs[m['lib']], rel))}:{m['class']}"]
    return subprocess.run(cmd, capture_output=True, text=True)


def imports_ok(copy, changed: list) -> list:
    failures = []
    # the copy first, then what the runs see (the libraries' dependencies where PYTHONPATH installs them)
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([*copy.pythonpath, *filter(None, [os.environ.get("PYTHONPATH")])]))
    for path in changed:
        root = next(c for c in copy.roots.values() if path.startswith(c + os.sep))
        module = os.path.relpath(path, os.path.dirname(root))[:-3].replace(os.sep, ".").removesuffix(".__init__")
        res = subprocess.run([sys.executable, "-c", f"import {module}"], env=env, capture_output=True, text=True)
        if res.returncode:
            failures.append(f"{module}: {(res.stderr.strip().splitlines() or ['?'])[-1]}")
    return failures


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--tag", default="truth")
    ap.add_argument("--only", default="", help="comma-separated model names")
    ap.add_argument("--libs", default="transformers,diffusers", help="libraries to run (timm: not locally)")
    ap.add_argument("-j", "--jobs", type=int, default=1)
    ap.add_argument("--timeout", type=float, default=600)
    ap.add_argument("--fresh", action="store_true", help="rerun step 1 instead of reading its cache")
    ap.add_argument("--before-only", action="store_true", help="step 1 only (fills the cache)")
    ap.add_argument("--device", default="cpu", help="cpu or cuda (the lent GPU machine: device_run.sh)")
    ap.add_argument("--part", default="1/1", help="I/N: only every N-th model from the I-th (split a run)")
    ap.add_argument("--out", default=HERE, help="folder for <tag>.json/.md/.diff")
    ap.add_argument("--merge", nargs="*", default=None, help="re-render the totals of several parts' JSON files")
    ap.add_argument("--rerun-clean", action="store_true", help="also rerun models with no break before")
    ap.add_argument("--modes", default="eval,train", help="eval,train or eval (the eval runs alone)")
    ap.add_argument("--reuse-copy", default="", help="a copy an earlier (stopped) run fixed: skip step 2")
    opts = ap.parse_args()
    global DEVICE, OLD_AUDIO, MODES
    MODES = tuple(opts.modes.split(","))  # a merge counts these modes of every part
    if opts.merge:
        return merge(opts.merge, os.path.join(opts.out, opts.tag))
    DEVICE, OLD_AUDIO = opts.device, not opts.fresh
    libs = opts.libs.split(",")
    corpus = breaking_models(libs)
    part, parts = (int(x) for x in opts.part.split("/"))
    corpus = corpus[part - 1::parts]
    todo = [m for m in corpus if m["run"] and (not opts.only or m["name"] in opts.only.split(","))
            and any(m["truth"][k] for k in MODES)]
    dirs = {lib: lib_dir(lib) for lib in {m["lib"] for m in todo}}
    unders = {lib: os.path.realpath(d) for lib, d in dirs.items()}
    started = time.time()
    pool = ThreadPoolExecutor(opts.jobs)
    lock = threading.Lock()

    def step1(m):
        m["before"] = before(m, unders[m["lib"]], opts.timeout, opts.fresh)
        print(f"before {m['name']}: " + ", ".join(f"{k} {m['before'][k]['breaks']}" for k in MODES), flush=True)

    list(pool.map(step1, todo))
    if opts.before_only:
        return 0

    copy = reused(opts.reuse_copy, dirs) if opts.reuse_copy else make_copy(list(dirs.values()))
    result = {"libs": dirs, "models": []}
    try:
        scope = [copy.to_copy(d) for d in dirs.values()]
        if opts.reuse_copy:  # fixed by an earlier run: what differs from the installed files is its fixes
            installed = {copy.to_copy(p): h for d in dirs.values() for p, h in digest(d).items()}
            fixed = {p: h for s in scope for p, h in digest(s).items()}
            changed = sorted(p for p in fixed if fixed[p] != installed.get(p))
            idempotent, first = None, None
        else:
            original = {p: h for s in scope for p, h in digest(s).items()}
            first = check_fix(copy, todo, dirs)
            if first.returncode != 0:  # a check that failed writes nothing: never report that as "no effect"
                sys.exit(f"compilelint check --fix failed (exit {first.returncode}): "
                         f"{(first.stderr.strip().splitlines() or ['no output'])[-1][:300]}")
            fixed = {p: h for s in scope for p, h in digest(s).items()}
            changed = sorted(p for p in fixed if fixed[p] != original.get(p))
            check_fix(copy, todo, dirs)
            idempotent = {p: h for s in scope for p, h in digest(s).items()} == fixed
        diff = []
        for path in changed:
            orig = copy.to_original(path)
            with open(orig, encoding="utf-8") as f:
                a = f.readlines()
            with open(path, encoding="utf-8") as f:
                b = f.readlines()
            rel = library_relative(orig, dirs)
            diff += difflib.unified_diff(a, b, f"a/{rel}", f"b/{rel}")
        with open(os.path.join(opts.out, f"{opts.tag}.diff"), "w", encoding="utf-8") as f:
            f.writelines(diff)
        result.update(files_changed=[library_relative(copy.to_original(p), dirs) for p in changed], idempotent=idempotent,
            import_failures=imports_ok(copy, changed),
            check_errors=first.stderr.strip().splitlines()[-10:] if first else [])
        done = []

        def save():
            """The report so far: a long run can be stopped and still leaves every finished model."""
            with lock:
                result["models"] = [{k: v for k, v in m.items() if k != "run"} | {"ran": m["run"] and m in done}
                                    for m in corpus]
                result.update(totals=totals(result["models"]), seconds=round(time.time() - started), device=DEVICE,
                              finished=len(done) == len(todo))
                write(result, os.path.join(opts.out, opts.tag), quiet=True)

        def step3(m):
            if not opts.rerun_clean and not any(m["before"][k]["breaks"] for k in MODES):
                # nothing to remove here: not rerun (a fix in a shared file is still run by the others)
                m.update(clean=True, fixed=m["before"], settings={"knobs": [], **m["before"]})
            else:
                touched = any(p.startswith(copy.to_copy(dirs[m["lib"]]) + os.sep) for p in changed)
                m.update(after(m, unders[m["lib"]], copy, opts.timeout, unchanged=not touched))
                print(f"after  {m['name']}: " + ", ".join(
                    f"{k} {m['before'][k]['breaks']}→{m['fixed'][k]['breaks']}→{m['settings'][k]['breaks']}"
                    for k in MODES), flush=True)
            done.append(m)
            save()

        # the models with the most breaks first: a run stopped early has measured most of the total
        list(pool.map(step3, sorted(todo, key=lambda m: -sum(m["before"][k]["breaks"] for k in MODES))))
    finally:
        copy.remove()
    print(markdown(result))
    return 0


def library_relative(path: str, dirs: dict) -> str:
    """`transformers/models/x/y.py`: the path from the folder that holds its library."""
    d = next(d for d in dirs.values() if path.startswith(d + os.sep))
    return os.path.relpath(path, os.path.dirname(d))


def reused(base: str, dirs: dict):
    """The `Copy` that an earlier run left in `base` (`<base>/<i>/<package>`), fixes already written."""
    from compilelint.verify.code_copy import Copy, import_root

    roots = {}
    for sub in sorted(os.listdir(base)):
        for name in os.listdir(os.path.join(base, sub)):
            for d in dirs.values():
                if os.path.basename(import_root(d)) == name:
                    roots[import_root(d)] = os.path.join(base, sub, name)
    return Copy(base, roots)


def kept_breaks(model: dict, run: dict, mode: str) -> int:
    """The breaks a phase's run leaves, counted as verify would keep that phase: its own when it
    compiled (or the original failed to compile as well) and computes what the original computed;
    else the original's, as a change that fails or changes the outputs is not kept."""
    before = model["before"][mode]
    compare = run.get("compare") or {}
    changed = any(v.get("equal") not in EQUAL for v in compare.values() if v)
    if (run.get("error") and not before.get("error")) or changed:
        return before["breaks"]
    return run["breaks"]


def totals(models: list) -> dict:
    ran = [m for m in models if m["ran"]]
    out = {"before": sum(m["before"][mode]["breaks"] for m in ran for mode in MODES)}
    out.update({phase: sum(kept_breaks(m, m[phase][mode], mode) for m in ran for mode in MODES)
                for phase in ("fixed", "settings")})
    out["use_cache_false"] = sum(kept_breaks(m, (m.get("use_cache_false") or m["settings"])[mode], mode)
                                 for m in ran for mode in MODES)
    out["truth"] = sum(m["truth"][mode] for m in ran for mode in MODES)
    return out


def write(result: dict, stem: str, quiet: bool = False):
    with open(stem + ".json", "w", encoding="utf-8") as f:
        json.dump(result, f, indent=1)
    text = markdown(result)
    with open(stem + ".md", "w", encoding="utf-8") as f:
        f.write(text)
    if not quiet:
        print(text)


def merge(paths: list, stem: str) -> int:
    """One report from the JSON files of several `--part` runs (the files changed: their union), the
    truth column read again from bench/truth/ (a rerun of the corpus changes it, not the runs here)."""
    docs = []
    for path in paths:
        with open(path, encoding="utf-8") as f:
            docs.append(json.load(f))
    # a model listed by several parts (each lists the whole corpus): the part that ran it, else the one
    # that measured it before; of equals the later part (a rerun of one model given last replaces it)
    models = {}
    for m in (m for d in docs for m in d["models"]):
        have = models.get((m["lib"], m["name"]))
        if have is None or (m["ran"], bool(m.get("before"))) >= (have["ran"], bool(have.get("before"))):
            models[(m["lib"], m["name"])] = m
    libs = {m["lib"] for m in models.values() if m["ran"]}  # a library no part ran is left out
    result = dict(docs[0], models=[m for m in models.values() if m["lib"] in libs],
                  files_changed=sorted({p for d in docs for p in d["files_changed"]}),
                  idempotent=None if any(d["idempotent"] is None for d in docs) else all(d["idempotent"] for d in docs),
                  import_failures=[x for d in docs for x in d["import_failures"]])
    recorded = {(m["lib"], m["name"]): m["truth"] for m in breaking_models(())}  # the truth files as they are now
    for m in result["models"]:
        m["truth"] = recorded.get((m["lib"], m["name"]), m["truth"])
    result["totals"] = totals(result["models"])
    write(result, stem)
    return 0


def verdict(s: dict) -> str:
    """How the compiled run compares with the original eager run (and the fixed eager run, when not equal)."""
    if s.get("error"):
        return "error: " + s["error"][:80]
    c = s.get("compare") or {}
    parts = []
    for k in ("compiled", "eager"):
        v = c.get(k)
        if not v:
            continue
        if v["equal"] == "bitwise":
            text = "bitwise"
        elif v["equal"] == "allclose":
            text = f"allclose (max |Δ| {v['max_abs']:.2g}, rtol {v['rtol']:g}, atol {v['atol']:g})"
        else:
            text = f"{v['equal']} ({v.get('what', '')})"
        if k == "compiled" or text != "bitwise":
            parts.append(("" if k == "compiled" else "eager ") + text)
    return "; ".join(parts) or "-"


def pct(a: int, b: int) -> str:
    return f"{100 * (a - b) / a:.1f} %" if a else "-"


def _cell(model: dict, run: dict, mode: str) -> str:
    """A phase's breaks in the table; "(not kept: N)" when the totals count the original's N."""
    kept = kept_breaks(model, run, mode)
    return str(run["breaks"]) if kept == run["breaks"] else f"{run['breaks']} (not kept: {kept})"


def markdown(result: dict) -> str:
    t = result["totals"]
    lines = ["| model | mode | truth (2.11) | before | after fixes | + settings | settings | outputs (compiled vs original eager) |",
             "|---|---|--:|--:|--:|--:|---|---|"]
    for m in result["models"]:
        for mode in MODES:
            if not m["ran"]:
                if m.get("before"):
                    lines.append(f"| {m['lib']}/{m['name']} | {mode} | {m['truth'][mode]} | {m['before'][mode]['breaks']} "
                                 f"| | | | after: not finished (run stopped) |")
                else:
                    lines.append(f"| {m['lib']}/{m['name']} | {mode} | {m['truth'][mode]} | not run | | | | "
                                 f"{m['lib']} not run here |")
                continue
            s = m["settings"]
            if m.get("clean"):
                lines.append(f"| {m['lib']}/{m['name']} | {mode} | {m['truth'][mode]} | 0 | 0 | 0 | - | "
                             f"no break here before: not rerun{'; ' + m['before'][mode]['error'][:80] if m['before'][mode]['error'] else ''} |")
                continue
            lines.append(f"| {m['lib']}/{m['name']} | {mode} | {m['truth'][mode]} | {m['before'][mode]['breaks']} | "
                         f"{_cell(m, m['fixed'][mode], mode)} | {_cell(m, s[mode], mode)} | {', '.join(s['knobs']) or '-'} | "
                         f"{verdict(s[mode])} |")
    lines += ["", f"Totals over the {sum(1 for m in result['models'] if m['ran'])} models run "
                  f"({result.get('device', 'cpu')}), {' + '.join(MODES)}, breaks in the libraries' own files: recorded "
                  f"in the truth corpus (torch 2.11) {t['truth']}; here before "
                  f"**{t['before']}**, after the code fixes **{t['fixed']}** (−{pct(t['before'], t['fixed'])}), "
                  f"after fixes + suggested settings **{t['settings']}** (−{pct(t['before'], t['settings'])}); "
                  f"with `use_cache=False` in the call as well: {t['use_cache_false']} "
                  f"(−{pct(t['before'], t['use_cache_false'])}). A run that fails to compile or changes the outputs "
                  "(where the original did not) counts the original's breaks: verify would not keep that change.",
              f"Measured before on every breaking model run here ({sum(1 for m in result['models'] if m.get('before'))}): "
              f"{sum(m['before'][k]['breaks'] for m in result['models'] if m.get('before') for k in MODES)} breaks; "
              f"{sum(1 for m in result['models'] if m.get('before') and not any(m['before'][k]['breaks'] for k in MODES))} "
              "models break nowhere here.",
              f"Files changed: {len(result['files_changed'])}; idempotent: "
              f"{'not rechecked (fixes of a stopped run reused)' if result['idempotent'] is None else result['idempotent']}; "
              f"import failures: {len(result['import_failures'])}.", "", "Breaks left after fixes + settings:", ""]
    left = {}
    for m in result["models"]:
        if m["ran"]:
            for mode in MODES:
                for line in m["settings"][mode]["lines"]:
                    left.setdefault(line, set()).add(f"{m['name']} {mode}")
    for line, where in sorted(left.items(), key=lambda kv: -len(kv[1])):
        lines.append(f"- `{line}`: {len(where)} runs ({', '.join(sorted(where)[:6])}{', …' if len(where) > 6 else ''})")
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    sys.exit(main())
