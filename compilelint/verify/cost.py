"""`compilelint verify --cost`: what each break costs in time, measured.

For every target of an `--example` factory, on the device verify runs on, one child
(`cost_child.py`) times these versions interleaved, in eval mode:

- `eager`     the code as it is, not compiled;
- `compiled`  the code as it is, under `torch.compile` (the backend, inductor by default, and mode);
- `fixed`     the code with every proven fix (`verify --fix`'s verdicts, fixproof.py) and the
              settings `--try-settings` suggests on top of them (knobs.py), compiled;
- `fixes`, `settings`  the proven fixes alone, and the code as it is with the settings alone,
              compiled (when there are both);
- `fix N`     the code with one proven fix alone, compiled, for each fix the target reaches.

What verify keeps on a target (`kept`): `fixed`, else the faster of `fixes` and `settings`, whichever
computes what the code as it is computes and is not slower beyond the spread; else nothing.
Each fix's saving is `compiled` − `fix N` (medians); it counts only when measurable (timing.py:
the interquartile ranges do not overlap), and the fixes are ranked by it, with the suggested
settings as one more row (the code as it is with the settings alone). Each target's top change is then timed again
alone against `compiled` in a fresh process: the second run confirms it or not.
The parent never imports torch.
"""
from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from typing import Callable, Dict, List, Optional, Sequence, Tuple

from compilelint.finding import Finding, Report
from compilelint.verify import match as M
from compilelint.verify import proc
from compilelint.verify.code_copy import Copy, import_root, make_copy
from compilelint.verify.knobs import run_kwargs, spelled
from compilelint.verify.runner import _env, run_child
from compilelint.verify.timing import FASTER, SAME, SLOWER, compare, summarize


@dataclass
class Version:
    name: str
    copy: Optional[Copy] = None  # None: the user's own files
    compile: bool = True
    knobs: Tuple[str, ...] = ()
    mode: Optional[str] = None  # torch.compile's mode for this version alone (None: the run's)


@dataclass
class Group:
    """One proven fix; findings that carry the same edit (both breaks of an expert loop) share it."""

    number: int
    findings: List[Finding]
    targets: List[int]  # the targets whose runs reached it
    breaks: int = 0  # breaks it removed in verify --fix's runs


@dataclass
class Cost:
    targets: List[dict] = field(default_factory=list)
    groups: List[Group] = field(default_factory=list)
    proof: object = None  # fixproof.Proof
    knobs: Tuple[str, ...] = ()
    confirmations: List[dict] = field(default_factory=list)  # per target: its top fix, timed again
    device: str = ""
    device_name: str = ""
    torch: str = ""
    error: str = ""


