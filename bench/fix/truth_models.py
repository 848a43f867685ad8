"""One model of the truth corpus as a `verify --example` factory, chosen by the environment.

`TRUTH_LIB` and `TRUTH_NAME` name the model (bench/truth/models.py builds it small, seeded, no
downloads; speech inputs made longer, see AUDIO_SAMPLES); `TRUTH_KWARGS` (JSON) adds call arguments, e.g. `{"use_cache": false}`. A factory
takes no arguments, and each child of `verify` builds only the model it runs: hence the environment.
"""
import json
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "truth"))

import models  # noqa: E402  (bench/truth/models.py)


# Speech models mask spans of 10 frames in train mode (SpecAugment); the corpus's 1600 samples give
# 4 frames, so their train run raises in eager (the truth's "Observed exception" breaks are that
# ValueError). 16000 samples give 49 frames: the train run completes and can be compared.
AUDIO_SAMPLES = 16000


def targets():
    import torch

    model, inputs = models.build(os.environ["TRUTH_LIB"], os.environ["TRUTH_NAME"])
    if "input_values" in inputs:
        inputs["input_values"] = torch.randn(inputs["input_values"].shape[0], AUDIO_SAMPLES)
    inputs.update(json.loads(os.environ.get("TRUTH_KWARGS") or "{}"))
    return [(model, (), inputs)]
