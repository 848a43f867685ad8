"""Arguments that change from call to call, for `verify --example` factories.

    from compilelint.verify.varying import Varying
    def make():
        return denoise, Varying((x, 0.9), (x, 0.8), (x, 0.7)), {}

The compiled run calls the target once per argument tuple, in turn (at least as many calls as
verify's usual count, cycling), so recompiles that only a changing value causes (a Python
`timestep`, one layer after another through the same code) show up; the eager and fullgraph
runs use the first tuple. Plain tuples keep meaning "the same arguments every call".
"""
from __future__ import annotations


class Varying:
    def __init__(self, *calls):
        if not calls:
            raise ValueError("Varying needs at least one argument tuple")
        self.calls = [tuple(c) for c in calls]

    def map(self, fn) -> "Varying":
        return Varying(*(fn(c) for c in self.calls))


def args_at(args, index: int) -> tuple:
    """The arguments of call number `index`."""
    return args.calls[index % len(args.calls)] if isinstance(args, Varying) else args


def call_count(args, usual: int) -> int:
    return max(usual, len(args.calls)) if isinstance(args, Varying) else usual
