"""Snippets behind the recompile rules of issue 14 (run with bench/measure/run.py)."""
import torch
from torch import nn

X = lambda n=4: torch.randn(n, 8)


def first_call_none():
    class M(nn.Module):
        def __init__(self):
            super().__init__()
            self.cache = None

        def forward(self, x):
            if self.cache is None:
                self.cache = torch.zeros(8)
            return x + self.cache
    return M()


def flag_flipped():
    class M(nn.Module):
        def __init__(self):
            super().__init__()
            self.warmed_up = False

        def forward(self, x):
            if not self.warmed_up:
                self.warmed_up = True
                return x * 2
            return x * 3
    return M()


def seed_zero():
    class M(nn.Module):
        def __init__(self):
            super().__init__()
            self.seed = 0

        def forward(self, x):
            if self.seed == 0:
                self.seed = 1234
            return x * 2
    return M()


class Layer(nn.Module):
    def __init__(self, layer_idx):
        super().__init__()
        self.layer_idx = layer_idx
        self.proj = nn.Linear(8, 8)

    def forward(self, x):
        if self.layer_idx == 0:
            x = x * 2
        return self.proj(x)


class LayerIndexRead(nn.Module):
    def __init__(self, layer_idx):
        super().__init__()
        self.layer_idx = layer_idx
        self.proj = nn.Linear(8, 8)

    def forward(self, x, caches):
        return self.proj(x) + caches[self.layer_idx]


LAYERS = [Layer(i) for i in range(10)]
READERS = [LayerIndexRead(i) for i in range(10)]
CACHES = [torch.randn(8) for _ in range(10)]


def per_layer_compile():
    def run(layer, x):
        return layer(x)
    return run


def per_layer_index_read():
    def run(layer, x, caches):
        return layer(x, caches)
    return run


def whole_model_layers():
    class Model(nn.Module):
        def __init__(self):
            super().__init__()
            self.layers = nn.ModuleList(Layer(i) for i in range(10))

        def forward(self, x):
            for layer in self.layers:
                x = layer(x)
            return x
    return Model()


def sizes_identity():
    def f(x):
        return x * 2
    return f


def sizes_one_branch():
    def f(x):
        if x.shape[0] == 1:
            return x * 2
        return x * 3
    return f


def mark_dynamic_then_one():
    def f(x):
        return x * 2
    return f


def _marked(n):
    x = X(n)
    torch._dynamo.mark_dynamic(x, 0)
    return (x,)


def int_step_arg():
    def f(x, step):
        return x * step
    return f


def float_timestep_arg():
    def f(x, t):
        return x * t
    return f


def float_timestep_branch():
    def f(x, t):
        if t > 0.5:
            return x * 2
        return x * t
    return f


def int_step_modulo():
    def f(x, step):
        if step % 2 == 0:
            return x * 2
        return x
    return f


def id_of_input():
    def f(x):
        k = id(x)
        return x * 2, k
    return f


def id_key_dict():
    memo = {}

    def f(x):
        key = id(x)
        if key not in memo:
            memo[key] = x.sum()
        return x * 2
    return f


CASES = {
    "first_call_none": (first_call_none, [(X(),)] * 3),
    "flag_flipped": (flag_flipped, [(X(),)] * 3),
    "seed_zero": (seed_zero, [(X(),)] * 3),
    "per_layer_compile": (per_layer_compile, [(layer, X()) for layer in LAYERS]),
    "per_layer_index_read": (per_layer_index_read, [(layer, X(), CACHES) for layer in READERS]),
    "whole_model_layers": (whole_model_layers, [(X(),)] * 3),
    "sizes_1_2_3_4": (sizes_identity, [(X(1),), (X(2),), (X(3),), (X(4),)]),
    "sizes_2_3_1_4": (sizes_identity, [(X(2),), (X(3),), (X(1),), (X(4),)]),
    "sizes_one_branch_2_3_1_4": (sizes_one_branch, [(X(2),), (X(3),), (X(1),), (X(4),)]),
    "mark_dynamic_then_one": (mark_dynamic_then_one, lambda: [_marked(2), _marked(3), _marked(1), _marked(4)]),
    "int_step_arg": (int_step_arg, [(X(), s) for s in range(1, 6)]),
    "float_timestep_arg": (float_timestep_arg, [(X(), 1.0 - s / 10) for s in range(1, 6)]),
    "float_timestep_branch": (float_timestep_branch, [(X(), 1.0 - s / 10) for s in range(1, 10)]),
    "int_step_modulo": (int_step_modulo, [(X(), s) for s in range(1, 6)]),
    "id_of_input": (id_of_input, lambda: [(X(),) for _ in range(4)]),
    "id_key_dict": (id_key_dict, lambda: [(X(),) for _ in range(4)]),
}


def flag_flipped_after():
    class M(nn.Module):
        def __init__(self):
            super().__init__()
            self.first = True

        def forward(self, x):
            if self.first:
                x = x * 2
            self.first = False
            return x
    return M()


CASES["flag_flipped_after"] = (flag_flipped_after, [(X(),)] * 3)
