"""Snippets that run the code of fixtures/precision/module_hooks.py: a module hook registered in
compiled code breaks in the hook handle's constructor ("setattr() on unsupported type", GB0467 on
torch 2.13), in a `@contextmanager` body and in the forward; one registered in `__init__` does not.
Run with run.py."""
import torch

import fixture

F = fixture.load("fixtures/precision/module_hooks.py")
SOURCE = F.__file__

CASES = {"in_context_manager": (F.Tasked, [(torch.randn(3),)] * 2),
         "in_forward": (F.Watched, [(torch.randn(3),)] * 2),
         "in_init": (F.Hooked, [(torch.randn(3),)] * 2),
         "tensor_hook": (F.Gradient, [(torch.randn(3, requires_grad=True),)] * 2)}
