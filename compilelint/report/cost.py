"""`verify --cost` as text, JSON and SARIF, from the plain dict `verify.cost.cost_dict` builds.

Latencies are medians per call with their interquartile range; a difference inside the ranges is
printed as "no measurable difference", never as a speed-up or a slowdown.
"""
from __future__ import annotations

import json
from typing import Dict, Optional

# verify.timing's verdicts (report never imports verify: the architecture contract)
FASTER, SAME = "faster", "no measurable difference"

NAMES = {"eager": "eager", "compiled": "compiled as is", "fixed": "compiled, fixed + settings",
         "fixes": "compiled, fixes alone", "settings": "compiled, settings alone"}


def ms(seconds: float) -> str:
    """A latency for people: 3 significant digits in ms (µs below 0.1 ms)."""
    if abs(seconds) < 1e-4:
        return f"{seconds * 1e6:.3g} µs"
    return f"{seconds * 1e3:.3g} ms"


def version_name(name: str) -> str:
    return NAMES.get(name, f"compiled, {name} alone")


def _lat(v: dict) -> str:
    lat = v.get("latency")
    if not lat:
        return "not timed" + (f" ({v['error']})" if v.get("error") else "")
    return (f"{ms(lat['median']):>10}  (IQR {ms(lat['q1'])}–{ms(lat['q3'])}, min–max {ms(lat['min'])}–"
            f"{ms(lat['max'])}, n={lat['n']})")


def change(c: Optional[dict]) -> str:
    """'2.1x faster, saves 3.2 ms per call' | 'no measurable difference (1.02x)' | '1.3x slower, ...'."""
    if not c:
        return "not timed"
    if c["verdict"] not in (FASTER, SAME, "slower"):
        return c["verdict"]
    if c["verdict"] == SAME:
        return f"{SAME} ({c['speedup']:.2f}x, inside the spread)"
    if c["verdict"] == FASTER:
        return f"{c['speedup']:.2f}x faster, saves {ms(c['saving'])} per call"
    return f"{1 / c['speedup']:.2f}x slower, costs {ms(-c['saving'])} per call"


def kept_text(k: dict) -> str:
    """What verify keeps on a target (verify.cost.kept), and why not the rest."""
    why = "; ".join(f"{version_name(n)}: {w}" for n, w in k["rejected"].items())
    if k["version"] is None:
        return f"kept: nothing, the code as it is ({why})"
    return f"kept: {version_name(k['version'])}, {change(k['compare'])}" + (f" (not kept: {why})" if why else "")


def render_text(data: dict) -> str:
    mode = data["compile_mode"]
    lines = [f"cost: {data['device_name'] or data['device']}, torch {data['torch']}, backend {data['backend']}, "
             f"mode {mode}; {data['method']}"]
    if data["settings"]:
        lines.append(f"settings (suggested by --try-settings on the fixed code): {'; '.join(data['settings'])}")
    for t in data["targets"]:
        head = f"{t['label']}"
        if t.get("rounds"):
            head += f": {t['rounds']} rounds interleaved, " + ("medians stable" if t.get("stable") else
                                                              "stopped by the time budget, medians still moving")
        if t.get("error"):
            head += f" [error: {t['error']}]"
        lines.append(head)
        for name, v in t["versions"].items():
            extra = ""
            if name != "eager" and not v.get("error"):
                extra = (f"  compile {v['compile_s']:.2f} s, first call {v['first_call_s']:.2f} s, "
                         f"{v['frames']} frames, {v['breaks']} breaks, {v['recompiles']} recompiles")
                eq = (v.get("outputs") or {}).get("equal")
                if eq and eq not in ("bitwise", "allclose", "as-accurate", "as-compiled"):
                    extra += f"; outputs {eq} ({v['outputs'].get('what', '')})"
            lines.append(f"    {version_name(name):<34}{_lat(v)}{extra}")
        for key, label in (("compiled_vs_eager", "compiled vs eager"), ("fixed_vs_compiled", "fixed vs compiled"),
                           ("fixed_vs_eager", "fixed vs eager"), ("settings_vs_compiled", "settings vs compiled")):
            if key in t["compare"]:
                lines.append(f"    {label}: {change(t['compare'][key])}")
        if t.get("kept"):
            lines.append(f"    {kept_text(t['kept'])}")
    if data["ranking"]:
        lines.append("ranking: the time each proven fix, and the settings, win alone (compiled as is → with that change)")
    for row in data["ranking"]:
        first = row["findings"][0]
        more = f" (+ {', '.join(f['where'] + ' ' + f['code'] for f in row['findings'][1:])})" \
            if len(row["findings"]) > 1 else ""
        where = f" on #{row['target']}" if row["target"] is not None else ""
        lines.append(f"  {row['rank']}. {first['where']}: {first['code']}{more}: {change(row)}{where}; "
                     f"removes {row['breaks_removed']} breaks")
    for c in data.get("confirmations") or []:
        verdict = "confirmed" if c["confirmed"] else "NOT confirmed"
        detail = (f"{ms(c['before']['median'])} → {ms(c['after']['median'])}, {change(c)}"
                  if c.get("before") else c.get("error") or c["verdict"])
        lines.append(f"#{c['target']}: its top {change_name(c, data['ranking'])} (saved {ms(c['first_saving'])}) {verdict} by a "
                     f"second run of that change alone: {detail}")
    for r in data["not_proven"]:
        why = f"; {r['message']}" if r["message"] else ""
        lines.append(f"  not timed: {r['where']}: {r['code']} {r['status']}{why}")
    if data.get("error"):
        lines.append(f"error: {data['error']}")
    return "\n".join(lines) + "\n"


def change_name(c: dict, ranking: list) -> str:
    """A confirmation's change in words: by its ranking row's rank and first finding (the settings:
    their code is "setting")."""
    row = next((r for r in ranking if r["fix"] == c["fix"]), None)
    if row is None:
        return f"fix ({c['fix']})"
    first = row["findings"][0]
    what = "the settings" if first["code"] == "setting" else f"{first['where']} {first['code']}"
    return f"change (rank {row['rank']}: {what})"


def render_json(data: dict) -> str:
    return json.dumps(data, indent=2, ensure_ascii=False, default=str) + "\n"


def render_sarif(report, data: dict, per_finding: Dict[int, dict], torch_version: str) -> str:
    """The findings' SARIF log, each result with `properties.cost` (its fix's ranking row, or why
    it was not timed: no fix, or a fix not proven), and the whole measurement as the run's
    `properties.cost`."""
    from compilelint.report.sarif import sarif_log

    log = sarif_log(report, torch_version)
    run = log["runs"][0]
    for finding, result in zip(report.findings, run["results"]):
        row = per_finding.get(id(finding)) or {"verdict": "not timed",
                                                "reason": "no fix" if finding.fix is None else "fix not proven"}
        result.setdefault("properties", {})["cost"] = row
    run["properties"] = {"cost": data}
    return json.dumps(log, indent=2, ensure_ascii=False, default=str) + "\n"
