"""The conditions around the node being walked, as the file walk records them: the compile
predicates a branch needs (guards: `if not is_compiling():`, `self.training`, a local holding a
predicate's value), the plain tests around it and the operands of `and`/`or`/`x if t else y` that
must let it run, and their text for the finding's note (`only when txt_ids.ndim == 3`).
"""
from __future__ import annotations

import ast
from typing import List, Tuple

from compilelint.analysis import libraries
from compilelint.analysis.astutil import is_self, walk
from compilelint.analysis.facts import PREDICATE_NAME
from compilelint.analysis.names import dotted
from compilelint.analysis.self_items import NON_TENSOR_ITEM, non_tensor_arm
from compilelint.summary import TRAINING


class Conditions:
    """The file walker's half that reads conditions: it needs the walker's `scope` (the guards,
    flags, plain conditions and tensor inference of the function being walked) and `resolve`."""

    def _only_guards(self, test) -> bool:
        """The test is made of compile predicates and `self.training` alone (guards say those)."""
        if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
            return self._only_guards(test.operand)
        if isinstance(test, ast.BoolOp):
            return all(self._only_guards(v) for v in test.values)
        if isinstance(test, ast.Name) and test.id in self.scope.implied:
            return False  # `self.training and self.dropout`: more than its guards
        return bool(self._branch_guards(test, True))

    def _binding_conditions(self, node) -> List[Tuple[ast.AST, bool]]:
        """The `if` branches a name in `node` needs to have run to hold a tensor (tensors.py)."""
        conditions = self.scope.inference.conditions
        out: List[Tuple[ast.AST, bool]] = []
        for sub in walk(node):
            if isinstance(sub, ast.Name) and id(sub) in conditions:
                out += [c for c in conditions[id(sub)] if c not in out]
        return out

    def _condition_text(self) -> str:
        """The innermost plain `if` around the node, as the note says it: `only when txt_ids.ndim == 3`."""
        if not self.scope.conditions:
            return ""
        test, branch = self.scope.conditions[-1]
        return self._test_text(test, branch)

    def _test_text(self, test, branch: bool) -> str:
        """`test` as the note says it, without the parts guards already say (`self.training`)."""
        if self._only_guards(test):
            return ""
        if branch and isinstance(test, ast.BoolOp) and isinstance(test.op, ast.And):  # guards say the rest
            test = ast.BoolOp(ast.And(), [v for v in test.values if not self._only_guards(v)])
            test = test.values[0] if len(test.values) == 1 else test
        text = ast.unparse(test)
        text = text if len(text) <= 60 else text[:59] + "…"
        return text if branch else f"not ({text})" if " " in text else f"not {text}"

    def _branch_guards(self, test: ast.AST, branch: bool) -> List[Tuple[str, bool]]:
        """Predicates that must have a given value for this branch of `if test:` to run."""
        if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
            return self._branch_guards(test.operand, not branch)
        if isinstance(test, ast.BoolOp):
            if isinstance(test.op, ast.And) and branch or isinstance(test.op, ast.Or) and not branch:
                return [g for v in test.values for g in self._branch_guards(v, branch)]
            return []
        if isinstance(test, ast.Call):
            func = test.func
            # `x.view(...)`: a method's last name is its own, however the receiver resolves: most
            # calls (every assignment's value is asked) are let go without resolving them
            # a method an opt-in row names with its class (`Flag.on()`) is kept by those two names
            opt_in = func.__class__ is ast.Attribute and libraries.opt_in_default(dotted(func) or "") is not None
            if func.__class__ is not ast.Attribute or opt_in or PREDICATE_NAME.search(func.attr):
                name = self.resolve(func) or dotted(func)
                if name and (opt_in or PREDICATE_NAME.search(name.rsplit(".", 1)[-1])):
                    return [(name, branch)]
        if isinstance(test, ast.Name) and test.id in self.scope.flags:
            name, polarity = self.scope.flags[test.id]
            return [(name, branch == polarity)]
        if isinstance(test, ast.Name) and branch and test.id in self.scope.implied:
            return list(self.scope.implied[test.id])  # true only where each operand was
        if isinstance(test, ast.Attribute) and test.attr == "training" and is_self(test.value):
            return [(TRAINING, branch)]
        if non_tensor_arm(test, branch, self.scope.stack, self.scope.node, self.resolve):
            return [(NON_TENSOR_ITEM, True)]  # `else` of `isinstance(v, Tensor)` over the object's items
        return []

    def _note_flag(self, node: ast.Assign):
        """`tracing = is_tracing(x)` / `eager = not is_compiling()`: the local is a predicate's value.
        `drop = self.training and self.dropout > 0`: the local is true only where every operand
        was, so `if drop:` needs the guards of each (its false branch needs nothing)."""
        if len(node.targets) != 1 or not isinstance(node.targets[0], ast.Name):
            return
        name = node.targets[0].id
        guards = self._branch_guards(node.value, True)
        self.scope.implied.pop(name, None)
        if len(guards) == 1 and not isinstance(node.value, ast.BoolOp) and guards[0][0] != TRAINING:
            self.scope.flags[name] = guards[0]
        else:
            self.scope.flags.pop(name, None)
            if guards and isinstance(node.value, ast.BoolOp) and isinstance(node.value.op, ast.And):
                self.scope.implied[name] = tuple(guards)

    def _short_circuit_guards(self, path: List[ast.AST]) -> List[Tuple[str, bool]]:
        """`not is_compiling() and t.any()`: an operand after a predicate runs only when it allows."""
        out: List[Tuple[str, bool]] = []
        for parent, child in zip(path, path[1:]):
            if isinstance(parent, ast.BoolOp):
                for value in parent.values:
                    if value is child:
                        break
                    out.extend(self._branch_guards(value, isinstance(parent.op, ast.And)))
            elif isinstance(parent, ast.IfExp) and child is not parent.test:
                out.extend(self._branch_guards(parent.test, child is parent.body))
        return out

    def _short_circuit_conditions(self, path: List[ast.AST]) -> List[Tuple[ast.AST, bool]]:
        """`a and b`: `b` runs only when `a` is true (`a or b`: when it is false); `x if a else y`:
        `x` only when `a` is true, `y` when it is false; as (test, branch)."""
        out: List[Tuple[ast.AST, bool]] = []
        for parent, child in zip(path, path[1:]):
            if isinstance(parent, ast.BoolOp):
                for value in parent.values:
                    if value is child:
                        break
                    out.append((value, isinstance(parent.op, ast.And)))
            elif isinstance(parent, ast.IfExp) and child is not parent.test:
                out.append((parent.test, child is parent.body))
        return out

    def _short_circuit_texts(self, path: List[ast.AST]) -> List[str]:
        """`x is not None and x.any()`: the operands that must let the flagged one run, for the note."""
        return [self._test_text(test, branch) for test, branch in self._short_circuit_conditions(path)]
