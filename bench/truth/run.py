"""Build the truth corpus: every model of a library run under Dynamo, one process each.

    python bench/truth/run.py --lib transformers                  # the whole library
    python bench/truth/run.py --lib transformers --only bert,llama # refresh a part
    python bench/truth/run.py --lib timm -j 16 --timeout 300
    python bench/truth/run.py --lib timm --lines    # eager only: the lines each model executes
    python bench/truth/run.py --lib transformers --variants [--lines]  # the models' variants (models.VARIANTS)

Writes `bench/truth/<lib>-<version>-torch<major.minor>.json`: per model its status (`ok`,
`build-error`, `eager-error`, `timeout`, `crash`), its defining file and class, and the breaks
and recompiles of the eval and train runs (child.py). A refresh with `--only` replaces those
models and keeps the others. `--lines` runs each model in eager only and writes
`<lib>-<version>-torch<major.minor>.lines.json.gz`: the library lines each mode executed
(lines.py), which the scorer needs to tell a wrong claim from one the run never exercised.
`--variants` runs, instead, every variant of every model that has some (models.VARIANTS: the same
model with a config or inputs that open paths the default run never takes), the same way, into
`<lib>-<version>-torch<major.minor>.variants.json` (`.variants.lines.json.gz` with `--lines`): one
record per model and variant, `name` the model's and `variant` the variant's; `--only` names
models (all their variants) or `model:variant`. `--missing` runs only what the output file lacks
(a run cut short by its time limit is finished where it stopped); with `--retorch` a record another torch
made counts as lacking too, and is made again on this one. Never part of CI: a full run
takes from minutes (16 cores) to hours.
"""
from __future__ import annotations

import argparse
import gzip
import json
import os
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor

HERE = os.path.dirname(os.path.abspath(__file__))
MARK = "TRUTH-RESULT "