def measure_cost(report: Report, paths: Sequence[str], *, example: str, device: str, backend: str = "inductor",
                 compile_mode: Optional[str] = None, unsafe: bool = False, timeout: float = 300.0,
                 budget_s: float = 20.0, min_s: float = 1.0, min_rounds: int = 20, max_rounds: int = 2000,
                 memory_limit_mb: Optional[int] = None,
                 progress: Optional[Callable[[int, int, str], None]] = None) -> Cost:
    from compilelint.fix_files import applicable
    from compilelint.verify.fix_apply import FixedCopy
    from compilelint.verify.fix_judge import fix_key
    from compilelint.verify.fixproof import prove_fixes
    from compilelint.verify.knobs import try_settings

    cost = Cost()
    # Which fixes are proven: verify --fix's judgement, in eval mode (the mode timed here; Dynamo
    # decides breaks, so the backend that counts them is the fast one).
    cost.proof = prove_fixes(report, paths, example=example, unsafe=unsafe, device=device, backend="eager",
                             timeout=timeout, memory_limit_mb=memory_limit_mb, modes=("eval",), progress=progress)
    proven = [r for r in cost.proof.results if r.status == "proven"]
    groups: Dict[tuple, Group] = {}
    for r in proven:
        g = groups.setdefault(fix_key(r.finding), Group(len(groups) + 1, [], []))
        g.findings.append(r.finding)
        g.breaks = max(g.breaks, r.before - r.after)
        for label, _ in r.outputs:
            m = re.match(r"#(\d+)", label)
            if m and int(m.group(1)) not in g.targets:
                g.targets.append(int(m.group(1)))
    cost.groups = list(groups.values())

    fixable = [f for f in report.findings if applicable(f.fix, unsafe)]
    # A file example is copied too, so that it imports the fixed code: its folder comes first on
    # the child's sys.path.
    roots = sorted({os.path.dirname(M.norm(f.path)) for f in fixable} | set(paths) | set(_example_dir(example)))
    copies: List[Copy] = []

    def copy_with(findings) -> Copy:
        c = make_copy(roots)
        copies.append(c)
        FixedCopy(c).hold(findings)
        return c

    try:
        all_fixed = copy_with([f for g in cost.groups for f in g.findings]) if cost.groups else None
        search = try_settings(example, sorted({f.code for f in report.findings}), device=device, backend="eager",
                              timeout=timeout, memory_limit_mb=memory_limit_mb, copy=all_fixed, progress=progress)
        cost.knobs = tuple(search.suggested.knobs) if search.suggested is not None else ()
        base = [Version("eager", compile=False), Version("compiled")]
        if cost.groups or cost.knobs:
            base.append(Version("fixed", all_fixed, knobs=cost.knobs))
        if cost.knobs and cost.groups:  # what is kept when both together are slower (kept())
            base += [Version("fixes", all_fixed), Version("settings", knobs=cost.knobs)]
        alone = {g.number: Version(f"fix {g.number}", copy_with(g.findings)) for g in cost.groups}
        if cost.knobs:  # ranked beside the fixes; without fixes, `fixed` is the settings alone
            alone[SETTINGS] = Version("settings" if cost.groups else "fixed", knobs=cost.knobs)
        forget = sorted({p for c in copies for pair in c.roots.items() for p in pair} |
                        {import_root(p) for p in roots})
        common = dict(example=example, device=device, backend=backend, compile_mode=compile_mode, forget=forget,
                      timeout=timeout, memory_limit_mb=memory_limit_mb, budget_s=budget_s, min_s=min_s,
                      min_rounds=min_rounds, max_rounds=max_rounds)

        def versions_for(index: int) -> List[Version]:
            return base + [alone[g.number] for g in cost.groups if index in g.targets]

        first = _time_target(0, versions_for(0), **common)
        count = first.pop("count", None)
        cost.targets.append(first)
        for i in range(1, count or 0):
            if progress:
                progress(i + 1, count, f"timing #{i}")
            cost.targets.append(_time_target(i, versions_for(i), **common))
        if not count:
            cost.error = first.get("error") or "the example factory did not run"
        cost.torch = first.get("torch", "")
        cost.device = first.get("device", device)
        cost.device_name = first.get("device_name", "")
        # Each target's top fix is timed again, alone against the code as it is, in a fresh process.
        for t in cost.targets:
            top = _top_on(cost, t)
            if top is not None:
                again = _time_target(t["index"], [base[1], alone[top["fix"]]], **common)
                cost.confirmations.append(_confirmation(top, again, alone[top["fix"]].name))
        return cost
    finally:
        for c in copies:
            c.remove()


def _example_dir(example: str) -> List[str]:
    mod = example.rpartition(":")[0]
    return [os.path.dirname(os.path.abspath(mod))] if mod.endswith(".py") or os.sep in mod else []


