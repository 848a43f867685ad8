"""`compilelint verify --fix [--unsafe-fixes] [--proven-only]`: the command line around fixproof.py."""
from __future__ import annotations

import os
import sys
from typing import Optional, Sequence

import click


def verify_fixes(paths: Sequence[str], settings, *, example: Optional[str], run_cmd: Optional[Sequence[str]],
                 device: str, backend: str, timeout: float, unsafe: bool, write: bool,
                 output_file: Optional[str], progress, output_format: Optional[str] = None) -> int:
    """Prove the fixes, print one verdict per fix (as text, or in `output_format`: JSON, SARIF...),
    write the proven ones when asked. Exit 0 when every fix is proven, 1 when one is not, 2 on a
    usage error."""
    from compilelint.engine import UsageError, check_paths
    from compilelint.verify import VerifyUsageError, _validate
    from compilelint.verify import fixproof

    try:
        _validate(example, run_cmd, device, backend)
        report = check_paths(list(paths), settings)
    except (VerifyUsageError, UsageError) as e:
        click.echo(f"compilelint: error: {e}", err=True)
        return 2
    for error in report.errors:
        click.echo(f"compilelint: error: {error.path}: {error.message}", err=True)
    proof = fixproof.prove_fixes(report, paths, example=example, run_cmd=run_cmd, unsafe=unsafe,
                                 device="cpu" if device == "auto" and not _cuda() else device, backend=backend,
                                 timeout=timeout, progress=progress)
    text = fixproof.render(proof)
    if output_format not in (None, "concise", "full", "grouped"):
        text = fixproof.render_as(proof, output_format, settings.torch_version)
    elif not proof.results:
        text = "verify --fix: no " + ("" if unsafe else "safe ") + "fixes to prove" + \
               ("" if unsafe else " (--unsafe-fixes adds the unsafe ones)") + "\n"
    if output_file:
        with open(output_file, "w", encoding="utf-8") as f:
            f.write(text)
    else:
        click.echo(text, nl=False)
    if proof.error:
        click.echo(f"compilelint: verify: {proof.error}", err=True)
    if write:
        for path in fixproof.write_proven(proof.results):
            click.echo(f"fixed {os.path.relpath(path)}", err=True)
    return 0 if all(r.status == "proven" for r in proof.results) else 1


def verify_settings(paths: Sequence[str], settings, *, example: Optional[str], device: str, backend: str,
                    timeout: float, output_file: Optional[str], progress) -> int:
    """Try the Dynamo settings the findings point to; print what each removes and the suggestion.
    Exit 0 when a setting is suggested, 1 when none helps, 2 on a usage error."""
    from compilelint.engine import UsageError, check_paths
    from compilelint.verify import VerifyUsageError, _validate
    from compilelint.verify.knobs import render, try_settings

    try:
        _validate(example, None, device, backend)
        report = check_paths(list(paths), settings)
    except (VerifyUsageError, UsageError) as e:
        click.echo(f"compilelint: error: {e}", err=True)
        return 2
    search = try_settings(example, sorted({f.code for f in report.findings}),
                          device="cpu" if device == "auto" and not _cuda() else device, backend=backend,
                          timeout=timeout, progress=progress)
    text = render(search)
    if output_file:
        with open(output_file, "w", encoding="utf-8") as f:
            f.write(text)
    else:
        click.echo(text, nl=False)
    return 0 if search.suggested is not None else 1


def _cuda() -> bool:
    """Whether a CUDA device is visible, without importing torch in this process."""
    return bool(os.environ.get("CUDA_VISIBLE_DEVICES", "x")) and os.path.exists("/dev/nvidiactl") and \
        sys.platform.startswith("linux")
