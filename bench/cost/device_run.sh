#!/bin/bash
# verify --cost on the three models of models.py at their GPU size, on the lent GPU (torch 2.11, CUDA).
# Run from a copy of the project with compilelint importable (PYTHONPATH) and libcst installed.
# Writes $OUT/cost.json (what verify --cost printed), cost.html and cost.txt (the same data
# rendered), stderr.log and gpu.txt.
set -u
OUT=${OUT:-bench/cost/out}
mkdir -p "$OUT"
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,temperature.gpu,utilization.gpu --format=csv > "$OUT/gpu.txt" 2>&1
python -c "import torch, sys; print('torch', torch.__version__, 'python', sys.version.split()[0])" >> "$OUT/gpu.txt"
start=$(date +%s)
COST_SIZE=${COST_SIZE:-gpu} timeout ${COST_TIMEOUT:-540} python -m compilelint verify bench/cost/models.py \
    --example bench/cost/models.py:targets --cost --unsafe-fixes --isolated --no-cache \
    --output-format json -o "$OUT/cost.json" 2> "$OUT/stderr.log"
echo "verify --cost: exit $? after $(( $(date +%s) - start )) s" | tee -a "$OUT/stderr.log"
python - "$OUT" <<'PY'
import json, sys
from compilelint.report.cost import render_text
from compilelint.report.html import render_html
out = sys.argv[1]
data = json.load(open(f"{out}/cost.json"))
open(f"{out}/cost.html", "w").write(render_html(data))
text = render_text(data)
open(f"{out}/cost.txt", "w").write(text)
print(text)
PY
