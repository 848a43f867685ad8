"""Do the fixes `compilelint check --fix --unsafe-fixes` writes remove real graph breaks?

On the 7 transformers models that break under torch 2.13 (bench/fix/models.py: tiny configs, random
weights, no downloads):
1. copy the installed transformers package to a temporary folder (site-packages is never touched);
2. run each model eval (and train with --train) under `torch.compile(backend="eager")` from the
   original, counting breaks with verify's machinery, and keep its eager outputs;
3. `compilelint check <copy>/models --entry <file>:<Model> ... --fix --unsafe-fixes` on the copy
   (twice: the second run must change nothing), and import every file it wrote;
4. run each model again from the copy (first on PYTHONPATH) and compare its outputs with step 2's.

    .venv/bin/python bench/fix/run.py [--tag NAME] [--only MODEL ...] [--train]

Writes bench/fix/<tag>.json, <tag>.md and <tag>.diff (what the fixes changed).
"""
from __future__ import annotations

import argparse
import difflib
import hashlib
import json
import os
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(os.path.dirname(HERE)))

from compilelint.verify.code_copy import make_copy  # noqa: E402
from compilelint.verify.prove import breaks, run_target  # noqa: E402

FACTORY = os.path.join(HERE, "models.py")
NAMES = ["longformer", "led", "big_bird", "reformer", "xlm", "switch_transformers", "nllb_moe"]
ENTRIES = {
    "longformer": "longformer/modeling_longformer.py:LongformerModel",
    "led": "led/modeling_led.py:LEDModel",
    "big_bird": "big_bird/modeling_big_bird.py:BigBirdModel",
    "reformer": "reformer/modeling_reformer.py:ReformerModel",
    "xlm": "xlm/modeling_xlm.py:XLMModel",
    "switch_transformers": "switch_transformers/modeling_switch_transformers.py:SwitchTransformersModel",
    "nllb_moe": "nllb_moe/modeling_nllb_moe.py:NllbMoeModel",
}


def transformers_dir() -> str:
    out = subprocess.run([sys.executable, "-c", "import transformers, os; print(os.path.dirname(transformers.__file__))"],
                         capture_output=True, text=True, check=True)
    return out.stdout.strip()


def digest(folder: str) -> dict:
    out = {}
    for dirpath, _, files in os.walk(folder):
        for name in files:
            if name.endswith(".py"):
                path = os.path.join(dirpath, name)
                with open(path, "rb") as f:
                    out[path] = hashlib.sha256(f.read()).hexdigest()
    return out


def check_fix(models_copy: str, extra: list) -> subprocess.CompletedProcess:
    cmd = [sys.executable, "-m", "compilelint", "check", models_copy, "--fix", "--unsafe-fixes", "--no-cache",
           "--exit-zero", "-q", "--output-format", "concise"]
    for name in NAMES:
        cmd += ["--entry", os.path.join(models_copy, ENTRIES[name])]
    return subprocess.run(cmd + extra, capture_output=True, text=True)


