"""What the `verify --fix`, `--try-settings` and `--cost` commands share: checking the paths first
(a usage error is one line and exit 2), the device a run uses, and where the text goes."""
from __future__ import annotations

import os
import sys
from typing import Callable, Optional, Sequence

import click


def checked_report(paths: Sequence[str], settings, *, example: Optional[str], run_cmd: Optional[Sequence[str]],
                   device: str, backend: str, also: Optional[Callable[[], None]] = None):
    """`check`'s report on `paths` once the verify arguments are valid (`also`: the command's own
    check, raising VerifyUsageError); None after printing why not."""
    from compilelint.engine import UsageError, check_paths
    from compilelint.verify import VerifyUsageError, _validate

    try:
        _validate(example, run_cmd, device, backend)
        if also is not None:
            also()
        return check_paths(list(paths), settings)
    except (VerifyUsageError, UsageError) as e:
        click.echo(f"compilelint: error: {e}", err=True)
        return None


def print_errors(report) -> None:
    """The files `check` could not read, one line each."""
    for error in report.errors:
        click.echo(f"compilelint: error: {error.path}: {error.message}", err=True)


def run_device(device: str) -> str:
    """`auto`: cuda when a CUDA device is visible, else cpu (found without importing torch here)."""
    return "cpu" if device == "auto" and not _cuda() else device


def emit(text: str, output_file: Optional[str], *, make_folder: bool = False) -> None:
    """`text` to `output_file` (its folder made first when asked), or to stdout."""
    if output_file:
        if make_folder:
            os.makedirs(os.path.dirname(os.path.abspath(output_file)), exist_ok=True)
        with open(output_file, "w", encoding="utf-8") as f:
            f.write(text)
    else:
        click.echo(text, nl=False)


def _cuda() -> bool:
    """Whether a CUDA device is visible, without importing torch in this process."""
    return bool(os.environ.get("CUDA_VISIBLE_DEVICES", "x")) and os.path.exists("/dev/nvidiactl") and \
        sys.platform.startswith("linux")