def _time_target(index: int, versions: List[Version], *, example: str, device: str, backend: str,
                 compile_mode: Optional[str], forget: List[str], timeout: float, memory_limit_mb: Optional[int],
                 budget_s: float, min_s: float, min_rounds: int, max_rounds: int,
                 env_extra: Optional[Dict[str, str]] = None, timing_lock: str = "") -> dict:
    """Run the child for one target; its record: versions with their summaries, or an error.
    `env_extra`: more environment for the child; `timing_lock`: a file the child locks while it
    times, so that children compiling side by side never time on the device at once."""
    mem = memory_limit_mb or proc.default_memory_limit_mb()
    variants = []
    for v in versions:
        ex = v.copy.example(example) if v.copy is not None else example
        variants.append({"name": v.name, "example": ex, "compile": v.compile,
                         "pythonpath": v.copy.pythonpath if v.copy is not None else [], **run_kwargs(v.knobs),
                         **({"compile_mode": v.mode} if v.mode else {})})
    spec = {"example": example, "index": index, "device": device, "backend": backend, "compile_mode": compile_mode,
            "seed": 0, "roots": forget, "variants": variants, "min_rounds": min_rounds, "max_rounds": max_rounds,
            "min_s": min_s, "budget_s": budget_s, "timing_lock": timing_lock}
    # Compiling every version takes time: the limit is per version, plus the timing budget.
    limit = timeout * len(versions) + budget_s * 2
    res, records = run_child("compilelint.verify.cost_child", spec, prefix="compilelint-cost-",
                             env=dict(_env(), **(env_extra or {})), timeout=limit, memory_limit_mb=mem,
                             started_on_output=True)
    target = {"index": index, "label": f"#{index}", "versions": {}, "error": ""}
    for r in records:
        t = r.get("type")
        if t == "start":
            target.update(torch=r.get("torch", ""), device=r.get("device", ""), device_name=r.get("device_name", ""))
        elif t == "count":
            target["count"] = int(r["n"])
            labels = r.get("labels") or []
            target["label"] = labels[index] if index < len(labels) else target["label"]
        elif t == "variant":
            target["versions"][r["name"]] = {k: v for k, v in r.items() if k != "type"}
        elif t == "samples":
            for name, samples in r["samples"].items():
                if samples:
                    target["versions"][name]["latency"] = summarize(samples).as_dict()
            target.update(rounds=r["rounds"], stable=r["stable"], seconds=r["seconds"])
        elif t == "error" and not target["error"]:
            target["error"] = r["message"]
    if not any(r.get("type") == "done" for r in records) and not target["error"]:
        target["error"] = res.failure(limit, mem) or "stopped without reporting"
    return target


def _summary(target: dict, name: str):
    from compilelint.verify.timing import Summary

    lat = (target["versions"].get(name) or {}).get("latency")
    return Summary(**lat) if lat else None


def comparison(target: dict, before: str, after: str) -> Optional[dict]:
    """`before` → `after` on this target (timing.compare), or None when either was not timed."""
    a, b = _summary(target, before), _summary(target, after)
    return compare(a, b) if a is not None and b is not None else None


def outputs_changed(target: dict, compiled: str, name: str) -> str:
    """"outputs <verdict>" when version `name` computes something else than `compiled` (the code as
    it is) on this target: its outputs differ from the eager run's and `compiled`'s do not (a
    difference both have is the compiler's, not the change's); else ""."""
    from compilelint.verify.prove import EQUAL

    def equal(version: str) -> bool:
        return ((target["versions"].get(version) or {}).get("outputs") or {}).get("equal", "bitwise") in EQUAL

    if equal(compiled) and not equal(name):
        return f"outputs {target['versions'][name]['outputs']['equal']}"
    return ""


