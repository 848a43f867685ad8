#!/usr/bin/env bash
# bench/fix/truth.py on the lent GPU machine: torch 2.11 (CUDA) there, the truth corpus's own
# torch, so the breaks it recorded (the config deepcopy of DynamicCache among them) are the ones
# measured; the models run on the GPU (--device cuda), 14 at a time on its 16 cores. The libraries
# come as wheels in $WHL (default .whl/; bench/truth/README.md says how to fetch them; add click==8.1.8 there).
#   bash bench/fix/device_run.sh 1/2     # the first half of the breaking models (about 6 minutes)
#   bash bench/fix/device_run.sh 2/2     # the second half
#   LIBS=e3nn,esm MODES=eval TAG=breadth bash bench/fix/device_run.sh   # other libraries, eval runs alone
#   LIBS=breadth MODES=eval TAG=breadth-1of4 bash bench/fix/device_run.sh 1/4   # every breadth library (a quarter per call)
# Results land in $OUT/truth-gpu-<i>of<n>.{json,md,diff} (or $OUT/truth-gpu-$TAG.*); merge the halves here with
#   python bench/fix/truth.py --merge truth-gpu-1of2.json truth-gpu-2of2.json --tag truth-gpu
set -u
PART="${1:-1/1}"
BREADTH=e3nn,encodec,esm,gpytorch,peft,sentence_transformers,speechbrain,stable_baselines3,torchmetrics,vector_quantize_pytorch,x_transformers
[ "${LIBS:-}" = breadth ] && LIBS=$BREADTH
TAG="truth-gpu-${TAG:-${PART/\//of}}"
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site ${WHL:-.whl}/*.whl || exit 1
# compilelint itself, installed editable as bench/verify/gpu_run.sh does: its rules ship as
# compilelint.rules only through the package mapping, and `python -m compilelint` from the
# repository root would otherwise find the bare package first
python3 -m pip install -q --no-index --no-deps --no-build-isolation -e . || exit 1
export PYTHONPATH=/tmp/site:$PWD PYTHONUNBUFFERED=1
python3 -c 'import torch, transformers; print("torch", torch.__version__, "cuda", torch.cuda.is_available(), "transformers", transformers.__version__)'
python3 bench/fix/truth.py --device cuda -j "${JOBS:-14}" --libs "${LIBS:-transformers,diffusers,timm}" --part "$PART" \
  --modes "${MODES:-eval,train}" ${ONLY:+--only "$ONLY"} \
  --tag "$TAG" --out "$OUT" --timeout "${TIMEOUT:-300}" 2>&1 | tee "$OUT/$TAG.log"
