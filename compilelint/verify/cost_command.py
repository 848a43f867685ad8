"""`compilelint verify --cost`: the command line around cost.py (text, json, sarif or html)."""
from __future__ import annotations

from typing import Optional, Sequence

import click

from compilelint.verify.commands import checked_report, emit, print_errors, run_device

COST_FORMATS = ("concise", "json", "sarif", "html")


def verify_cost(paths: Sequence[str], settings, *, example: Optional[str], device: str, backend: str,
                compile_mode: Optional[str], timeout: float, unsafe: bool, output_format: Optional[str],
                output_file: Optional[str], progress) -> int:
    """Measure, print, exit 0 (measured), 1 (a target or one of its versions failed) or 2 (usage, or
    the factory did not run)."""
    from compilelint.report.cost import render_json, render_sarif, render_text
    from compilelint.report.html import render_html
    from compilelint.verify import VerifyUsageError
    from compilelint.verify.cost import cost_dict, finding_costs, measure_cost

    fmt = output_format or "concise"

    def known_format():
        if fmt not in COST_FORMATS:
            raise VerifyUsageError(f"--cost prints {', '.join(COST_FORMATS)}, not {fmt}")

    report = checked_report(paths, settings, example=example, run_cmd=None, device=device, backend=backend,
                            also=known_format)
    if report is None:
        return 2
    print_errors(report)
    cost = measure_cost(report, paths, example=example, unsafe=unsafe, backend=backend, compile_mode=compile_mode,
                        device=run_device(device), timeout=timeout, progress=progress)
    data = cost_dict(cost, backend=backend, compile_mode=compile_mode)
    if fmt == "json":
        text = render_json(data)
    elif fmt == "sarif":
        text = render_sarif(report, data, finding_costs(cost, data), settings.torch_version)
    elif fmt == "html":
        text = render_html(data)
    else:
        text = render_text(data)
    emit(text, output_file, make_folder=True)
    failed = [f"{t['label']}: {t['error']}" for t in data["targets"] if t.get("error")]
    failed += [f"{t['label']} {name}: {v['error']}" for t in data["targets"] for name, v in t["versions"].items()
               if v.get("error")]
    for line in failed:
        click.echo(f"compilelint: verify: {line}", err=True)
    if data.get("error"):
        click.echo(f"compilelint: verify: {data['error']}", err=True)
        return 2
    return 1 if failed else 0
