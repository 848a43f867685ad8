"""Snippets behind the non-tensor arm of an `isinstance(item, Tensor)` test over the items of a
list an object fills itself (compilelint/analysis/self_items.py; run with bench/measure/run.py,
two calls each). Dynamo decides the test per item while tracing and traces only the arm each item
takes: the arm for items that are not tensors, which would break here (a deepcopy of an item that
holds a tensor breaks on torch 2.13, every deepcopy on torch 2.11), runs only when the object put
such an item into its list."""
import copy

import torch
from torch import nn

X = lambda: torch.randn(2, 4)


class Store(nn.Module):
    """Keeps what `put` gives it in a list attribute named at run time, and copies it back."""

    def __init__(self, put):
        super().__init__()
        self.names = ["seen"]
        self.seen = []
        self.put = put

    def snapshot(self):
        out = {}
        for name in self.names:
            value = getattr(self, name)
            if isinstance(value, torch.Tensor):
                out[name] = value.clone()
            else:
                out[name] = [v.clone() if isinstance(v, torch.Tensor) else copy.deepcopy(v) for v in value]
        return out

    def forward(self, x):
        self.seen = []
        self.seen.append(self.put(x))
        return x + len(self.snapshot()["seen"])


CASES = {
    # every item a tensor: the deepcopy arm is never traced
    "only_tensor_items": (lambda: Store(lambda x: x * 2), [(X(),)] * 2),
    # one item is a list holding a tensor: the arm runs and breaks (GB4198 on 2.13)
    "a_list_item": (lambda: Store(lambda x: [x]), [(X(),)] * 2),
}