def _versions(lib):
    code = (f"import sys; sys.path.insert(0, {HERE!r}); import models, importlib.metadata as m, torch; "
            f"d = models.DISTRIBUTIONS.get({lib!r}); print(m.version(d() if d else {lib!r})); "
            "print('.'.join(torch.__version__.split('+')[0].split('.')[:2]))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.split()
    return out[0], out[1]


def _names(lib):
    code = f"import sys; sys.path.insert(0, {HERE!r}); import models; print('\\n'.join(models.names({lib!r})))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    if out.returncode:
        sys.exit(f"cannot list {lib} models: {out.stderr.strip().splitlines()[-1:]}")
    return out.stdout.split()


def _variant_names(lib, torch_version):
    """The library's variants that may run on this torch (a variant bound to another is left out)."""
    code = (f"import sys, json; sys.path.insert(0, {HERE!r}); import models; "
            f"print(json.dumps(models.variant_names({lib!r}, {torch_version!r})))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    if out.returncode:
        sys.exit(f"cannot list {lib} variants: {out.stderr.strip().splitlines()[-1:]}")
    return json.loads(out.stdout)


def key(record) -> str:
    """A record's key in its file: the model's name, `name:variant` for a variant's run."""
    return record["name"] + (f":{record['variant']}" if record.get("variant") else "")


def run_one(lib, name, timeout, lines=False):
    """Run `name` (a model, or `model:variant`) in its own process; its record."""
    name, _, variant = name.partition(":")
    extra = {"variant": variant} if variant else {}
    env = dict(os.environ, PYTHONUNBUFFERED="1", OMP_NUM_THREADS="1", TOKENIZERS_PARALLELISM="false",
               HF_HUB_OFFLINE="1", TRANSFORMERS_VERBOSITY="error")
    t0 = time.perf_counter()
    try:
        proc = subprocess.run([sys.executable, os.path.join(HERE, "child.py"), *(["--lines"] if lines else []), lib, name,
                               *([variant] if variant else [])], env=env,
                              capture_output=True, text=True, timeout=timeout, stdin=subprocess.DEVNULL)
    except subprocess.TimeoutExpired:
        return {"lib": lib, "name": name, **extra, "status": "timeout", "error": f"over {timeout} s"}
    for line in reversed(proc.stdout.splitlines()):
        if line.startswith(MARK):
            record = json.loads(line[len(MARK):])
            record["wall"] = round(time.perf_counter() - t0, 1)
            return record
    tail = (proc.stderr.strip().splitlines() or ["no output"])[-1][:300]
    return {"lib": lib, "name": name, **extra, "status": "crash", "error": f"exit {proc.returncode}: {tail}"}


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    breadth = sorted(f[:-3] for f in os.listdir(os.path.join(HERE, "breadth")) if f.endswith(".py") and not f.startswith("_"))
    ap.add_argument("--lib", required=True, choices=("transformers", "timm", "diffusers", *breadth))
    ap.add_argument("--only", default="", help="comma-separated model names to (re)run")
    ap.add_argument("-j", "--jobs", type=int, default=max(1, (os.cpu_count() or 2) - 1))
    ap.add_argument("--timeout", type=int, default=240, help="seconds per model")
    ap.add_argument("--limit", type=int, default=0, help="run only the first N models (smoke test)")
    ap.add_argument("--lines", action="store_true", help="eager only: record the executed lines")
    ap.add_argument("--variants", action="store_true", help="run the models' variants (models.VARIANTS) instead")
    ap.add_argument("--only-ok", action="store_true",
                    help="only the models that ran (status ok) in the committed truth of this version")
    ap.add_argument("--missing", action="store_true",
                    help="only the runs the output file does not hold yet (finish a run that was cut short)")
    ap.add_argument("--retorch", action="store_true",
                    help="with --missing: also run again what the output file holds from another torch")
    ap.add_argument("--out", default="", help="output JSON (default: bench/truth/<lib>-<ver>-torch<ver>.json)")
    args = ap.parse_args(argv)

    version, torch_version = _versions(args.lib)
    suffix = (".variants" if args.variants else "") + (".lines.json.gz" if args.lines else ".json")
    out = args.out or os.path.join(HERE, f"{args.lib}-{version}-torch{torch_version}{suffix}")
    table = _variant_names(args.lib, torch_version) if args.variants else {}
    names = args.only.split(",") if args.only else list(table) if args.variants else _names(args.lib)
    if args.only_ok:
        with _open(os.path.join(HERE, f"{args.lib}-{version}-torch{torch_version}.json"), "rt") as f:
            ok = {m["name"] for m in json.load(f)["models"] if m["status"] == "ok"}
        names = [n for n in names if n.partition(":")[0] in ok]
    if args.variants:  # every variant of each named model (or the one named `model:variant`)
        names = [f"{n.partition(':')[0]}:{v}" for n in names for v in table.get(n.partition(":")[0], ())
                 if ":" not in n or n.partition(":")[2] == v]
    previous = {}
    if os.path.exists(out):
        with _open(out, "rt") as f:
            previous = {key(m): m for m in json.load(f)["models"]}
    if args.missing:
        names = [n for n in names if n not in previous
                 or args.retorch and _torch_of(previous[n]) not in (None, torch_version)]
    if args.limit:
        names = names[: args.limit]

    results = dict(previous)
    done = 0
    t0 = time.perf_counter()
    with ThreadPoolExecutor(args.jobs) as pool:
        for record in pool.map(lambda n: run_one(args.lib, n, args.timeout, args.lines), names):
            results[key(record)] = record
            done += 1
            breaks = sum(len(record.get(m, {}).get("events", [])) for m in ("eval", "train"))
            print(f"[{done}/{len(names)}] {key(record)}: {record['status']} {breaks or ''}", flush=True)
            if done % 20 == 0:
                _write(out, args.lib, version, torch_version, results)
    _write(out, args.lib, version, torch_version, results)
    ok = sum(1 for r in results.values() if r["status"] == "ok")
    print(f"{out}: {ok} of {len(results)} models ran ({time.perf_counter() - t0:.0f} s)")


def _torch_of(record):
    """`2.13` for a record made on torch 2.13.0+cpu; None for an old record that does not say."""
    made = record.get("torch")
    return ".".join(made.split("+")[0].split(".")[:2]) if made else None


def _write(path, lib, version, torch_version, results):
    doc = {"lib": lib, "version": version, "torch": torch_version,
           "models": [results[k] for k in sorted(results)]}
    tmp = path + ".tmp"
    with _open(tmp, "wt", gz=path.endswith(".gz")) as f:
        json.dump(doc, f, indent=None if path.endswith(".gz") else 1, sort_keys=True)
        f.write("\n")
    os.replace(tmp, path)


def _open(path, mode, gz=None):
    """A JSON file, gzip-compressed when its name ends in .gz (the executed-lines files are big)."""
    if gz if gz is not None else path.endswith(".gz"):
        return gzip.open(path, mode, encoding="utf-8")
    return open(path, mode, encoding="utf-8")


if __name__ == "__main__":
    main()