def kept(target: dict, compiled: str, preferred: Sequence[str], alone: Sequence[str] = ()) -> dict:
    """What verify keeps on this target against the code as it is (`compiled`): the first of
    `preferred` (the fixes with every setting) that qualifies, else the fastest of `alone` (the
    fixes alone, each setting alone) that does, else nothing. A version qualifies when it
    was timed without an error, computes what `compiled` computes (its outputs equal the eager
    run's, or `compiled`'s differ too: that difference is the compiler's, not the change's), and is
    not slower beyond the spread (timing.compare). Returns {"version": name or None, "compare":
    compiled → kept (None when nothing is kept), "rejected": {name: why}}."""
    rejected: Dict[str, str] = {}

    def why_not(name: str) -> str:
        v = target["versions"].get(name)
        if v is None:
            return "not timed"
        if v.get("error"):
            return f"error: {v['error'][:80]}"
        c = comparison(target, compiled, name)
        if c is None:
            return "not timed"
        if changed := outputs_changed(target, compiled, name):
            return changed
        if c["verdict"] == SLOWER:
            return f"slower ({c['speedup']:.2f}x)"
        return ""

    def pick(name: str) -> dict:
        return {"version": name, "compare": comparison(target, compiled, name), "rejected": rejected}

    for name in preferred:
        rejected[name] = why_not(name)
        if not rejected[name]:
            del rejected[name]
            return pick(name)
    fine = []
    for name in alone:
        rejected[name] = why_not(name)
        if not rejected[name]:
            del rejected[name]
            fine.append(name)
    if fine:
        best = max(fine, key=lambda n: comparison(target, compiled, n)["speedup"])
        rejected.update({n: f"{best} was faster" for n in fine if n != best})
        return pick(best)
    return {"version": None, "compare": None, "rejected": rejected}


# The suggested settings are ranked as one more change, numbered apart from the fixes (1, 2, ...).
SETTINGS = 0


def _changes(cost: Cost) -> List[Tuple[int, str]]:
    """(number, name of the version that holds it alone) of every ranked change: each proven fix,
    then the suggested settings."""
    out = [(g.number, f"fix {g.number}") for g in cost.groups]
    if cost.knobs:
        out.append((SETTINGS, "settings" if cost.groups else "fixed"))
    return out


def _ranked(cost: Cost) -> List[dict]:
    """One row per change (a proven fix, the settings): its best measurable saving over the targets
    that reached it; changes with none come last, in their order."""
    rows = []
    for number, version in _changes(cost):
        per = []
        for t in cost.targets:
            c = _judged(t, version)
            if c is not None:
                per.append(dict(c, target=t["index"], breaks_removed=_removed(t, version)))
        best = max((p for p in per if p["verdict"] == FASTER), key=lambda p: p["saving"], default=None)
        pick = best or (per[0] if per else {"verdict": "not timed", "saving": 0.0, "speedup": 1.0, "target": None})
        rows.append({"fix": number, "verdict": pick["verdict"], "saving": pick["saving"], "speedup": pick["speedup"],
                     "target": pick["target"], "targets": per, "breaks_removed": pick.get("breaks_removed", 0)})
    rows.sort(key=lambda r: (r["verdict"] != FASTER, -r["saving"] if r["verdict"] == FASTER else 0, r["fix"]))
    return rows


def _judged(target: dict, version: str) -> Optional[dict]:
    """compiled → `version` on this target (None: not timed); a version that computes something
    else (outputs_changed) wins nothing: its verdict says how its outputs differ."""
    c = comparison(target, "compiled", version)
    changed = outputs_changed(target, "compiled", version)
    return dict(c, verdict=changed, saving=0.0) if c is not None and changed else c


def _removed(target: dict, version: str) -> int:
    """Breaks the compiled code as it is has and `version` has not, on this target."""
    v = target["versions"]
    return max(0, (v.get("compiled") or {}).get("breaks", 0) - (v.get(version) or {}).get("breaks", 0))


def _top_on(cost: Cost, target: dict) -> Optional[dict]:
    """The change that saves most on this target, measurably; None when none does."""
    best = None
    for number, version in _changes(cost):
        c = _judged(target, version)
        if c is not None and c["verdict"] == FASTER and (best is None or c["saving"] > best["saving"]):
            best = dict(c, fix=number, target=target["index"])
    return best


