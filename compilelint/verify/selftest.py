"""Run verify on its own fixtures and write the report: checks verify itself on a new machine.

    python -m compilelint.verify.selftest --device cuda --backend inductor --out REPORT.json

The fixtures (`fixtures/verify/` of a source checkout) mark their findings in comments:
`# finding: CL190 verify: confirmed`. Findings are built from those markers, not by `check`, so the
self-test measures verify alone. The report lists each finding with its expected and actual
status; the exit status is 0 when all agree, 1 otherwise.
"""
from __future__ import annotations

import argparse
import ast
import json
import os
import re
import sys
import time
from dataclasses import asdict
from typing import Dict, List, Tuple

from compilelint.finding import Finding, Region, Report, Span

MARK = re.compile(r"#\s*finding:\s*(?P<code>CL\d{3})(?:\s+verify:\s*(?P<status>[\w-]+))?")
FIXTURES = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))),
                        "fixtures", "verify")


def marked_findings(path: str, root_of=None) -> Tuple[List[Finding], Dict[Tuple[str, int], str]]:
    """Findings for every `# finding:` marker of `path`, and the expected status per (code, row).

    `root_of(qualname)` names the compiled-region root of a function (default: the function)."""
    with open(path, encoding="utf-8") as f:
        source = f.read()
    funcs = _functions(ast.parse(source))
    findings, expected = [], {}
    for row, text in enumerate(source.splitlines(), 1):
        m = MARK.search(text)
        if not m:
            continue
        code = m.group("code")
        qual = next((q for s, e, q in sorted(funcs, key=lambda t: -t[0]) if s <= row <= e), "")
        col = len(text) - len(text.lstrip()) + 1
        end_col = len(text[: m.start()].rstrip()) + 1
        root = (root_of or (lambda q: q))(qual)
        findings.append(Finding(code=code, name=f"fixture-{code.lower()}", message=f"fixture finding {code}",
                                path=path, span=Span(row, col, row, end_col), function=qual,
                                region=Region(root=f"{path}:{root}", reason="fixture")))
        if m.group("status"):
            expected[(code, row)] = m.group("status")
    return findings, expected


def _functions(tree) -> List[Tuple[int, int, str]]:
    out = []

    def walk(node, prefix):
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)):
                out.append((child.lineno, child.end_lineno, prefix + child.name))
                walk(child, f"{prefix}{child.name}.<locals>.")
            elif isinstance(child, ast.ClassDef):
                walk(child, f"{prefix}{child.name}.")
            else:
                walk(child, prefix)

    walk(tree, "")
    return out


def decoder_root(qualname: str) -> str:
    """In the decoder fixture every layer is reached from the compiled `TinyDecoder.forward`."""
    return "TinyDecoder.forward" if qualname.split(".")[0] != "TinyDecoder" else qualname


def suites(fixtures: str):
    """(name, findings, expected, verify kwargs) for each part of the fixture suite."""
    models = os.path.join(fixtures, "models.py")
    decoder = os.path.join(fixtures, "decoder")
    layers = os.path.join(decoder, "layers.py")
    f_models, e_models = marked_findings(models)
    crash_lines = {f.span.row for f in f_models if f.function in ("segfault", "hang", "hard_exit",
                                                                   "raises_in_eager", "hog")}
    keep = lambda fs, crash: [f for f in fs if (f.span.row in crash_lines) == crash]  # noqa: E731
    f_dec, e_dec = marked_findings(layers, decoder_root)
    yield ("examples", keep(f_models, False), e_models, [models], {"example": f"{models}:examples"})
    yield ("crashers", keep(f_models, True), e_models, [models],
           {"example": f"{models}:crashers", "timeout": 20.0, "memory_limit_mb": 4096})
    yield ("decoder --run", f_dec, e_dec, [decoder],
           {"run_cmd": [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
                        os.path.join(decoder, "tests")]})


def main(argv=None) -> int:
    from compilelint.verify import summarize, verify_report

    ap = argparse.ArgumentParser(prog="python -m compilelint.verify.selftest", description=__doc__.splitlines()[0])
    ap.add_argument("--device", default="auto")
    ap.add_argument("--backend", default="eager")
    ap.add_argument("--out", default="verify-selftest.json")
    ap.add_argument("--fixtures", default=FIXTURES)
    ap.add_argument("--timeout", type=float, default=300.0)
    args = ap.parse_args(argv)
    if not os.path.isdir(args.fixtures):
        print(f"error: no fixtures at {args.fixtures} (run from a source checkout or pass --fixtures)")
        return 2

    result = {"device": args.device, "backend": args.backend, "suites": []}
    ok = True
    for name, findings, expected, paths, kwargs in suites(args.fixtures):
        kwargs = dict(kwargs)
        kwargs.setdefault("timeout", args.timeout)
        start = time.monotonic()
        report = verify_report(Report(findings=findings), paths, device=args.device, backend=args.backend, **kwargs)
        rows = []
        for f in report.findings:
            want = expected.get((f.code, f.span.row), "missed" if f.code.startswith("CL9") else "")
            got = (f.verification or {}).get("status")
            agree = not want or want == got
            ok &= agree
            rows.append({"code": f.code, "at": f"{os.path.basename(f.path)}:{f.span.row}", "function": f.function,
                         "expected": want, "got": got, "agree": agree, "verification": f.verification})
        suite = {"name": name, "seconds": round(time.monotonic() - start, 1), "summary": summarize(report),
                 "findings": rows}
        result["suites"].append(suite)
        bad = sum(1 for r in rows if not r["agree"])
        print(f"{name}: {len(rows)} findings, {bad} unexpected, {suite['seconds']}s  {suite['summary']}")
        for r in rows:
            if not r["agree"]:
                v = r["verification"] or {}
                print(f"  {r['at']} {r['code']} expected {r['expected']}, got {r['got']} {v.get('message', '')}")
    result["ok"] = ok
    with open(args.out, "w", encoding="utf-8") as f:
        json.dump(result, f, indent=2, default=lambda o: asdict(o) if hasattr(o, "__dataclass_fields__") else str(o))
    print(f"wrote {args.out}: {'all as expected' if ok else 'some findings differ'}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
