"""One model of the truth corpus as a `verify --example` factory, chosen by the environment.

`TRUTH_LIB` and `TRUTH_NAME` name the model (bench/truth/models.py builds it small, seeded, no
downloads); `TRUTH_KWARGS` (JSON) adds call arguments, e.g. `{"use_cache": false}`; `TRUTH_MODE`
(`eval` or `train`) sets the module's mode (left as built when unset). A factory
takes no arguments, and each child of `verify` builds only the model it runs: hence the environment.
"""
import json
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "truth"))

import models  # noqa: E402  (bench/truth/models.py)


def targets():
    model, inputs = models.build(os.environ["TRUTH_LIB"], os.environ["TRUTH_NAME"])
    if "input_values" in inputs and not os.environ.get("TRUTH_MODELS_AUDIO"):
        inputs["input_values"] = _old_audio(os.environ["TRUTH_NAME"])
    inputs.update(json.loads(os.environ.get("TRUTH_KWARGS") or "{}"))
    if os.environ.get("TRUTH_MODE"):
        model.train(os.environ["TRUTH_MODE"] == "train")
    return [(model, (), inputs)]


def _old_audio(name):
    """The speech input of the committed results (2026-11-22), made before bench/truth/models.py moved
    from 1600 to 16000 samples: 16000 samples drawn after the 1600 (the same seed, the same build).
    `TRUTH_MODELS_AUDIO=1` (truth.py --fresh) takes models.py's own input instead."""
    import torch

    torch.manual_seed(0)
    models._transformers_class(name)(models.tiny_config(name))
    torch.randn(models.BATCH, 1600)
    return torch.randn(models.BATCH, 16000)
