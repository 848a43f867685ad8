"""Compiled latency before -> after the fixes, per breaking model (issue 30), on the device.

The models: those of `truth-gpu.json` (bench/fix/truth.py on the GPU) whose eval breaks the fixes
and settings changed, built at a moderate size (`TRUTH_SIZE=moderate` in bench/truth/models.py:
hidden 512, 4 layers, batch 8 x 128). For each, ONE child (compilelint.verify.cost_child, as
`verify --cost` runs it) imports the original library and the fixed copy side by side and times
them interleaved (compilelint/verify/timing.py: one call of each per round, rotated order, CUDA
events, until every median is stable), in eval mode:

    eager, compiled, fixed (+ the settings truth.py kept for the model),
    compiled RO, fixed RO (the same under mode="reduce-overhead": CUDA graphs)

inductor, every compiled version's outputs compared with the original's eager outputs. A model
whose run left the config deepcopy (CL207: a call-site break that hides the rest of its frame)
is called with `use_cache=False` on every side, as `generate()` builds its cache outside.

`--moe` times the dense expert loop against the data-dependent dispatch at several expert counts:
bench/cost/models.py's MoE and Top2MoE (4096 tokens, hidden 512, ffn 2048, 2 layers), or library
models named by `--moe-models` at the moderate size (`TRUTH_EXPERTS`).

    python bench/fix/latency.py --device cuda --out DIR            # every model; fixes written here
    python bench/fix/latency.py --copy BASE --only xlm,rwkv        # a copy truth.py fixed (--reuse-copy's layout)
    python bench/fix/latency.py --moe --experts 8,64,128
    python bench/fix/latency.py --write-overlay DIR                # fix here, keep the written files
    python bench/fix/latency.py --merge A.json B.json --tag latency  # runs of other modes joined

Compiling is the slow part: `-j N` runs N children at once, each compiling on the CPU, and they
take turns to time (the child holds a lock while it times), so no two timings share the GPU;
`--control NAME` times that model once more at the end, alone, to show what the compiling
neighbours did to its numbers. Writes <tag>.json and <tag>.md after every model.
"""
from __future__ import annotations

import argparse
import json
import math
import os
import shutil
import subprocess
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)
sys.path.insert(0, ROOT)

from truth import breaking_models, check_fix, lib_dir, reused  # noqa: E402

from compilelint.verify.cost import Version, _time_target, comparison, kept  # noqa: E402
from compilelint.verify.code_copy import Copy, make_copy  # noqa: E402

TRUTH_FACTORY = os.path.join(HERE, "truth_models.py") + ":targets"
COST_MODELS = os.path.join(ROOT, "bench", "cost", "models.py")
RO = "reduce-overhead"
PAIRS = {"default": ("compiled", "fixed"), RO: ("compiled RO", "fixed RO")}


def breaking(result: dict) -> list:
    """The models whose eval breaks the fixes + settings changed, with what truth.py kept."""
    out = []
    for m in result["models"]:
        if not m.get("ran") or m.get("clean"):
            continue
        before, after = m["before"]["eval"]["breaks"], m["settings"]["eval"]["breaks"]
        if before != after:
            out.append({"lib": m["lib"], "name": m["name"], "knobs": list(m["settings"]["knobs"]),
                        "call": {"use_cache": False} if m.get("use_cache_false") else {},
                        "truth_breaks": [before, after]})
    return out


def named(base: str, mode: str) -> str:
    """A version's name in a mode: "fixed", "fixed RO"."""
    return base if mode == "default" else f"{base} RO"


def versions(copy: Copy, knobs, modes) -> list:
    """The original's versions first, then the copy's. With settings, what verify would keep needs
    the fixes alone and each setting alone too (`after`). One child per mode (`--modes`) is safest:
    on xlm and flaubert a third import of the original library in one process failed
    (`get_seq_length` saw a cache layer of another import's class)."""
    out = [Version("eager", compile=False)]
    for m in modes:
        mode = None if m == "default" else m
        out.append(Version(named("compiled", m), mode=mode))
        out += [Version(named(f"setting {k}", m), knobs=(k,), mode=mode) for k in knobs]
    for m in modes:
        mode = None if m == "default" else m
        out.append(Version(named("fixed", m), copy, knobs=tuple(knobs), mode=mode))
        if knobs:
            out.append(Version(named("fixes", m), copy, mode=mode))
    return out


