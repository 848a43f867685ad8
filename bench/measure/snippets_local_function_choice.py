"""Snippets behind fixtures/regions/local_function_choice.py (the same code): a local bound to one of
two module functions runs the one its branch picks (`small`: `_count_small`, `large`:
`_count_large`); `_never_called` is bound and never runs. Run with bench/measure/run.py."""
import torch


def _count_small(x):
    return x.bincount()


def _count_large(x):
    return x.unique()


def _never_called(x):
    return x.nonzero()


def count(x):
    if x.numel() <= 50:
        update_fn = _count_small
    else:
        update_fn = _count_large
    unused = _never_called
    return update_fn(x), unused


def counter(x):
    return count(x)[0]


CASES = {"small": (lambda: counter, [(torch.randint(0, 3, (8,)),)] * 2),
         "large": (lambda: counter, [(torch.randint(0, 3, (80,)),)] * 2)}
