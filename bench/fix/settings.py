"""Which Dynamo settings remove the breaks the code fixes leave, on the 7 transformers models.

The fixes of `check --fix --unsafe-fixes` are written to a temporary copy of transformers (as in
run.py), then `compilelint verify --try-settings`'s search runs on that copy: every setting the
findings point to alone, then greedily together, counting the breaks in transformers/models and
comparing compiled outputs with the fixed code's eager outputs.

    .venv/bin/python bench/fix/settings.py [--no-fix]      # --no-fix: on the original code

Writes bench/fix/settings[-nofix].md.
"""
from __future__ import annotations

import argparse
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.dirname(os.path.dirname(HERE)))

from run import FACTORY, check_fix, transformers_dir  # noqa: E402

from compilelint.verify.knobs import render, try_settings  # noqa: E402
from compilelint.verify.code_copy import make_copy  # noqa: E402


def finding_codes(models: str) -> list:
    """The rule codes `check` reports in the 7 models' files (what the settings are chosen from)."""
    import json
    import subprocess

    from run import ENTRIES, NAMES

    files = [os.path.join(models, ENTRIES[n].split(":")[0]) for n in NAMES]
    out = subprocess.run([sys.executable, "-m", "compilelint", "check", *files, "--output-format", "json",
                          "--exit-zero", "--no-cache", "--isolated"], capture_output=True, text=True, check=True)
    return sorted({f["code"] for f in json.loads(out.stdout)})


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--no-fix", action="store_true")
    opts = ap.parse_args()
    models = os.path.join(transformers_dir(), "models")
    copy = make_copy([models])
    try:
        if not opts.no_fix:
            check_fix(copy.to_copy(models), [])
        codes = finding_codes(copy.to_copy(models))
        search = try_settings(f"{FACTORY}:targets", codes, under=models, copy=copy, timeout=900,
                              progress=lambda d, t, label: print(f"[{d}/{t}] {label}", flush=True))
    finally:
        copy.remove()
    text = render(search)
    name = "settings-nofix" if opts.no_fix else "settings"
    with open(os.path.join(HERE, f"{name}.md"), "w", encoding="utf-8") as f:
        f.write(("Original code" if opts.no_fix else "After `check --fix --unsafe-fixes`") +
                ", 7 models, eval, breaks in transformers/models:\n\n```\n" + text + "```\n")
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
