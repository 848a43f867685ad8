#!/usr/bin/env bash
# bench/fix/latency.py on the lent GPU machine (torch 2.11, CUDA): compiled latency before -> after
# the fixes. The libraries come as wheels in .whl/ (transformers 5.23, libcst); the fixed files as
# an overlay folder (transformers/models/...: what `check --fix --unsafe-fixes` wrote on a copy of
# the same transformers, as truth.py does; made beforehand, as fixing the whole library takes minutes).
#   bash bench/fix/latency_run.sh models overlay   # the breaking models of truth-gpu.json, both modes
#   bash bench/fix/latency_run.sh moe              # bench/cost's MoE and Top2MoE at 64, 128, 8 experts
#   bash bench/fix/latency_run.sh ro+moe overlay   # the models under reduce-overhead alone (a child per
#                                                  # mode) beside the MoE scan; one lock: they time in turn
#   ONLY=a,b BREADTH=c,d bash bench/fix/latency_run.sh kept overlay   # each mode its own run (a child per
#       # model and mode), and the breadth models named in BREADTH beside them; the .md files are left
#       # out (8 files come back): `latency.py --merge` writes them from the JSON
# Results land in $OUT/latency*.{json,md,log} and $OUT/gpu.txt.
set -u
WHAT="${1:-models}"
OVERLAY="${2:-overlay}"
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl || exit 1
python3 -m pip install -q --no-index --no-deps --no-build-isolation -e . || exit 1
export PYTHONPATH=/tmp/site:$PWD PYTHONUNBUFFERED=1 TORCHINDUCTOR_COMPILE_THREADS="${THREADS:-3}"
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,temperature.gpu,utilization.gpu --format=csv > "$OUT/gpu.txt" 2>&1
python3 -c 'import torch, transformers; print("torch", torch.__version__, "transformers", transformers.__version__)' | tee -a "$OUT/gpu.txt"
LIMIT="${LIMIT:-550}"
moe() {
  timeout "$LIMIT" python3 bench/fix/latency.py --moe --experts "${EXPERTS:-64,128,8}" --modes "${MOE_MODES:-default}" \
    --device cuda -j "${MOE_JOBS:-3}" --lock /tmp/latency-gpu.lock --out "$OUT" > "$OUT/latency-moe.log" 2>&1
}
models() {  # $1: modes, $2: tag, $3: truth.py's result (default: truth-gpu.json), $4: model names (default: all)
  timeout "$LIMIT" python3 bench/fix/latency.py --device cuda --overlay "$OVERLAY" --modes "$1" -j "${JOBS:-4}" \
    --lock /tmp/latency-gpu.lock --tag "$2" --out "$OUT" ${3:+--truth "$3"} ${4:+--only "$4"} > "$OUT/$2.log" 2>&1
}
case "$WHAT" in
  moe) moe ;;
  models) models default,reduce-overhead latency ;;
  ro+moe) models reduce-overhead latency-ro & moe & wait ;;
  kept) models default latency-default "" "${ONLY:-}" & models reduce-overhead latency-ro "" "${ONLY:-}" &
        if [ -n "${BREADTH:-}" ]; then JOBS="${BREADTH_JOBS:-2}" models default,reduce-overhead latency-breadth \
          bench/fix/gpu-breadth/truth-gpu-breadth.json "$BREADTH" & fi
        wait; rm -f "$OUT"/latency*.md ;;
esac
if [ "$WHAT" = kept ]; then python3 bench/fix/latency.py --merge "$OUT"/latency-default.json "$OUT"/latency-ro.json --out /tmp --tag merged | tail -n 22; else tail -n 30 "$OUT"/latency*.md; fi
