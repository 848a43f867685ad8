"""`compilelint verify` on real models of the truth corpus: is each finding confirmed by Dynamo?

    python bench/verify/real_models.py --models bart,xlm --device cuda -j 8 --out DIR [--tag T]

Each model of bench/truth/ (built small, seeded, no downloads, by bench/truth/models.py through
bench/fix/truth_models.py, a `verify --example` factory) is verified in eval and in train mode:
`compilelint verify <lib> --entry <defining file>:<Class> --mode M --example ...` with the
installed library's own files, one verify process per model and mode. The findings' statuses
(confirmed, not-reproduced, not-reached, error, static-only, missed: breaks no rule predicted) are
counted per model and per rule, and written to DIR/real-models-<tag>.{json,md}.
"""
import argparse
import collections
import concurrent.futures
import glob
import json
import os
import subprocess
import sys

import torch

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
FACTORY = os.path.join(ROOT, "bench", "fix", "truth_models.py") + ":targets"
STATUSES = ("confirmed", "not-reproduced", "not-reached", "error", "static-only", "missed")


def truth_models(lib: str) -> dict:
    """{name: model row} of the newest truth file of `lib` (its file and class give the entry)."""
    path = sorted(glob.glob(os.path.join(ROOT, "bench", "truth", f"{lib}-*-torch*.json")))[-1]
    return {m["name"]: m for m in json.load(open(path))["models"] if m["status"] == "ok"}


def lib_dir(lib: str) -> str:
    code = f"import {lib}, os; print(os.path.dirname({lib}.__file__))"
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.strip()


def verify(model: dict, mode: str, args, site: str) -> dict:
    out = os.path.join(args.out, "runs", f"{model['name']}-{mode}.json")
    entry = os.path.join(site, model["file"]) + ":" + model["class"]
    cmd = [sys.executable, "-m", "compilelint", "verify", os.path.join(site, model["lib"]), "--entry", entry,
           "--mode", mode, "--example", FACTORY, "--device", args.device, "--torch-version", args.torch_version,
           "--timeout", str(args.timeout), "-j", "1", "--output-format", "json", "-o", out]
    env = dict(os.environ, TRUTH_LIB=model["lib"], TRUTH_NAME=model["name"], TRUTH_MODE=mode, OMP_NUM_THREADS="1",
               HF_HUB_OFFLINE="1", TRANSFORMERS_VERBOSITY="error", TOKENIZERS_PARALLELISM="false")
    proc = subprocess.run(cmd, capture_output=True, text=True, env=env, cwd=ROOT)
    if not os.path.exists(out):
        return {"model": model["name"], "mode": mode, "error": (proc.stderr or proc.stdout).strip()[-300:], "findings": []}
    rows = [{"code": f["code"], "row": f["location"]["row"], "file": os.path.relpath(f["filename"], site),
             "status": f["verification"]["status"], "gb_type": f["verification"].get("gb_type", ""),
             "observed": f["verification"].get("observed", "")} for f in json.load(open(out))]
    return {"model": model["name"], "mode": mode, "error": "", "findings": rows}


def render(results: list, args) -> str:
    by_status = collections.Counter(f["status"] for r in results for f in r["findings"])
    by_rule = collections.defaultdict(collections.Counter)
    for r in results:
        for f in r["findings"]:
            by_rule[f["code"]][f["status"]] += 1
    lines = [f"# verify on real models ({args.tag}: torch {torch.__version__}, device {args.device})", "",
             "`python bench/verify/real_models.py` (see its docstring). Findings of `verify --mode M` per model "
             "and mode.", "",
             "| model | mode | " + " | ".join(STATUSES) + " | run failed |", "|---|---|" + "--:|" * len(STATUSES) + "---|"]
    for r in results:
        c = collections.Counter(f["status"] for f in r["findings"])
        lines.append(f"| {r['model']} | {r['mode']} | " + " | ".join(str(c[s]) for s in STATUSES)
                     + f" | {r['error'][:80]} |")
    lines.append("| **all** | | " + " | ".join(f"**{by_status[s]}**" for s in STATUSES) + " | |")
    lines += ["", "## Per rule", "", "| rule | " + " | ".join(STATUSES) + " |", "|---|" + "--:|" * len(STATUSES)]
    for code in sorted(by_rule):
        lines.append(f"| {code} | " + " | ".join(str(by_rule[code][s]) for s in STATUSES) + " |")
    lines += ["", "## Not reproduced (the line ran, the predicted event did not come)", ""]
    for r in results:
        for f in r["findings"]:
            if f["status"] == "not-reproduced":
                lines.append(f"- {r['model']} {r['mode']}: `{f['file']}:{f['row']}` {f['code']}")
    return "\n".join(lines) + "\n"


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--lib", default="transformers")
    ap.add_argument("--models", required=True, help="comma-separated truth-corpus names")
    ap.add_argument("--modes", default="eval,train")
    ap.add_argument("--device", default="cpu")
    ap.add_argument("--torch-version", default=".".join(torch.__version__.split(".")[:2]))
    ap.add_argument("--timeout", type=float, default=300.0)
    ap.add_argument("-j", "--jobs", type=int, default=2)
    ap.add_argument("--out", default=os.path.join(HERE, "out"))
    ap.add_argument("--tag", default="real-models")
    args = ap.parse_args(argv)
    os.makedirs(os.path.join(args.out, "runs"), exist_ok=True)
    site = os.path.dirname(lib_dir(args.lib))
    known = truth_models(args.lib)
    chosen = [known[n] for n in args.models.split(",")]
    # one check first fills the result cache the parallel verify processes then read
    subprocess.run([sys.executable, "-m", "compilelint", "check", os.path.join(site, args.lib), "--exit-zero",
                    "--output-format", "concise", "-o", os.devnull], cwd=ROOT, check=False)
    jobs = [(m, mode) for m in chosen for mode in args.modes.split(",")]
    with concurrent.futures.ThreadPoolExecutor(args.jobs) as pool:
        results = list(pool.map(lambda job: verify(job[0], job[1], args, site), jobs))
    json.dump(results, open(os.path.join(args.out, f"{args.tag}.json"), "w"), indent=1)
    text = render(results, args)
    open(os.path.join(args.out, f"{args.tag}.md"), "w").write(text)
    print(text)


if __name__ == "__main__":
    main()
