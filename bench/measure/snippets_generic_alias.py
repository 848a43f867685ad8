"""Snippets behind CL222 (generic-alias-subscript): a builtin type subscripted inside the compiled
function (run with bench/measure/run.py; one call each). A module-level `dict[str, Tensor]` is a
`types.GenericAlias`, held by Dynamo as an object: `list[Alias]` breaks; inline subscripts, classes,
`typing` aliases and strings do not."""
from typing import Dict, List, Union, cast

import torch

X = lambda: torch.randn(2, 4)
Detail = dict[str, torch.Tensor]
Pair = tuple[int, int]
Typed = Dict[str, torch.Tensor]


def list_of_alias(x):
    x = x * 2
    return cast(list[Detail], [x])[0] + 1


def dict_of_alias(x):
    x = x * 2
    return cast(dict[Pair, torch.Tensor], {0: x})[0] + 1


def union_of_aliases(x):
    x = x * 2
    return cast(Union[list[Detail], list[Pair]], [x])[0] + 1


def first_statement(x):
    return cast(list[Detail], [x])[0] + 1


def typing_outer(x):
    x = x * 2
    return cast(List[Detail], [x])[0] + 1


def inline(x):
    x = x * 2
    return cast(list[dict[str, torch.Tensor]], [x])[0] + 1


def over_a_class(x):
    x = x * 2
    return cast(list[torch.Tensor], [x])[0] + 1


def typing_alias(x):
    x = x * 2
    return cast(list[Typed], [x])[0] + 1


def as_string(x):
    x = x * 2
    return cast("list[Detail]", [x])[0] + 1


def local_annotation(x):
    x = x * 2
    ys: list[Detail] = [x]
    return ys[0] + 1


CASES = {f.__name__: (lambda f=f: f, [(X(),)]) for f in (
    list_of_alias, dict_of_alias, union_of_aliases, first_statement, typing_outer, inline, over_a_class,
    typing_alias, as_string, local_annotation)}
