"""Snippets behind fixtures/regions/function_defaults.py (the same code): a parameter defaulting to
a function runs that function when the call gives none (`plain`); a passed one runs instead
(`picky`: `_reduce_unused` never runs). Run with bench/measure/run.py."""
import torch

ARGS = [(torch.randn(4),)] * 2


def _reduce_sum(x):
    if x.sum() > 0:
        return x
    return -x


def _reduce_max(x):
    if x.max() > 1:
        return x
    return x * 2


def _reduce_unused(x):
    if x.min() < 0:
        return x
    return x


def combine(x, reduce_fn=_reduce_sum):
    return reduce_fn(x)


def combine_other(x, reduce_fn=_reduce_unused):
    return reduce_fn(x)


def plain(x):
    return combine(x)


def picky(x):
    return combine_other(x, _reduce_max)


CASES = {f.__name__: (lambda f=f: f, ARGS) for f in (plain, picky)}
