"""Snippets behind the reach through properties and `with` (fixtures/regions: property_getters.py,
context_managers.py) and through a decorator's wrapper (measured; the engine does not follow
decorators yet: in transformers their wrappers' debug paths need keyword-flag feasibility
first), the table of functions Dynamo refuses (CL206, data/dynamo_skips-*.json), augmented
updates of a buffer (not CL217) and class attribute assignment (run with bench/measure/run.py;
two calls each). Class attribute assignment
breaks on torch 2.11 ("Failed to trace builtin operator": `setattr` on a type; the device probe
and gpytorch's settings context managers in the truth corpus) and is traced on 2.13."""
import functools
import pickle
import time

import torch
from torch import nn

X = lambda: torch.randn(8)


def remembered(method):
    @functools.wraps(method)
    def lookup(self, *args, **kwargs):
        key = pickle.dumps(kwargs)
        if key not in self.store:
            self.store[key] = method(self, *args, **kwargs)
        return self.store[key]
    return lookup


def registered(fn):
    print("registering", fn.__name__)
    return fn


class Guard:
    def __enter__(self):
        time.sleep(0)
        return self

    def __exit__(self, *exc):
        return False


class Flag:
    state = False

    @classmethod
    def set(cls, value):
        cls.state = value


class M(nn.Module):
    def __init__(self, body):
        super().__init__()
        self.store = {}
        self.register_buffer("stats", torch.zeros(8, dtype=torch.long))
        self.body = body

    @remembered
    def memo(self):
        return self.stats.float() + 1

    @registered
    def plain(self):
        return self.stats.float() + 1

    @property
    def slow(self):
        time.sleep(0)
        return 2.0

    def forward(self, x):
        return self.body(self, x)


def _memoized(self, x):
    return x * self.memo()


def _registered(self, x):
    return x * self.plain()


def _property(self, x):
    return x * self.slow


def _with_enter(self, x):
    with Guard():
        return x + 1


def _jit_isinstance(self, x):
    if torch.jit.isinstance(x, torch.Tensor):
        x = x + 1
    return x


def _inference_mode_enabled(self, x):
    if torch.is_inference_mode_enabled():
        return x - 1
    return x


def _buffer_update(self, x):
    self.stats *= 1 - (x > 0).long()
    self.stats += 1
    return x * 2


def _class_attribute(self, x):
    Flag.set(True)
    return x * 2


CASES = {name: (lambda f=f: M(f), [(X(),)] * 2) for name, f in {
    "memoizing_decorator": _memoized, "decorator_returning_the_function": _registered, "property": _property,
    "with_enter": _with_enter, "jit_isinstance": _jit_isinstance, "inference_mode_enabled": _inference_mode_enabled,
    "buffer_augmented_update": _buffer_update, "class_attribute": _class_attribute}.items()}
