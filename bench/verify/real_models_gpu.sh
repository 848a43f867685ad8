#!/usr/bin/env bash
# bench/verify/real_models.py on the lent GPU machine (torch 2.11 with CUDA there): the truth
# corpus's 33 transformers models that break in eval, and 15 that compile clean, in eval and train.
# The libraries come as wheels in .whl/ (bench/truth/README.md says how to fetch them).
#   bash bench/verify/real_models_gpu.sh            # results in $OUT/real-models-cuda.{json,md}
set -u
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl || exit 1
python3 -m pip install -q --no-index --no-deps --no-build-isolation -e . || exit 1
export PYTHONPATH=/tmp/site PYTHONUNBUFFERED=1
BREAKING=bart,bigbird_pegasus,blenderbot,blenderbot-small,ctrl,flaubert,fsmt,higgs_audio_v2,jetmoe,led,longformer,longt5,m2m_100,marian,mbart,moonshine,mra,mt5,mvp,nllb-moe,openai_privacy_filter,pegasus,pegasus_x,plbart,prophetnet,rwkv,seamless_m4t,seamless_m4t_v2,switch_transformers,t5,umt5,vits,xlm
CLEAN=bert,llama,gpt2,mistral,qwen2,roberta,gemma,phi,opt,bloom,falcon,gpt_neox,mixtral,qwen3,vit
python3 bench/verify/real_models.py --models "${MODELS:-$BREAKING,$CLEAN}" --device cuda -j "${JOBS:-14}" \
  --out "$OUT" --tag real-models-cuda --timeout "${TIMEOUT:-240}" 2>&1 | tee "$OUT/real-models-cuda.log"