def after(r: dict, mode: str) -> dict:
    """What verify keeps for this model in this mode (compilelint.verify.cost.kept): the fixes with
    every setting, else the faster of the fixes alone and each setting alone, whichever computes
    what the code as it is computes and is not slower beyond the spread; else nothing, and the
    code as it is stays (speed-up 1). A row timed before the fixes alone and the settings alone
    were has only the first: nothing else can be kept there."""
    knobs = r.get("knobs") or []
    alone = ([named("fixes", mode)] if knobs else []) + [named(f"setting {k}", mode) for k in knobs]
    return kept({"versions": r["versions"]}, named("compiled", mode), [named("fixed", mode)], alone)


def env_for(job: dict) -> dict:
    return {"HF_HUB_OFFLINE": "1", "TRANSFORMERS_VERBOSITY": "error", "TOKENIZERS_PARALLELISM": "false",
            "TRUTH_MODELS_AUDIO": "1", **job.get("env", {})}


def time_job(job: dict, copy: Copy, *, device: str, timeout: float, budget_s: float, lock: str = "",
             modes=tuple(PAIRS)) -> dict:
    """One model: its five versions in one child; the factory reads which model from its environment."""
    forget = sorted({p for pair in copy.roots.items() for p in pair})
    started = time.time()
    t = _time_target(0, versions(copy, job["knobs"], modes), example=job["example"], device=device, backend="inductor",
                     compile_mode=None, forget=forget, timeout=timeout, memory_limit_mb=None, budget_s=budget_s,
                     min_s=1.0, min_rounds=20, max_rounds=2000, env_extra=env_for(job), timing_lock=lock)
    t["wall_s"] = round(time.time() - started, 1)
    return t


def row(job: dict, t: dict) -> dict:
    """What the report needs of one timed model: every version, the fixes + settings against the
    code as it is (`compare`, as measured) and what verify would keep (`after`)."""
    out = {k: job[k] for k in ("label", "knobs", "call") if k in job}
    out.update(error=t.get("error", ""), wall_s=t.get("wall_s"), rounds=t.get("rounds"), stable=t.get("stable"),
               versions={n: {k: v.get(k) for k in ("latency", "compile_s", "frames", "breaks", "recompiles", "outputs",
                                                   "error")} for n, v in t.get("versions", {}).items()})
    out["compare"] = {mode: comparison(t, a, b) for mode, (a, b) in PAIRS.items()}
    out["compare"]["compiled_vs_eager"] = comparison(t, "eager", "compiled")
    out["after"] = {mode: after(out, mode) for mode in PAIRS}
    return out


def ms(s) -> str:
    return f"{s * 1e3:.3g}" if s is not None else "-"


def lat(v: dict) -> str:
    x = (v or {}).get("latency")
    return f"{ms(x['median'])} ({ms(x['q1'])}–{ms(x['q3'])})" if x else "-"


def outputs(v: dict) -> str:
    o = (v or {}).get("outputs")
    if (v or {}).get("error"):
        return "error: " + v["error"][:60]
    if not o:
        return "-"
    if o["equal"] == "allclose":
        return f"allclose (max abs {o['max_abs']:.2g})"
    return o["equal"] if o["equal"] == "bitwise" else f"{o['equal']} ({o.get('what', '')[:50]})"


def speedup(c) -> str:
    if not c:
        return "-"
    mark = {"faster": "", "slower": " **slower**", "no measurable difference": " (IQRs overlap)"}[c["verdict"]]
    return f"{c['speedup']:.2f}x{mark}"


def geomean(xs) -> float:
    return math.exp(sum(math.log(x) for x in xs) / len(xs)) if xs else float("nan")


def kept_name(k: dict, knobs) -> str:
    """The version verify keeps, as the table says it."""
    name = k["version"]
    if name is None:
        return "nothing"
    name = name.removesuffix(" RO")
    return {"fixed": "fixes + settings" if knobs else "fixes", "fixes": "fixes alone"}.get(name, name)


