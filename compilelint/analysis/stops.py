"""Decorators that stop torch.compile's tracing at a function: Dynamo calls it without tracing its
body (`torch.compiler.disable`), or takes it as one opaque op (custom ops, `allow_in_graph`,
`nonstrict_trace`). The file walk leaves the nested functions they decorate out of their
enclosing function; the project pass stops its reach there (`regions`).
"""
from __future__ import annotations

from typing import Iterable

DISABLE_DECORATORS = frozenset({
    "torch.compiler.disable", "torch._dynamo.disable", "torch._disable_dynamo",
    "torch._dynamo.eval_frame.disable",
})
OPAQUE_DECORATORS = frozenset({
    "torch.library.custom_op", "torch._library.custom_ops.custom_op", "torch.library.impl",
    "torch.library.register_fake", "torch.library.register_kernel", "torch._dynamo.allow_in_graph",
    "torch.compiler.allow_in_graph", "torch._dynamo.nonstrict_trace", "torch.compiler.nonstrict_trace",
})  # not `torch.jit.unused` / `torch.jit.ignore`: TorchScript's markers; Dynamo traces through them


def bare(decorator: str) -> str:
    """A decorator's dotted name without the suffix the file analysis adds (`#cudagraph`)."""
    return decorator.split("#", 1)[0]


def is_stop_decorator(decorator: str, extra_stops: Iterable[str] = ()) -> bool:
    name = bare(decorator)
    return name in DISABLE_DECORATORS or name in OPAQUE_DECORATORS or name in set(extra_stops) or \
        any(name.endswith("." + s) for s in extra_stops)
