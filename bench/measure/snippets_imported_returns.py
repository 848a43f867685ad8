"""Snippets behind tensor inference through the return annotations of other files' functions
(fixtures/regions/imported_returns: the helpers are that fixture's `calc/checks.py`, imported from
there; each case is one branch of its `Score.forward`). Run with bench/measure/run.py."""
import math
import os
import sys

import torch

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "fixtures", "regions",
                                "imported_returns"))
from calc.checks import count_and_size, flatten_pair, pieces, positions, total, untyped_size  # noqa: E402

ARGS = [(torch.randn(4, 3), torch.randint(0, 2, (4, 3)))] * 2


def tuple_part(preds, target):
    preds, target = flatten_pair(preds, target)
    if not target.sum():
        return preds
    return preds + 1


def whole_result(preds, target):
    t = total(preds)
    if t > 0:
        preds = preds * 2
    return preds


def tensor_part(preds, target):
    hits, n = count_and_size(preds)
    if hits > 0:
        preds = preds - 1
    return preds


def int_part(preds, target):
    hits, n = count_and_size(preds)
    if n > 4:
        preds = preds + 1
    return preds


def untyped_int(preds, target):
    if untyped_size(preds) > 2:
        preds = preds * 3
    return preds


def untyped_plus_tensor(x, target):
    mixed = untyped_size(x) + x
    if mixed.sum() > 0:
        x = mixed
    return x


def list_of_tensors(preds, target):
    whole = pieces(preds)
    if whole:
        preds = preds + 2
    return preds


def standard_library(preds, target):
    if math.floor(2.5) > 1:
        preds = preds / 2
    return preds


def dict_part(preds, target):
    where, _ = positions(preds)
    if 3 in where:
        preds = preds * 4
    return preds


CASES = {f.__name__: (lambda f=f: f, ARGS) for f in (
    tuple_part, whole_result, tensor_part, int_part, untyped_int, untyped_plus_tensor, list_of_tensors,
    standard_library, dict_part)}
