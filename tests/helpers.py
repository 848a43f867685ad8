"""Running the engine on source text in tests."""
import os
import tempfile
import textwrap

from compilelint.config import Settings
from compilelint.engine import check_paths


def check_source(source: str, name: str = "example.py", **settings):
    """Findings for one module written to a fresh temporary folder (no cache, no config)."""
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, name)
        with open(path, "w", encoding="utf-8") as f:
            f.write(textwrap.dedent(source))
        s = Settings(cache=False, **settings)
        report = check_paths([path], s)
        return report


def marked_lines(source: str, marker: str = "# <-"):
    return {i for i, line in enumerate(textwrap.dedent(source).splitlines(), 1) if marker in line}
