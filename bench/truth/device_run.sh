#!/usr/bin/env bash
# The truth corpus on the lent GPU machine (16 cores; torch 2.11 there): the libraries come as
# wheels in .whl/ (see bench/truth/README.md), the models run on its CPU cores, one process each.
#   bash bench/truth/device_run.sh transformers [timm diffusers]          # breaks and recompiles
#   LINES=1 bash bench/truth/device_run.sh transformers timm diffusers    # executed lines (eager)
#   VARIANTS=1 bash bench/truth/device_run.sh transformers timm diffusers            # the variants' runs
#   VARIANTS=1 LINES=1 bash bench/truth/device_run.sh transformers timm diffusers    # and their lines
#   MISSING=1 [LINES=1] bash bench/truth/device_run.sh torchmetrics   # only the models the committed file lacks
#   RETORCH=1 MISSING=1 VARIANTS=1 [LINES=1] bash bench/truth/device_run.sh vector_quantize_pytorch  # and what another torch made
# Results land in $OUT as <lib>.json / <lib>.lines.json.gz, or <lib>.variants.json /
# <lib>.variants.lines.json.gz with VARIANTS=1 (to be committed as bench/truth/<lib>-<ver>-torch2.11.variants...).
set -u
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl || exit 1
export PYTHONPATH=/tmp/site:$PWD
v=${VARIANTS:+.variants}
tv=$(python3 -c "import torch; print('.'.join(torch.__version__.split('+')[0].split('.')[:2]))")
for lib in "$@"; do
  kind=$v${LINES:+.lines}.json${LINES:+.gz}
  committed=$(ls bench/truth/"$lib"-*-torch"$tv$kind" 2>/dev/null | head -1)
  # MISSING=1 finishes a run cut short: start from the committed file, run only what it lacks
  [ -n "${MISSING:-}" ] && [ -n "$committed" ] && cp "$committed" "$OUT/$lib$kind"
  if [ -n "${LINES:-}" ]; then
    python3 bench/truth/run.py --lib "$lib" --lines --only-ok ${MISSING:+--missing} ${RETORCH:+--retorch} ${ONLY:+--only "$ONLY"} ${VARIANTS:+--variants} -j "${JOBS:-16}" --timeout "${TIMEOUT:-120}" \
      --out "$OUT/$lib$kind" > "$OUT/$lib$v.lines.log" 2>&1
    tail -1 "$OUT/$lib$v.lines.log"
  else
    python3 bench/truth/run.py --lib "$lib" ${MISSING:+--missing} ${RETORCH:+--retorch} ${ONLY:+--only "$ONLY"} ${VARIANTS:+--variants} -j "${JOBS:-16}" \
      --timeout "${TIMEOUT:-150}" --out "$OUT/$lib$kind" > "$OUT/$lib$v.log" 2>&1
    tail -1 "$OUT/$lib$v.log"
    # the LINES=1 run that follows (--only-ok) reads which models ran from the truth file beside run.py
    python3 -c "import json, sys, shutil; d = json.load(open(sys.argv[1])); shutil.copy(sys.argv[1], f'bench/truth/{d[\"lib\"]}-{d[\"version\"]}-torch{d[\"torch\"]}$v.json')" "$OUT/$lib$kind"
  fi
done