def markdown(doc: dict) -> str:
    """The table: per model and mode, the code as it is against what verify keeps (`after`); a
    model where nothing qualifies keeps the code as it is, speed-up 1, and counts so in the mean."""
    lines = [f"Device: {doc.get('device_name', '?')}, torch {doc.get('torch', '?')}; {doc['method']}", "",
             "After: what verify keeps per model and mode (the fixes with every setting, else the faster of the fixes "
             "alone and each setting alone: the first that computes what the code as it is computes and is not "
             "slower beyond the spread; else nothing, speed-up 1).", "",
             "| model | breaks (compiled → after) | eager ms | compiled ms (IQR) | after ms (IQR) | speed-up | after is "
             "| compiled RO ms (IQR) | after RO ms (IQR) | speed-up RO | after RO is | outputs after / after RO "
             "| settings, call |",
             "|---|--:|--:|--:|--:|--:|---|--:|--:|--:|---|---|---|"]
    ups = {m: [] for m in PAIRS}
    rejected = []
    for r in doc["rows"]:
        v = r["versions"]
        if r["error"] and not any(v.get(c) for c, _ in PAIRS.values()):
            lines.append(f"| {r['label']} | | | | | | | | | | | error: {r['error'][:80]} | |")
            continue
        cells = {}
        for mode, (compiled, _) in PAIRS.items():
            k = after(r, mode)
            if not (v.get(compiled) or {}).get("latency"):
                cells[mode] = ("-", "-", "-", "-", "-")
                continue
            kept_v = v.get(k["version"]) if k["version"] else v[compiled]
            ups[mode].append(k["compare"]["speedup"] if k["compare"] else 1.0)
            cells[mode] = (lat(kept_v), speedup(k["compare"]) if k["compare"] else "1.00x (nothing kept)",
                           kept_name(k, r.get("knobs")), outputs(kept_v), kept_v.get("breaks", "-"))
            rejected += [f"{r['label']} {name}: {why}" for name, why in k["rejected"].items() if why != "not timed"]
        a = "compiled" if "compiled" in v else "compiled RO"
        b = cells["default"][4] if a == "compiled" else cells[RO][4]
        extra = ", ".join(r.get("knobs", []) + [f"{k_}={v_}" for k_, v_ in r.get("call", {}).items()]) or "-"
        d, o = cells["default"], cells[RO]
        lines.append(f"| {r['label']} | {(v.get(a) or {}).get('breaks', '-')} → {b} | "
                     f"{lat(v.get('eager')).split(' ')[0]} | {lat(v.get('compiled'))} | {d[0]} | {d[1]} | {d[2]} | "
                     f"{lat(v.get('compiled RO'))} | {o[0]} | {o[1]} | {o[2]} | {d[3]} / {o[3]} | {extra} |")
    lines += ["", "Geometric mean of the speed-ups (a model that keeps nothing counts 1): " + "; ".join(
        f"**{geomean(ups[m]):.2f}x** {m} mode over {len(ups[m])} models" for m in PAIRS if ups[m]) + "."]
    lines.append(f"Not kept: {'; '.join(rejected) or 'none'}.")
    errors = [f"{r['label']} {n}: {v['error'][:120]}" for r in doc["rows"] for n, v in r["versions"].items()
              if v.get("error")]
    lines += [f"Versions that did not run: {'; '.join(errors) or 'none'}."]
    slower = [r["label"] for r in doc["rows"] for m in PAIRS
              if ((after(r, m)["compare"]) or {}).get("verdict") == "slower"]
    lines.append(f"Slower beyond the spread (IQRs apart): {', '.join(slower) or 'none'}.")
    return "\n".join(lines) + "\n"


def moe_jobs(experts, truth_names, size: str) -> list:
    jobs = []
    for n in experts:
        for cls in ("MoE", "Top2MoE"):
            jobs.append({"label": f"{cls} ({n} experts)", "example": f"{COST_MODELS}:targets", "knobs": [], "call": {},
                         "kind": "cost", "env": {"COST_ONLY": cls, "COST_EXPERTS": str(n),
                                                 "COST_SIZE": "gpu" if size == "moderate" else "small"}})
        for name in truth_names:
            jobs.append({"label": f"{name} ({n} experts)", "example": TRUTH_FACTORY, "knobs": [],
                         "call": {"use_cache": False}, "kind": "truth",
                         "env": {"TRUTH_LIB": "transformers", "TRUTH_NAME": name, "TRUTH_SIZE": size,
                                 "TRUTH_EXPERTS": str(n), "TRUTH_KWARGS": json.dumps({"use_cache": False})}})
    return jobs