def imports_ok(copy, changed: list) -> list:
    """Import each written module from the copy; the ones that fail, with why."""
    failures = []
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(copy.pythonpath))
    for path in changed:
        rel = os.path.relpath(path, os.path.dirname(copy.roots[next(iter(copy.roots))]))
        module = rel[:-3].replace(os.sep, ".").removesuffix(".__init__")
        res = subprocess.run([sys.executable, "-c", f"import {module}"], env=env, capture_output=True, text=True)
        if res.returncode:
            failures.append(f"{module}: {(res.stderr.strip().splitlines() or ['?'])[-1]}")
    return failures


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--tag", default="results")
    ap.add_argument("--only", nargs="*", default=None)
    ap.add_argument("--train", action="store_true", help="also run every model in train mode")
    ap.add_argument("--timeout", type=float, default=600)
    opts = ap.parse_args()
    names = opts.only or NAMES
    modes = ["eval", "train"] if opts.train else ["eval"]
    tf = transformers_dir()
    models = os.path.join(tf, "models")
    copy = make_copy([models])
    models_copy = copy.to_copy(models)
    tmp = tempfile.mkdtemp(prefix="compilelint-bench-fix-")
    started = time.time()
    rows, result = [], {"transformers": tf, "models": {}}
    try:
        before = {}
        for name in names:
            for mode in modes:
                i = NAMES.index(name)
                save = os.path.join(tmp, f"{name}-{mode}.pt")
                before[name, mode] = run_target(f"{FACTORY}:targets", i, mode, save=save, timeout=opts.timeout)
                print(f"before {name} {mode}: {breaks(before[name, mode].events, models)} breaks "
                      f"{before[name, mode].error}", flush=True)

        original = digest(models_copy)
        first = check_fix(models_copy, [])
        after_fix = digest(models_copy)
        changed = sorted(p for p in after_fix if after_fix[p] != original.get(p))
        second = check_fix(models_copy, [])
        idempotent = digest(models_copy) == after_fix
        failures = imports_ok(copy, changed)
        diff = []
        for path in changed:
            orig = copy.to_original(path)
            with open(orig, encoding="utf-8") as f:
                a = f.readlines()
            with open(path, encoding="utf-8") as f:
                b = f.readlines()
            rel = os.path.relpath(orig, tf)
            diff += difflib.unified_diff(a, b, f"a/transformers/{rel}", f"b/transformers/{rel}")
        with open(os.path.join(HERE, f"{opts.tag}.diff"), "w", encoding="utf-8") as f:
            f.writelines(diff)
        result.update(files_changed=[os.path.relpath(p, models_copy) for p in changed], idempotent=idempotent,
                      import_failures=failures, check_messages=(first.stderr + second.stderr).strip().splitlines()[-20:])

        total_before = total_after = 0
        for name in names:
            for mode in modes:
                i = NAMES.index(name)
                b = before[name, mode]
                a = run_target(f"{FACTORY}:targets", i, mode, copy=copy, reference=os.path.join(tmp, f"{name}-{mode}.pt"),
                               timeout=opts.timeout)
                nb, na = breaks(b.events, models), breaks(a.events, models)
                total_before += nb
                total_after += na
                cmp = a.compare or {}
                result["models"][f"{name}/{mode}"] = {
                    "breaks_before": nb, "breaks_after": na,
                    "breaks_before_all": breaks(b.events), "breaks_after_all": breaks(a.events),
                    "lines_before": sorted({f"{os.path.relpath(e['file'], models)}:{e['line']}" for e in b.events
                                            if e["event"] != "recompile" and e["file"].startswith(models)}),
                    "lines_after": sorted({f"{os.path.relpath(e['file'], models)}:{e['line']}" for e in a.events
                                           if e["event"] != "recompile" and e["file"].startswith(models)}),
                    "eager": cmp.get("eager"), "compiled": cmp.get("compiled"), "error": b.error or a.error,
                }
                row = result["models"][f"{name}/{mode}"]
                rows.append(row | {"name": f"{name} ({mode})"})
                print(f"after  {name} {mode}: {nb} -> {na} breaks; eager {(cmp.get('eager') or {}).get('equal')}, "
                      f"compiled {(cmp.get('compiled') or {}).get('equal')} {a.error}", flush=True)
        removed = total_before - total_after
        result.update(breaks_before=total_before, breaks_after=total_after, removed=removed,
                      removed_pct=round(100 * removed / total_before, 1) if total_before else 0.0,
                      seconds=round(time.time() - started))
    finally:
        copy.remove()
        subprocess.run(["rm", "-rf", tmp])
    with open(os.path.join(HERE, f"{opts.tag}.json"), "w", encoding="utf-8") as f:
        json.dump(result, f, indent=1)
    with open(os.path.join(HERE, f"{opts.tag}.md"), "w", encoding="utf-8") as f:
        f.write(markdown(result, rows))
    print(markdown(result, rows))
    return 0


def _eq(v) -> str:
    if not v:
        return "-"
    if v["equal"] in ("bitwise", "mismatch", "differs") and v.get("rtol") is None:
        return v["equal"] + (f" ({v['what']})" if v["equal"] != "bitwise" and v.get("what") else "")
    return f"{v['equal']} (max |Δ| {v['max_abs']:.2g}, rtol {v['rtol']:g}, atol {v['atol']:g})"


def markdown(result: dict, rows: list) -> str:
    lines = ["| model | breaks before | after | eager output (fixed vs original) | compiled output (fixed vs original eager) |",
             "|---|---:|---:|---|---|"]
    for r in rows:
        lines.append(f"| {r['name']} | {r['breaks_before']} | {r['breaks_after']} | {_eq(r['eager'])} | "
                     f"{_eq(r['compiled'])} |")
    lines.append(f"| **total** | **{result.get('breaks_before')}** | **{result.get('breaks_after')}** | | |")
    lines += ["", f"Removed {result.get('removed')} of {result.get('breaks_before')} breaks "
                  f"({result.get('removed_pct')} %) in transformers/models; files changed: "
                  f"{len(result.get('files_changed', []))}; idempotent: {result.get('idempotent')}; "
                  f"import failures: {len(result.get('import_failures', []))}.", ""]
    return "\n".join(lines)


if __name__ == "__main__":
    sys.exit(main())
