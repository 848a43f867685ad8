#!/bin/bash
# verify --cost on the three models of models.py at their GPU size, on the lent GPU (torch 2.11, CUDA).
# Run from a copy of the project with compilelint importable (PYTHONPATH) and libcst installed.
# Writes $OUT/<model>.json (what verify --cost printed), <model>.html and <model>.txt (the same
# data rendered), <model>.stderr.log, times.txt and gpu.txt.
set -u
OUT=${OUT:-bench/cost/out}
mkdir -p "$OUT"
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,temperature.gpu,utilization.gpu --format=csv > "$OUT/gpu.txt" 2>&1
python -c "import torch, sys; print('torch', torch.__version__, 'python', sys.version.split()[0])" >> "$OUT/gpu.txt"
# One invocation per model, so a model that runs out of time loses only its own result.
MODELS=${COST_MODELS:-LoggedBlock MoE Top2MoE}  # e.g. COST_MODELS="MoE Top2MoE"
for model in $MODELS; do
    start=$(date +%s)
    COST_ONLY=$model COST_SIZE=${COST_SIZE:-gpu} timeout ${COST_TIMEOUT:-200} python -m compilelint verify \
        bench/cost/models.py --example bench/cost/models.py:targets --cost --unsafe-fixes --isolated --no-cache \
        --output-format json -o "$OUT/$model.json" 2> "$OUT/$model.stderr.log"
    echo "$model: verify --cost exit $? after $(( $(date +%s) - start )) s" | tee -a "$OUT/times.txt"
done
python - "$OUT" $MODELS <<'PY'
import json, os, sys
from compilelint.report.cost import render_text
from compilelint.report.html import render_html
out = sys.argv[1]
for model in sys.argv[2:]:
    path = f"{out}/{model}.json"
    if not os.path.exists(path):
        print(f"{model}: no result")
        continue
    data = json.load(open(path))
    open(f"{out}/{model}.html", "w").write(render_html(data))
    text = render_text(data)
    open(f"{out}/{model}.txt", "w").write(text)
    print(text)
PY
