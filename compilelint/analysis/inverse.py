"""An inverted index kept between project passes: target → [(key, item)], over an answer per key.

The project pass inverts two maps over the reached functions on every pass: each function's
calls into "the calls reaching each function" (`ResolvedCalls.callers`), and each frame's edges
into its callers (`frames.all_frames`). In the language server an edit changes the answers of a
few functions (those of the edited file, or only those whose lines moved), so the index is kept
while the keys (the reach, the same dict object) are, and made again only where an answer is
another object than last time's. Each target's list stays in the order a fresh build gives:
keys in their order, then each key's pairs in order.
"""
from __future__ import annotations

from typing import Callable, Dict, Iterable, List, Tuple

# A key's answer → its (target, item) pairs, in order.
Pairs = Callable[[object], Iterable[Tuple[str, object]]]


class Inverse:
    def __init__(self, keys, pairs: Pairs):
        self.keys = keys  # the dict whose keys (in order) the index is over; kept by identity
        self.pairs = pairs
        self.position = {key: i for i, key in enumerate(keys)}
        self.answers: Dict[str, object] = {}
        self.nonempty: Dict[str, object] = {}  # key → its answer, where that answer has pairs
        self.by_target: Dict[str, List[Tuple[str, object]]] = {}

    def build(self, answers: Iterable[Tuple[str, object]]) -> "Inverse":
        """A fresh index: (key, answer) for every key, in the keys' order."""
        for key, answer in answers:
            self.answers[key] = answer
            found = False
            for target, item in self.pairs(answer):
                self.by_target.setdefault(target, []).append((key, item))
                found = True
            if found:
                self.nonempty[key] = answer
        return self

    def refresh(self, answers: Iterable[Tuple[str, object]]) -> "Inverse":
        """The index with (key, answer) for every key now: the lists of the targets of the keys
        whose answer is another object than before (before or now) are made again, once each."""
        touched: Dict[str, set] = {}  # target → the keys that point at it now and did not before
        for key, answer in answers:
            before = self.answers[key]
            if before is answer:
                continue
            self.answers[key] = answer
            for target, _ in self.pairs(before):
                touched.setdefault(target, set())
            mine = [target for target, _ in self.pairs(answer)]
            for target in mine:
                touched.setdefault(target, set()).add(key)
            if mine:
                self.nonempty[key] = answer
            else:
                self.nonempty.pop(key, None)
        for target, new in touched.items():
            keys = new.union(key for key, _ in self.by_target.get(target, ()))
            made = [(key, item) for key in sorted(keys, key=self.position.__getitem__)
                    for t, item in self.pairs(self.answers[key]) if t == target]
            if made:
                self.by_target[target] = made
            else:
                self.by_target.pop(target, None)
        return self
