"""fixtures/precision/unbindable_call.py (CL220): a call retried on TypeError that reaches a forward
unable to take its arguments (`Mixed`: a keyword, `Wide`: a positional too many) breaks; over
forwards that take them (`Uniform`, `Open`: `**kwargs`) nothing breaks. Run with bench/measure/run.py."""
import torch

import fixture

R = fixture.load("fixtures/precision/unbindable_call.py")
SOURCE = R.__file__
ARGS = [(torch.randn(2, 3), torch.ones(2))] * 2

CASES = {
    "keyword_mixed": (lambda: R.Mixed(), ARGS),
    "positional_wide": (lambda: R.Wide(), ARGS),
    "keyword_uniform": (lambda: R.Uniform(), ARGS),
    "keyword_open": (lambda: R.Open(), ARGS),
}
