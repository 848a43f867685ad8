"""Download and unpack the pinned benchmark corpus (real model code).

The corpus lives OUTSIDE the repository, in a cache directory:
``$COMPILELINT_BENCH_CACHE`` or, by default, ``~/.cache/compilelint-bench``.

    python bench/corpus.py            # fetch what is missing, print counts
    python bench/corpus.py --list     # print one corpus directory per line

Layout of the cache directory::

    wheels/                      the downloaded wheels (pip download --no-deps)
    src/<dist>-<version>/        the .py files of each wheel, unzipped
    torchfix-venv/               TorchFix's own virtualenv (bench/torchfix_env.py)

Standard library only; running it again skips what is already there.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import zipfile
from pathlib import Path

# name -> (distribution, pinned version, corpus directory inside the wheel)
CORPORA = {
    "timm": ("timm", "1.0.31", "timm/models"),
    "vllm": ("vllm", "0.33.0", "vllm/model_executor"),
    "sglang": ("sglang", "0.5.23", "sglang/srt/models"),
    "diffusers": ("diffusers", "0.42.1", "diffusers/models"),
}

# A typical model file per corpus, for the single-file (startup included) run.
TYPICAL_FILE = {
    "timm": "resnet.py",
    "vllm": "models/llama.py",
    "sglang": "llama.py",
    "diffusers": "unets/unet_2d_condition.py",
}


def cache_dir() -> Path:
    default = Path.home() / ".cache" / "compilelint-bench"
    return Path(os.environ.get("COMPILELINT_BENCH_CACHE", default)).expanduser()


def _find_wheel(wheels: Path, dist: str, version: str) -> Path | None:
    prefix = f"{dist.replace('-', '_')}-{version}-".lower()
    for wheel in sorted(wheels.glob("*.whl")):
        if wheel.name.lower().startswith(prefix):
            return wheel
    return None


def _download(dist: str, version: str, wheels: Path) -> Path:
    wheel = _find_wheel(wheels, dist, version)
    if wheel is not None:
        return wheel
    wheels.mkdir(parents=True, exist_ok=True)
    print(f"downloading {dist}=={version} ...", file=sys.stderr, flush=True)
    cmd = [sys.executable, "-m", "pip", "download", "--no-deps", "--only-binary=:all:",
           "--dest", str(wheels), f"{dist}=={version}"]
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)
    wheel = _find_wheel(wheels, dist, version)
    if wheel is None:
        raise RuntimeError(f"pip download {dist}=={version} produced no wheel in {wheels}")
    return wheel


def _unpack(wheel: Path, dest: Path) -> None:
    """Extract only the .py files: the linters read nothing else."""
    tmp = dest.with_name(dest.name + ".partial")
    with zipfile.ZipFile(wheel) as zf:
        for member in zf.namelist():
            if member.endswith(".py") and ".." not in member.split("/"):
                zf.extract(member, tmp)
    tmp.rename(dest)


def ensure(name: str) -> Path:
    """Return the corpus directory for ``name``, downloading it if needed."""
    dist, version, subdir = CORPORA[name]
    root = cache_dir()
    dest = root / "src" / f"{dist}-{version}"
    if not dest.is_dir():
        wheel = _download(dist, version, root / "wheels")
        _unpack(wheel, dest)
    corpus = dest / subdir
    if not corpus.is_dir():
        raise RuntimeError(f"{corpus} missing: the {dist} {version} wheel has no {subdir}/")
    return corpus


def py_files(directory: Path) -> list[Path]:
    return sorted(p for p in directory.rglob("*.py") if p.is_file())


def count_lines(files: list[Path]) -> int:
    """Physical lines of the files."""
    return sum(len(f.read_bytes().splitlines()) for f in files)


def typical_file(name: str, corpus: Path) -> Path:
    """The single-file benchmark target; the median-sized file if the preferred one is gone."""
    preferred = corpus / TYPICAL_FILE[name]
    if preferred.is_file():
        return preferred
    files = sorted(py_files(corpus), key=lambda f: f.stat().st_size)
    return files[len(files) // 2]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--corpus", action="append", choices=list(CORPORA),
                        help="only this corpus (repeatable); default: all")
    parser.add_argument("--list", action="store_true", help="print the corpus directories only")
    parser.add_argument("--no-torchfix", action="store_true",
                        help="do not create the TorchFix virtualenv")
    args = parser.parse_args(argv)

    names = args.corpus or list(CORPORA)
    dirs = {name: ensure(name) for name in names}
    if args.list:
        for d in dirs.values():
            print(d)
        return 0

    print(f"cache: {cache_dir()}")
    print(f"{'corpus':<10} {'version':<10} {'files':>6} {'lines':>9}  directory")
    total_files = total_lines = 0
    for name, d in dirs.items():
        files = py_files(d)
        lines = count_lines(files)
        total_files += len(files)
        total_lines += lines
        print(f"{name:<10} {CORPORA[name][1]:<10} {len(files):>6} {lines:>9}  {d}")
    print(f"{'all':<10} {'':<10} {total_files:>6} {total_lines:>9}")

    if not args.no_torchfix:
        sys.path.insert(0, str(Path(__file__).resolve().parent))
        import torchfix_env

        print(f"torchfix: {torchfix_env.ensure()}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
