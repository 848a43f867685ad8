"""Snippets that run the code of fixtures/precision/super_property_read.py: a property overriding
its base's reads it through `super()`, and the first use that needs the value breaks (a method call:
"Unsupported method call", GB0156; a comparison of its attribute: "Unresolved GetAttrVariable
comparison", GB6215 on torch 2.13); an attribute read alone, a base method through `super()`, and a
method read without a call do not. Run with run.py."""
import torch

import fixture

F = fixture.load("fixtures/precision/super_property_read.py")
SOURCE = F.__file__

CASES = {"method_call": (F.Shifted, [(torch.randn(3),)] * 2),
         "method_call_flipped": (lambda: F.Shifted(flip=True), [(torch.randn(3),)] * 2),
         "compare_attribute": (F.Checked, [(torch.randn(3),)] * 2),
         "attribute_read_alone": (F.Peeked, [(torch.randn(3),)] * 2),
         "handed_to_helper": (F.Handed, [(torch.randn(3),)] * 2),
         "base_method_through_super": (F.Called, [(torch.randn(3),)] * 2),
         "annotated_parameter": (F.Spread, [(torch.randn(3),)] * 2),
         "method_read_not_called": (F.Kept, [(torch.randn(3),)] * 2)}
