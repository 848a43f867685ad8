#!/usr/bin/env bash
# The truth corpus on the lent GPU machine (16 cores; torch 2.11 there): the libraries come as
# wheels in .whl/ (see bench/truth/README.md), the models run on its CPU cores, one process each.
#   bash bench/truth/device_run.sh transformers [timm diffusers]          # breaks and recompiles
#   LINES=1 bash bench/truth/device_run.sh transformers timm diffusers    # executed lines (eager)
set -u
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl || exit 1
export PYTHONPATH=/tmp/site:$PWD
for lib in "$@"; do
  if [ -n "${LINES:-}" ]; then
    python3 bench/truth/run.py --lib "$lib" --lines --only-ok -j "${JOBS:-16}" --timeout "${TIMEOUT:-120}" \
      --out "$OUT/$lib.lines.json.gz" > "$OUT/$lib.lines.log" 2>&1
    tail -1 "$OUT/$lib.lines.log"
  else
    python3 bench/truth/run.py --lib "$lib" ${ONLY:+--only "$ONLY"} -j "${JOBS:-16}" --timeout "${TIMEOUT:-150}" \
      --out "$OUT/$lib.json" > "$OUT/$lib.log" 2>&1
    tail -1 "$OUT/$lib.log"
  fi
done