def _confirmation(top: dict, again: dict, version: str) -> dict:
    c = comparison(again, "compiled", version)
    out = {"fix": top["fix"], "target": top["target"], "first_saving": top["saving"],
           "error": again.get("error", "")}
    if c is None:
        return dict(out, confirmed=False, verdict="not timed")
    return dict(out, confirmed=c["verdict"] == FASTER, verdict=c["verdict"], saving=c["saving"],
                speedup=c["speedup"], before=_summary(again, "compiled").as_dict(),
                after=_summary(again, version).as_dict())


# ---------------------------------------------------------------- one dict for every format


def _where(f: Finding, cwd: str) -> str:
    path = os.path.relpath(f.path, cwd) if os.path.isabs(f.path) else f.path
    return f"{path}:{f.span.row}:{f.span.col}"


def cost_dict(cost: Cost, *, backend: str, compile_mode: Optional[str], cwd: Optional[str] = None) -> dict:
    """Everything measured, as plain data: the JSON output, and what text, SARIF and HTML render."""
    cwd = cwd or os.getcwd()
    by_number = {g.number: g for g in cost.groups}
    ranking = []
    settings = "; ".join(spelled(k) for k in cost.knobs)
    for rank, row in enumerate(_ranked(cost), 1):
        if row["fix"] == SETTINGS:  # breaks removed: as timed; its "finding" says what it sets
            ranking.append(dict(row, rank=rank, findings=[{"where": settings, "code": "setting", "fix": settings,
                                                           "message": "the settings --try-settings suggests"}]))
            continue
        g = by_number[row["fix"]]
        ranking.append(dict(row, rank=rank, breaks_removed=g.breaks,
                            findings=[{"where": _where(f, cwd), "code": f.code, "message": f.message,
                                       "fix": f.fix.message} for f in g.findings]))
    targets = []
    for t in cost.targets:
        out = {k: t.get(k) for k in ("index", "label", "rounds", "stable", "seconds", "error")}
        out["versions"] = {name: dict(v, vs_compiled=comparison(t, "compiled", name))
                           if name not in ("eager", "compiled") else v for name, v in t["versions"].items()}
        out["compare"] = {name: comparison(t, a, b) for name, (a, b) in {
            "compiled_vs_eager": ("eager", "compiled"), "fixed_vs_compiled": ("compiled", "fixed"),
            "fixed_vs_eager": ("eager", "fixed"), "settings_vs_compiled": ("compiled", "settings")}.items()
            if comparison(t, a, b) is not None}
        if "fixed" in t["versions"]:
            out["kept"] = kept(t, "compiled", ["fixed"], [n for n in ("fixes", "settings") if n in t["versions"]])
        targets.append(out)
    not_timed = [{"where": _where(r.finding, cwd), "code": r.finding.code, "status": r.status, "message": r.message}
                 for r in (cost.proof.results if cost.proof else []) if r.status != "proven"]
    return {"device": cost.device, "device_name": cost.device_name, "torch": cost.torch, "backend": backend,
            "compile_mode": compile_mode or "default", "settings": [spelled(k) for k in cost.knobs],
            "targets": targets, "ranking": ranking, "confirmations": cost.confirmations,
            "not_proven": not_timed, "error": cost.error,
            "method": "eval mode, torch.no_grad(); versions interleaved in one process, one call per version "
                      "per round in rotated order, at least 20 rounds and 1 s, until every median moved < 1 % "
                      "over 5 rounds (or 20 s ended); spread: interquartile range; a difference whose ranges overlap is "
                      f"'{SAME}'"}


def finding_costs(cost: Cost, data: dict) -> Dict[int, dict]:
    """id(finding) → its ranking row, or why its fix was not timed (SARIF's per-result property)."""
    by_number = {g.number: g for g in cost.groups}
    out = {id(r.finding): {"verdict": "not timed", "reason": f"fix {r.status}"}
           for r in (cost.proof.results if cost.proof else [])}
    for row in data["ranking"]:
        for f in by_number[row["fix"]].findings if row["fix"] != SETTINGS else ():
            out[id(f)] = {k: row[k] for k in ("rank", "verdict", "saving", "speedup", "target", "breaks_removed")}
    return out