def fixed_copy(opts, jobs) -> Copy:
    """The fixed code: a copy truth.py fixed (`--copy`), or one fixed here as truth.py does."""
    if any(j["kind"] == "cost" for j in jobs):  # bench/cost/models.py, fixed in a copy of its folder
        copy = make_copy([COST_MODELS])
        res = subprocess.run([sys.executable, "-m", "compilelint", "check", copy.to_copy(COST_MODELS), "--fix",
                              "--unsafe-fixes", "--no-cache", "--exit-zero", "-q", "--isolated"],
                             capture_output=True, text=True)
        if res.returncode:
            sys.exit(f"compilelint check --fix failed: {res.stderr.strip()[-300:]}")
        if not any(j["kind"] == "truth" for j in jobs):
            return copy
        copy.remove()
        sys.exit("--moe with bench/cost models and library models: run them as two invocations")
    # transformers (the overlay's library) and each model's own: a model whose only change is a
    # setting still needs its library in the copy, or its fixed version would import the original
    dirs = {lib: lib_dir(lib) for lib in ["transformers"] + sorted({j["env"]["TRUTH_LIB"] for j in jobs} - {"transformers"})}
    if opts.copy:
        return reused(opts.copy, dirs)
    copy = make_copy(list(dirs.values()))
    if opts.overlay:  # the files a `check --fix` elsewhere wrote, laid out as under site-packages
        # each library's files over that library's copy (the copies of several lie in folders apart)
        root_of = {os.path.basename(c): c for c in copy.roots.values()}
        for folder, _, files in os.walk(opts.overlay):
            for name in files:
                rel = os.path.relpath(os.path.join(folder, name), opts.overlay)
                lib, _, inside = rel.partition(os.sep)
                shutil.copy(os.path.join(opts.overlay, rel), os.path.join(root_of[lib], inside))
        return copy
    res = check_fix(copy, [m for m in breaking_models(["transformers"]) if m["run"]], dirs)
    if res.returncode:
        copy.remove()
        sys.exit(f"compilelint check --fix failed: {(res.stderr.strip().splitlines() or ['?'])[-1][:300]}")
    return copy


