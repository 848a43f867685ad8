"""encodec's residual vector quantizer, original against fixed, where encodec does not import (no
torchaudio): ROOT holds a stub package `encodec/` (an empty `__init__.py`, the library's `distrib.py`
and `quantization/`, as installed or as `check --fix --unsafe-fixes` wrote them). Built as the truth
corpus builds it, eval, one eager call (the k-means init, which the default run makes eagerly), then
three `torch.compile(backend="eager")` calls; prints the breaks (compilelint's count, as truth.py's)
and whether the outputs equal the original's eager ones.

    PYTHONPATH=<einops>:<this repository> python fixes7_encodec_probe.py ROOT
"""
import sys

import torch

from compilelint.verify.child import reset_dynamo
from compilelint.verify.events import Capture, dedupe, metrics_events
from compilelint.verify.prove import breaks

sys.path.insert(0, sys.argv[1])
from encodec.quantization import vq  # noqa: E402


def build():
    torch.manual_seed(0)
    g = torch.Generator().manual_seed(0)
    return vq.ResidualVectorQuantizer(dimension=16, n_q=4, bins=32).eval(), torch.randn(1, 16, 100, generator=g)


model, x = build()
with torch.no_grad():
    reference = model(x, sample_rate=100, bandwidth=2.0)
model, x = build()
with torch.no_grad():
    model(x, sample_rate=100, bandwidth=2.0)
    reset_dynamo()
    with Capture() as cap:
        compiled = torch.compile(model, backend="eager")
        outs = [compiled(x, sample_rate=100, bandwidth=2.0) for _ in range(3)]
events = dedupe(cap.events + metrics_events())
lines = sorted({f"{e['file'].rsplit('/', 1)[-1]}:{e['line']}" for e in events if e["event"] != "recompile"})
print(sys.argv[1], "breaks", breaks(events), lines)
print("equal", torch.equal(outs[-1].quantized, reference.quantized), torch.equal(outs[-1].codes, reference.codes))
