#!/bin/bash
# Record what `check` prints on the bench corpora and the fixtures, to prove a refactoring changes
# nothing: run once before (bench/same_output.sh /tmp/before), once after, then `diff -r` the folders.
# Findings (json, both torch versions), reach notes and GB links (full), every fix (--unsafe-fixes --diff),
# and reach itself (--scope all).
set -u
OUT=${1:?usage: bench/same_output.sh OUTDIR}
mkdir -p "$OUT"
cd "$(dirname "$0")/.."
CL=${CL:-.venv/bin/compilelint}  # CL="env PYTHONPATH=DIR .venv/bin/python -m compilelint" checks another checkout
for d in $(.venv/bin/python bench/corpus.py --list) fixtures; do
  n=$(basename "$(dirname "$d")")-$(basename "$d")
  for tv in 2.13 2.11; do
    $CL check "$d" --select ALL --no-cache -j 2 --torch-version $tv --output-format json -q > "$OUT/$n-$tv.json" 2>&1
    $CL check "$d" --select ALL --no-cache -j 2 --torch-version $tv --output-format full -q > "$OUT/$n-$tv.full" 2>&1
  done
  $CL check "$d" --select ALL --no-cache -j 2 --unsafe-fixes --diff > "$OUT/$n.diff" 2>&1
  $CL check "$d" --select ALL --no-cache -j 2 --output-format concise --scope all > "$OUT/$n.scopeall" 2>&1
done
$CL rules > "$OUT/rules.txt" 2>&1
