"""An inverted index kept between project passes: target → [(key, item)], over an answer per key.

The project pass inverts two maps over the reached functions on every pass: each function's
calls into "the calls reaching each function" (`ResolvedCalls.callers`), and each frame's edges
into its callers (`frames.all_frames`). In the language server an edit changes the answers of a
few functions (those of the edited file, or only those whose lines moved) and, when it changes
what is reached, a few keys. So the index is kept between passes and made again only for the
targets of keys whose answer is another object than last time's, or that came or went. Each
target's list stays in the order a fresh build gives: keys in their order, then each key's pairs
in order; when the keys kept are not in the same order as before, it is built afresh.
"""
from __future__ import annotations

from typing import Callable, Dict, Iterable, List, Tuple

# A key's answer → its (target, item) pairs, in order.
Pairs = Callable[[object], Iterable[Tuple[str, object]]]


class Inverse:
    def __init__(self, pairs: Pairs):
        self.pairs = pairs
        self.keys = None  # the dict whose keys (in order) the index is over
        self.position: Dict[str, int] = {}
        self.answers: Dict[str, object] = {}
        self.nonempty: Dict[str, object] = {}  # key → its answer, where that answer has pairs
        self.by_target: Dict[str, List[Tuple[str, object]]] = {}

    def over(self, keys, answers: Iterable[Tuple[str, object]]) -> "Inverse":
        """The index over `keys` (a dict) with (key, answer) for each of them, in their order."""
        if keys is not self.keys and not self._follow(keys):
            self.__init__(self.pairs)
            self.keys, self.position = keys, {key: i for i, key in enumerate(keys)}
            return self._build(answers)
        return self._refresh(answers)

    def _build(self, answers) -> "Inverse":
        for key, answer in answers:
            self.answers[key] = answer
            found = False
            for target, item in self.pairs(answer):
                self.by_target.setdefault(target, []).append((key, item))
                found = True
            if found:
                self.nonempty[key] = answer
        return self

    def _follow(self, keys) -> bool:
        """Take `keys` as the new keys, when those kept are in the order they were: the keys gone
        leave the lists they were in (the new ones join in `_refresh`)."""
        if self.keys is None:
            return False
        position = {key: i for i, key in enumerate(keys)}
        kept = sorted((key for key in self.answers if key in position), key=self.position.__getitem__)
        if any(position[a] > position[b] for a, b in zip(kept, kept[1:])):
            return False
        for key in [key for key in self.answers if key not in position]:
            for target in {target for target, _ in self.pairs(self.answers.pop(key))}:
                left = [entry for entry in self.by_target[target] if entry[0] != key]
                if left:
                    self.by_target[target] = left
                else:
                    del self.by_target[target]
            self.nonempty.pop(key, None)
        self.keys, self.position = keys, position
        return True

    def _refresh(self, answers) -> "Inverse":
        """The lists of the targets of the keys whose answer is another object than before
        (before or now) are made again, once each."""
        touched: Dict[str, set] = {}  # target → the keys that point at it now
        for key, answer in answers:
            before = self.answers.get(key)
            if before is answer:
                continue
            self.answers[key] = answer
            if before is not None:
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
