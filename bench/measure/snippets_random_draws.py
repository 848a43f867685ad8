"""Snippets behind CL219 (random-number-arithmetic): numbers Python's `random` draws inside the
compiled function (run with bench/measure/run.py; one call each). Dynamo traces `randint`,
`randrange` and `uniform`, a 0-d tensor standing in for the number: Python arithmetic with it
breaks, a tensor operand and `int(...)` of it do not."""
import random
from random import randint, randrange, uniform

import torch

X = lambda: torch.randn(2, 4)


def randrange_plus_one(x):
    return x * (randrange(4) + 1)


def one_plus_randrange(x):
    return x * (1 + randrange(4))


def randint_plus_one(x):
    return x * (randint(1, 4) + 1)


def uniform_plus_one(x):
    return x * (uniform(0, 1) + 1)


def module_spelling(x):
    return x * (random.randrange(4) + 1)


def named_draw(x):
    k = randrange(4)
    return x * (k + 1)


def augmented_draw(x):
    k = randint(1, 3)
    k += 1
    return x * k


def optional_steps(x, steps=None):
    steps = steps if steps is not None else randrange(3) + 1
    return x * steps


def tensor_operand(x):
    return x * randint(1, 4) + randrange(4)


def int_first(x):
    return x * (int(randrange(4)) + 1)


CASES = {f.__name__: (lambda f=f: f, [(X(),)]) for f in (
    randrange_plus_one, one_plus_randrange, randint_plus_one, uniform_plus_one, module_spelling, named_draw,
    augmented_draw, optional_steps, tensor_operand, int_first)}
