"""Snippets behind CL102's reads of a 0-d tensor's value that no `.item()` shows
(fixtures/regions/scalar_reads.py): indexing with the position a full `argmax` / `argmin` gives,
and `v in t` on a tensor (`Tensor.__contains__`). Run with bench/measure/run.py."""
import torch

ARGS = [(torch.randn(4, 3),)] * 2


def full_argmin_index(x):
    flat = x.flatten()
    idx = torch.argmin(torch.abs(flat))
    return flat[idx] + 1


def full_argmax_method_index(x):
    flat = x.flatten()
    return flat[flat.argmax()] * 2


def one_element_index(x):
    flat = x.flatten()
    idx = torch.argmin(torch.abs(flat))
    return flat[idx.view(1)] + 1


def argmax_over_dim_index(x):
    rows = torch.argmax(x, dim=1)
    return x[rows] + 1


def contains_on_tensor(x):
    t = (x > 0).long()
    if 0 not in t:
        return x + 1
    return x


def contains_on_shape(x):
    if 3 in x.shape:
        return x + 1
    return x


CASES = {f.__name__: (lambda f=f: f, ARGS) for f in (
    full_argmin_index, full_argmax_method_index, one_element_index, argmax_over_dim_index, contains_on_tensor, contains_on_shape)}
