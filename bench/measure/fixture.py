"""A fixture file loaded as a module, for a snippet file that measures the fixture's own code
(`SOURCE = F.__file__`: run.py then reads the events at the fixture's rows)."""
import importlib.util
import os

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def load(rel: str):
    """The module at `rel` (a path under the repository root)."""
    path = os.path.join(ROOT, rel)
    spec = importlib.util.spec_from_file_location(os.path.splitext(os.path.basename(rel))[0], path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod
