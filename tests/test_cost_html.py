"""`verify --cost --output-format html`: one self-contained page whose bars are drawn at the sizes
of the numbers. Checked twice: by parsing the SVG (always), and by rendering the page in headless
Chromium and reading the sizes the browser laid the bars out at (skipped without chromium)."""
import json
import os
import re
import shutil
import subprocess
from html.parser import HTMLParser

import pytest

from compilelint.report.html import LABEL, TAIL, WIDTH, render_html


def _lat(median, spread):
    return {"n": 40, "median": median, "q1": median - spread, "q3": median + spread, "min": median - 2 * spread,
            "max": median + 2 * spread}


def _version(median, spread, breaks):
    return {"compile_s": 1.5, "first_call_s": 2.0, "frames": breaks + 1, "breaks": breaks, "recompiles": 0,
            "outputs": {"equal": "allclose"}, "error": "", "latency": _lat(median, spread)}


def data():
    """The shape `verify.cost.cost_dict` returns, with round numbers."""
    faster = {"vs_compiled": {"verdict": "faster", "saving": 0.004, "speedup": 4.0}}
    versions = {"eager": _version(0.004, 0.0001, 0), "compiled": _version(0.006, 0.0002, 4),
                "fixed": dict(_version(0.001, 0.00005, 0), **faster), "fix 1": dict(_version(0.0015, 0.0001, 1), **faster),
                "fix 2": dict(_version(0.0059, 0.0003, 3),
                              vs_compiled={"verdict": "no measurable difference", "saving": 0.0001, "speedup": 1.02})}
    row = {"verdict": "faster", "saving": 0.0045, "speedup": 4.0, "target": 0, "targets": [], "breaks_removed": 3}
    same = {"verdict": "no measurable difference", "saving": 0.0001, "speedup": 1.02, "target": 0, "targets": [],
            "breaks_removed": 1}
    return {
        "device": "cpu", "device_name": "cpu", "torch": "2.13.0", "backend": "inductor", "compile_mode": "default",
        "settings": [], "method": "interleaved", "error": "", "not_proven": [],
        "targets": [{"index": 0, "label": "#0 MoE <tiny>", "rounds": 40, "stable": True, "seconds": 1.0, "error": "",
                     "versions": versions, "compare": {}}],
        "ranking": [dict(row, fix=1, rank=1, findings=[{"where": "m.py:3:4", "code": "CL301", "message": "m",
                                                         "fix": "dense loop"}]),
                    dict(same, fix=2, rank=2, findings=[{"where": "m.py:9:4", "code": "CL201", "message": "m",
                                                          "fix": "guard"}])],
        "confirmations": [{"fix": 1, "target": 0, "confirmed": True, "verdict": "faster", "saving": 0.0044,
                           "first_saving": 0.0045, "speedup": 3.9, "before": _lat(0.006, 0.0002),
                           "after": _lat(0.0015, 0.0001), "error": ""}],
    }


class _Bars(HTMLParser):
    def __init__(self):
        super().__init__()
        self.charts, self.external = [], []

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if tag == "svg":
            self.charts.append([])
        if tag == "rect" and "bar" in a.get("class", "").split():
            self.charts[-1].append((float(a["width"]), float(a["data-seconds"])))
        for key in ("src", "href"):
            if a.get(key):
                self.external.append(a[key])


def test_bars_are_drawn_at_the_sizes_of_the_numbers():
    page = render_html(data())
    p = _Bars()
    p.feed(page)
    assert not p.external  # self-contained: no scripts, images or style sheets to fetch
    assert "<script" not in page
    ranking, latency = p.charts
    assert ranking == [(WIDTH, 0.0045), (pytest.approx(0.0001 / 0.0045 * WIDTH, abs=0.01), 0.0001)]
    top = 0.0059 + 0.0003  # the chart's scale: its largest value, IQR ends included (fix 2, compiled)
    assert [s for _, s in latency] == [0.004, 0.006, 0.001, 0.0015, 0.0059]
    for width, seconds in latency:
        assert width == pytest.approx(seconds / top * WIDTH, abs=0.01)
    assert page.count('class="bar faster"') == 1 + 2 and page.count('class="bar same"') == 1 + 1
    assert "&lt;tiny&gt;" in page and "<tiny>" not in page  # labels are escaped
    assert "no measurable difference" in page and "confirmed" in page


CHROMIUM = next((shutil.which(n) for n in ("chromium", "chromium-browser", "google-chrome") if shutil.which(n)), None)

# Added to a copy of the page only here: writes the widths the browser laid the bars out at.
PROBE = """<script>
document.addEventListener('DOMContentLoaded', () => {
  const bars = [...document.querySelectorAll('svg rect.bar')].map(r => [r.getBoundingClientRect().width,
      parseFloat(r.getAttribute('data-seconds')), r.closest('svg').getBoundingClientRect().width]);
  const pre = document.createElement('pre'); pre.id = 'probe'; pre.textContent = JSON.stringify(bars);
  document.body.appendChild(pre);
});
</script>"""


@pytest.mark.skipif(CHROMIUM is None, reason="chromium is not installed (apt-get install chromium)")
def test_chromium_renders_the_bars(tmp_path):
    page = render_html(data())
    probe = tmp_path / "probe.html"
    probe.write_text(page.replace("</head>", PROBE + "</head>"), encoding="utf-8")
    r = subprocess.run([CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                        f"--user-data-dir={tmp_path / 'profile'}", "--dump-dom", probe.as_uri()],
                       capture_output=True, text=True, timeout=120)
    m = re.search(r'<pre id="probe">(.*?)</pre>', r.stdout, re.S)
    assert m, r.stderr[-2000:]
    bars = json.loads(m.group(1))
    assert len(bars) == 7  # 2 ranking bars + 5 latencies, all laid out
    assert all(svg_width == LABEL + WIDTH + TAIL for _, _, svg_width in bars)
    ranking = bars[:2]
    assert ranking[0][0] == pytest.approx(WIDTH, abs=0.5)
    assert ranking[1][0] == pytest.approx(0.0001 / 0.0045 * WIDTH, abs=0.5)
    for width, seconds, _ in bars[2:]:
        assert width == pytest.approx(seconds / 0.0062 * WIDTH, abs=0.5)
    # and the page itself opens as it is (no probe), painting something
    shot = tmp_path / "page.png"
    page_file = tmp_path / "page.html"
    page_file.write_text(page, encoding="utf-8")
    subprocess.run([CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                    f"--user-data-dir={tmp_path / 'profile2'}", f"--screenshot={shot}", "--window-size=1000,900",
                    page_file.as_uri()], capture_output=True, timeout=120)
    assert shot.exists() and os.path.getsize(shot) > 5000
