"""`verify --cost --output-format html`: one self-contained page (inline CSS and SVG, no scripts, no
external assets) with the ranking and each target's latencies drawn as bars.

Every bar is an SVG `<rect class="bar">` whose width is its value over the chart's largest, times
the chart's width, and carries the value in `data-seconds`; the interquartile range is drawn as a
line across the bar's end (`class="iqr"`), so a difference inside it is visibly inside it.
"""
from __future__ import annotations

from html import escape
from typing import List, Optional, Tuple

from compilelint.report.cost import FASTER, change, change_name, ms, version_name

WIDTH = 420  # px of the longest bar
ROW = 26
LABEL = 260
TAIL = 280  # px for the value written after a bar

CSS = """
body { font: 14px/1.45 system-ui, sans-serif; margin: 2em auto; max-width: 60em; color: #222; }
h1 { font-size: 1.4em; } h2 { font-size: 1.15em; margin-top: 2em; }
table { border-collapse: collapse; } td, th { padding: .2em .6em; text-align: left; border-bottom: 1px solid #ddd; }
td.num { text-align: right; font-variant-numeric: tabular-nums; }
.meta { color: #555; } .ok { color: #176b2c; } .bad { color: #a61b1b; }
svg text { font: 12px system-ui, sans-serif; fill: #222; }
rect.bar { fill: #4a78b5; } rect.bar.faster { fill: #2f8f46; } rect.bar.slower { fill: #c0392b; }
rect.bar.same { fill: #9aa5b1; } line.iqr { stroke: #111; stroke-width: 2; }
"""


def _chart(title: str, rows: List[Tuple[str, float, Optional[Tuple[float, float]], str, str]]) -> str:
    """rows: (label, seconds, (q1, q3) or None, css class, text after the bar)."""
    top = max([max(v, (iqr or (0, 0))[1]) for _, v, iqr, _, _ in rows] + [1e-12])
    height = ROW * len(rows) + 8
    out = [f'<svg class="chart" role="img" aria-label="{escape(title)}" width="{LABEL + WIDTH + TAIL}" '
           f'height="{height}" xmlns="http://www.w3.org/2000/svg">']
    for i, (label, value, iqr, cls, after) in enumerate(rows):
        y = 4 + i * ROW
        w = max(0.0, value) / top * WIDTH
        out.append(f'<text x="{LABEL - 8}" y="{y + 15}" text-anchor="end">{escape(label)}</text>')
        out.append(f'<rect class="bar {cls}" x="{LABEL}" y="{y + 2}" width="{w:.2f}" height="{ROW - 8}" '
                   f'data-seconds="{value:.9g}"><title>{escape(label)}: {escape(ms(value))}</title></rect>')
        if iqr is not None:
            x1, x2 = LABEL + iqr[0] / top * WIDTH, LABEL + iqr[1] / top * WIDTH
            out.append(f'<line class="iqr" x1="{x1:.2f}" x2="{x2:.2f}" y1="{y + ROW / 2 - 1}" y2="{y + ROW / 2 - 1}"/>')
        out.append(f'<text x="{LABEL + WIDTH + 8}" y="{y + 15}">{escape(after)}</text>')
    out.append("</svg>")
    return "\n".join(out)


def _css(verdict: str) -> str:
    return {"faster": "faster", "slower": "slower"}.get(verdict, "same")


def render_html(data: dict) -> str:
    parts = ["<!DOCTYPE html>", '<html lang="en"><head><meta charset="utf-8">',
             "<title>compilelint verify --cost</title>", f"<style>{CSS}</style></head><body>",
             "<h1>What the graph breaks cost</h1>",
             f'<p class="meta">{escape(data["device_name"] or data["device"])}, torch {escape(data["torch"])}, '
             f'backend {escape(data["backend"])}, mode {escape(data["compile_mode"])}. {escape(data["method"])}.</p>']
    if data["settings"]:
        parts.append(f'<p>Settings with the fixes: <code>{escape("; ".join(data["settings"]))}</code></p>')

    parts.append('<h2 id="ranking">Ranking: the time each proven fix, and the settings, win alone</h2>')
    if data["ranking"]:
        rows = []
        for r in data["ranking"]:
            f = r["findings"][0]
            rows.append((f"{r['rank']}. {f['code']} {f['where']}", max(0.0, r["saving"]), None, _css(r["verdict"]),
                         change(r) if r["verdict"] != FASTER else f"−{ms(r['saving'])} per call"))
        parts.append(f'<div class="ranking">{_chart("ranking", rows)}</div>')
        parts.append("<table><tr><th>#</th><th>finding</th><th>fix</th><th>result</th><th>breaks removed</th></tr>")
        for r in data["ranking"]:
            where = "<br>".join(escape(f"{f['where']} {f['code']}") for f in r["findings"])
            parts.append(f"<tr><td>{r['rank']}</td><td>{where}</td><td>{escape(r['findings'][0]['fix'])}</td>"
                         f"<td>{escape(change(r))}</td><td class=num>{r['breaks_removed']}</td></tr>")
        parts.append("</table>")
    else:
        parts.append("<p>No proven fix to time.</p>")
    for c in data.get("confirmations") or []:
        cls, word = ("ok", "confirmed") if c["confirmed"] else ("bad", "not confirmed")
        detail = change(c) if c.get("before") else (c.get("error") or c["verdict"])
        parts.append(f'<p class="{cls}">#{c["target"]}: its top {escape(change_name(c, data["ranking"]))} {word} by a second run of that '
                     f'change alone: {escape(detail)}.</p>')

    for t in data["targets"]:
        parts.append(f'<h2 class="target">{escape(t["label"])}: latency before and after</h2>')
        if t.get("error"):
            parts.append(f'<p class="bad">{escape(t["error"])}</p>')
        rows = []
        for name, v in t["versions"].items():
            lat = v.get("latency")
            if not lat:
                continue
            verdict = _css((v.get("vs_compiled") or {}).get("verdict", ""))
            rows.append((version_name(name), lat["median"], (lat["q1"], lat["q3"]),
                         "base" if name in ("eager", "compiled") else verdict,
                         f"{ms(lat['median'])} (IQR {ms(lat['q1'])}–{ms(lat['q3'])})"))
        if rows:
            parts.append(f'<div class="latency">{_chart(t["label"], rows)}</div>')
        parts.append("<table><tr><th>version</th><th>compile</th><th>frames</th><th>breaks</th><th>recompiles</th>"
                     "</tr>")
        for name, v in t["versions"].items():
            parts.append(f"<tr><td>{escape(version_name(name))}</td>"
                         f"<td class=num>{v.get('compile_s', 0):.2f} s</td>"
                         f"<td class=num>{v.get('frames', 0)}</td><td class=num>{v.get('breaks', 0)}</td>"
                         f"<td class=num>{v.get('recompiles', 0)}</td></tr>")
        parts.append("</table>")
        for key, label in (("compiled_vs_eager", "compiled vs eager"), ("fixed_vs_compiled", "fixed vs compiled")):
            if key in t["compare"]:
                parts.append(f"<p>{label}: {escape(change(t['compare'][key]))}</p>")
    if data["not_proven"]:
        parts.append("<h2>Fixes not timed (not proven)</h2><ul>")
        parts += [f"<li>{escape(r['where'])} {escape(r['code'])}: {escape(r['status'])}</li>" for r in data["not_proven"]]
        parts.append("</ul>")
    parts.append("</body></html>")
    return "\n".join(parts) + "\n"
