#!/bin/bash
# verify --cost on models of the truth corpus (transformers, moderate size), side by side on the lent
# GPU: one invocation per model, each with its own timeout. Run from a copy of the project with the
# wheels unpacked in /tmp/site and on PYTHONPATH (bench/truth/README.md). Writes $OUT/cost-<model>.json,
# .html, .txt, .stderr.log and times.txt.
#   COST_MODELS="switch_transformers jetmoe" COST_TIMEOUT=540 OUT=out bash bench/cost/truth_run.sh
# A model's call arguments: COST_KWARGS_<model>='{"use_cache": false}'.
set -u
OUT=${OUT:-bench/cost/out}
mkdir -p "$OUT"
for model in $COST_MODELS; do
    (
        start=$(date +%s)
        kwargs_var="COST_KWARGS_${model//-/_}"
        dir=${model//-/_}  # the model type (nllb-moe) → its module's folder (nllb_moe)
        TRUTH_LIB=transformers TRUTH_NAME=$model TRUTH_SIZE=moderate TRUTH_KWARGS=${!kwargs_var:-} \
        TORCHINDUCTOR_COMPILE_THREADS=${COST_THREADS:-4} timeout ${COST_TIMEOUT:-540} python -m compilelint verify \
            /tmp/site/transformers/models/$dir/modeling_$dir.py --example bench/fix/truth_models.py:targets \
            --cost --unsafe-fixes --no-cache --device cuda --output-format json -o "$OUT/cost-$model.json" \
            2> "$OUT/cost-$model.stderr.log"
        echo "$model: verify --cost exit $? after $(( $(date +%s) - start )) s" | tee -a "$OUT/times.txt"
    ) &
done
wait
python - "$OUT" $COST_MODELS <<'PY'
import json, os, sys
from compilelint.report.cost import render_text
from compilelint.report.html import render_html
out = sys.argv[1]
for model in sys.argv[2:]:
    path = f"{out}/cost-{model}.json"
    if not os.path.exists(path):
        print(f"{model}: no result")
        continue
    data = json.load(open(path))
    open(f"{out}/cost-{model}.html", "w").write(render_html(data))
    text = render_text(data)
    open(f"{out}/cost-{model}.txt", "w").write(text)
    print(text)
PY
