#!/usr/bin/env bash
# The truth corpus on the lent GPU machine (16 cores; torch 2.11 there): the libraries come as
# wheels in .whl/ (see bench/truth/README.md), the models run on its CPU cores, one process each.
#   bash bench/truth/device_run.sh transformers [timm diffusers]          # breaks and recompiles
#   LINES=1 bash bench/truth/device_run.sh transformers timm diffusers    # executed lines (eager)
#   VARIANTS=1 bash bench/truth/device_run.sh transformers timm diffusers            # the variants' runs
#   VARIANTS=1 LINES=1 bash bench/truth/device_run.sh transformers timm diffusers    # and their lines
# Results land in $OUT as <lib>.json / <lib>.lines.json.gz, or <lib>.variants.json /
# <lib>.variants.lines.json.gz with VARIANTS=1 (to be committed as bench/truth/<lib>-<ver>-torch2.11.variants...).
set -u
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl || exit 1
export PYTHONPATH=/tmp/site:$PWD
v=${VARIANTS:+.variants}
for lib in "$@"; do
  if [ -n "${LINES:-}" ]; then
    python3 bench/truth/run.py --lib "$lib" --lines --only-ok ${ONLY:+--only "$ONLY"} ${VARIANTS:+--variants} -j "${JOBS:-16}" --timeout "${TIMEOUT:-120}" \
      --out "$OUT/$lib$v.lines.json.gz" > "$OUT/$lib$v.lines.log" 2>&1
    tail -1 "$OUT/$lib$v.lines.log"
  else
    python3 bench/truth/run.py --lib "$lib" ${ONLY:+--only "$ONLY"} ${VARIANTS:+--variants} -j "${JOBS:-16}" \
      --timeout "${TIMEOUT:-150}" --out "$OUT/$lib$v.json" > "$OUT/$lib$v.log" 2>&1
    tail -1 "$OUT/$lib$v.log"
  fi
done
