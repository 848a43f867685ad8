"""`compilelint verify --fix [--unsafe-fixes] [--proven-only]`: the command line around fixproof.py
(the proof), fix_report.py (its text) and fix_write.py (`--proven-only`); and `--try-settings`
around knobs.py."""
from __future__ import annotations

import os
from typing import Optional, Sequence

import click

from compilelint.verify.commands import checked_report, emit, print_errors, run_device


def verify_fixes(paths: Sequence[str], settings, *, example: Optional[str], run_cmd: Optional[Sequence[str]],
                 device: str, backend: str, timeout: float, unsafe: bool, write: bool,
                 output_file: Optional[str], progress, output_format: Optional[str] = None) -> int:
    """Prove the fixes, print one verdict per fix (as text, or in `output_format`: JSON, SARIF...),
    write the proven ones when asked. Exit 0 when every fix is proven, 1 when one is not, 2 on a
    usage error."""
    from compilelint.verify import fixproof
    from compilelint.verify.fix_report import render, render_as
    from compilelint.verify.fix_write import write_proven

    report = checked_report(paths, settings, example=example, run_cmd=run_cmd, device=device, backend=backend)
    if report is None:
        return 2
    print_errors(report)
    proof = fixproof.prove_fixes(report, paths, example=example, run_cmd=run_cmd, unsafe=unsafe,
                                 device=run_device(device), backend=backend, timeout=timeout, progress=progress)
    text = render(proof)
    if output_format not in (None, "concise", "full", "grouped"):
        text = render_as(proof, output_format, settings.torch_version)
    elif not proof.results:
        text = "verify --fix: no " + ("" if unsafe else "safe ") + "fixes to prove" + \
               ("" if unsafe else " (--unsafe-fixes adds the unsafe ones)") + "\n"
    emit(text, output_file)
    if proof.error:
        click.echo(f"compilelint: verify: {proof.error}", err=True)
    if write:
        for path in write_proven(proof.results):
            click.echo(f"fixed {os.path.relpath(path)}", err=True)
    return 0 if all(r.status == "proven" for r in proof.results) else 1


def verify_settings(paths: Sequence[str], settings, *, example: Optional[str], device: str, backend: str,
                    timeout: float, output_file: Optional[str], progress) -> int:
    """Try the Dynamo settings the findings point to; print what each removes and the suggestion.
    Exit 0 when a setting is suggested, 1 when none helps, 2 on a usage error."""
    from compilelint.verify.knobs import render, try_settings

    report = checked_report(paths, settings, example=example, run_cmd=None, device=device, backend=backend)
    if report is None:
        return 2
    search = try_settings(example, sorted({f.code for f in report.findings}), device=run_device(device),
                          backend=backend, timeout=timeout, progress=progress)
    emit(render(search), output_file)
    return 0 if search.suggested is not None else 1
