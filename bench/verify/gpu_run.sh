#!/usr/bin/env bash
# The GPU half of verify: run on a CUDA machine from the repository root. Writes its reports to
# $OUT (default bench/verify/out). Needs torch with CUDA and pytest; installs compilelint itself
# without dependencies (check and verify need only click at run time).
set -u
OUT="${OUT:-bench/verify/out}"
mkdir -p "$OUT"
export PYTHONUNBUFFERED=1
python3 -m pip install -q --no-deps --no-build-isolation -e . >"$OUT/install.log" 2>&1 || { cat "$OUT/install.log"; exit 1; }
python3 - >"$OUT/device.json" <<'PY'
import json, platform, torch
print(json.dumps({"torch": torch.__version__, "cuda": torch.version.cuda, "python": platform.python_version(),
                  "device": torch.cuda.get_device_name(0) if torch.cuda.is_available() else None}))
PY
cat "$OUT/device.json"
for backend in eager inductor; do
  echo "== selftest --device cuda --backend $backend"
  python3 -m compilelint.verify.selftest --device cuda --backend "$backend" --out "$OUT/selftest-cuda-$backend.json"
  echo "exit $?"
done
echo "== compilelint verify (real check findings) --device cuda"
python3 -m compilelint verify fixtures/verify/models.py --example fixtures/verify/models.py:examples \
  --device cuda --output-format json -o "$OUT/verify-models-cuda.json"
echo "exit $?"
echo "== GPU tests"
python3 -m pytest -q tests/test_verify_gpu.py 2>&1 | tail -5
