"""Snippets behind fixtures/regions/torch_masks.py: a tensor made with `dtype=torch.bool` is a mask,
and `.values` / `.indices` of torch's (values, indices) results are tensors. Run with
bench/measure/run.py."""
import torch

ARGS = [(torch.randn(4, 3),)] * 2


def bool_dtype_mask(x):
    keep = torch.ones_like(x, dtype=torch.bool)
    return x[keep].sum()


def long_dtype_index(x):
    order = torch.zeros_like(x, dtype=torch.long)
    return x[order].sum()


def values_masked(x):
    top = torch.max(x, 0).values
    return top[torch.isfinite(top)].sum()


def indices_index(x):
    where = torch.max(x, 0).indices
    return x[where].sum()


CASES = {f.__name__: (lambda f=f: f, ARGS) for f in (bool_dtype_mask, long_dtype_index, values_masked, indices_index)}


def elementwise_min(x):
    low = torch.min(x, x.flip(0))
    if low.sum() == 1:
        x = x + 1
    return x


def min_over_dim(x):
    values, where = torch.min(x, 1)
    if where.shape[0] == 4:
        x = x - values.unsqueeze(1)
    return x


CASES.update({f.__name__: (lambda f=f: f, ARGS) for f in (elementwise_min, min_over_dim)})


def builtin_min_of_tensor(x):
    if min(x.flatten()) == 0.0:
        x = x + 1
    return x


def builtin_min_of_shape(x):
    if min(x.shape) == 4:
        x = x - 1
    return x


CASES.update({f.__name__: (lambda f=f: f, ARGS) for f in (builtin_min_of_tensor, builtin_min_of_shape)})