def write_overlay(folder: str) -> int:
    """Fix a copy of the installed transformers as truth.py does and keep only the files it wrote,
    laid out as under site-packages (`--overlay` lays them over a copy on the device)."""
    from run import digest

    dirs = {"transformers": lib_dir("transformers")}
    copy = make_copy(list(dirs.values()))
    try:
        before = digest(copy.to_copy(dirs["transformers"]))
        res = check_fix(copy, [m for m in breaking_models(["transformers"]) if m["run"]], dirs)
        if res.returncode:
            sys.exit(f"compilelint check --fix failed: {(res.stderr.strip().splitlines() or ['?'])[-1][:300]}")
        parent = os.path.dirname(next(iter(copy.roots.values())))
        for path, h in digest(copy.to_copy(dirs["transformers"])).items():
            if before.get(path) != h:
                dest = os.path.join(folder, os.path.relpath(path, parent))
                os.makedirs(os.path.dirname(dest), exist_ok=True)
                shutil.copy(path, dest)
                print(os.path.relpath(path, parent))
    finally:
        copy.remove()
    return 0


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--device", default="cuda")
    ap.add_argument("--out", default=HERE)
    ap.add_argument("--tag", default="")
    ap.add_argument("--truth", default=os.path.join(HERE, "truth-gpu.json"), help="truth.py's GPU result")
    ap.add_argument("--only", default="", help="comma-separated model names")
    ap.add_argument("--copy", default="", help="a copy truth.py fixed (--reuse-copy's layout): skip the fixing")
    ap.add_argument("--overlay", default="", help="fixed files (transformers/models/...) to lay over a copy")
    ap.add_argument("--moe", action="store_true", help="the expert-count scan instead")
    ap.add_argument("--experts", default="8,64,128")
    ap.add_argument("--moe-models", default="cost", help="'cost' (bench/cost MoE, Top2MoE) or model names")
    ap.add_argument("-j", "--jobs", type=int, default=1, help="children compiling at once (they time in turn)")
    ap.add_argument("--control", default="", help="a model timed again at the end, alone")
    ap.add_argument("--timeout", type=float, default=300, help="seconds per version's compile")
    ap.add_argument("--budget", type=float, default=10, help="seconds of timing per model at most")
    ap.add_argument("--modes", default=",".join(PAIRS), help="compile modes to time: default, reduce-overhead")
    ap.add_argument("--lock", default="", help="the timing lock (share one between runs on one GPU)")
    ap.add_argument("--size", default="moderate", help="bench/truth/models.py's TRUTH_SIZE (tiny: a CPU check)")
    ap.add_argument("--merge", nargs="*", default=None, help="one report from several runs' JSON (rows by label)")
    ap.add_argument("--write-overlay", default="", help="only fix a copy here and keep the files written there")
    opts = ap.parse_args()
    if opts.write_overlay:
        return write_overlay(opts.write_overlay)
    if opts.merge:
        return merge(opts.merge, os.path.join(opts.out, opts.tag or "latency"))
    if opts.moe:
        names = [] if opts.moe_models == "cost" else opts.moe_models.split(",")
        jobs = moe_jobs([int(n) for n in opts.experts.split(",")], names, opts.size)
        tag = opts.tag or "latency-moe"
    else:
        with open(opts.truth, encoding="utf-8") as f:
            models = breaking(json.load(f))
        models = [m for m in models if not opts.only or m["name"] in opts.only.split(",")]
        jobs = [{"label": m["name"], "example": TRUTH_FACTORY, "knobs": m["knobs"], "call": m["call"], "kind": "truth",
                 "truth_breaks": m["truth_breaks"],
                 "env": {"TRUTH_LIB": m["lib"], "TRUTH_NAME": m["name"], "TRUTH_SIZE": opts.size,
                         "TRUTH_KWARGS": json.dumps(m["call"])}} for m in models]
        tag = opts.tag or "latency"
    copy = fixed_copy(opts, jobs)
    stem = os.path.join(opts.out, tag)
    doc = {"rows": [], "method": "eval, torch.no_grad(), inductor; median of interleaved calls (CUDA events on a GPU), "
                                 "IQR in brackets; speed-up = compiled / fixed medians"}
    lock = opts.lock or stem + ".lock"
    modes = [m for m in opts.modes.split(",") if m]
    done = threading.Lock()
    order = {j["label"]: i for i, j in enumerate(jobs)}

    def one(job):
        t = time_job(job, copy, device=opts.device, timeout=opts.timeout, budget_s=opts.budget, lock=lock,
                     modes=modes)
        with done:
            doc.update({k: t[k] for k in ("torch", "device_name") if t.get(k)})
            doc["rows"].append(row(job, t))
            doc["rows"].sort(key=lambda r: order.get(r["label"], len(order)))  # the jobs' order, whatever ends first
            print(f"{job['label']}: {t['wall_s']} s, {t.get('error') or 'ok'}", flush=True)
            save(doc, stem)

    try:
        with ThreadPoolExecutor(opts.jobs) as pool:
            list(pool.map(one, jobs))
        for job in [j for j in jobs if j["label"] == opts.control]:
            one(dict(job, label=job["label"] + " (again, alone)"))
    finally:
        if not opts.copy:  # a copy named by --copy is the caller's
            copy.remove()
        if not opts.lock and os.path.exists(lock):
            os.unlink(lock)
    print(markdown(doc))
    return 0


def merge(paths, stem: str) -> int:
    """Runs of other modes (or models) of the same models joined: each row's versions and
    comparisons together; a run names its device in `device_runs`."""
    doc, rows = None, {}
    for path in paths:
        with open(path, encoding="utf-8") as f:
            part = json.load(f)
        doc = doc or dict(part, rows=[], device_runs=[])
        doc["device_runs"].append({"file": os.path.basename(path), "device_name": part.get("device_name"),
                                   "torch": part.get("torch")})
        for r in part["rows"]:
            have = rows.setdefault(r["label"], dict(r, versions={}, compare={}))
            have["versions"].update(r["versions"])
            have["compare"].update({k: c for k, c in r["compare"].items() if c is not None})
    doc["rows"] = list(rows.values())
    save(doc, stem)
    print(markdown(doc))
    return 0


def save(doc: dict, stem: str) -> None:
    with open(stem + ".json", "w", encoding="utf-8") as f:
        json.dump(doc, f, indent=1)
    with open(stem + ".md", "w", encoding="utf-8") as f:
        f.write(markdown(doc))


if __name__ == "__main__":
    sys.exit(main())
