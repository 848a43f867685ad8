"""The inverted index the language server keeps between passes equals a fresh build after every
change: answers replaced or kept, keys that come, go or change order."""
import random

from compilelint.project_pass.inverse import Inverse

NAMES = [f"f{i}" for i in range(12)]


def _pairs(answer):
    return answer  # an answer is its list of (target, item)


def _answer(rng):
    return [(rng.choice(NAMES), rng.randrange(100)) for _ in range(rng.randrange(4))]


def _keys(rng, keys):
    """The next reach: most often the same keys, else some come or go, now and then reordered."""
    names = list(keys)
    roll = rng.random()
    if roll < 0.3:
        return keys
    if roll < 0.8:
        for _ in range(rng.randrange(1, 3)):
            if names and rng.random() < 0.5:
                names.remove(rng.choice(names))
            else:
                missing = [n for n in NAMES if n not in names]
                if missing:
                    names.insert(rng.randrange(len(names) + 1), rng.choice(missing))
    else:
        rng.shuffle(names)
    return dict.fromkeys(names)


def test_the_kept_index_is_a_fresh_build_after_every_change():
    rng = random.Random(3)
    kept = Inverse(_pairs)
    keys = dict.fromkeys(NAMES[:8])
    answers = {name: _answer(rng) for name in NAMES}
    kinds = {"kept": 0, "followed": 0, "rebuilt": 0}
    for _ in range(600):
        previous = keys
        keys = _keys(rng, keys)
        for name in rng.sample(NAMES, rng.randrange(3)):
            answers[name] = _answer(rng)  # another object, maybe with the same pairs
        table = kept.answers
        kept.over(keys, ((k, answers[k]) for k in keys))
        fresh = Inverse(_pairs).over(keys, ((k, answers[k]) for k in keys))
        assert kept.by_target == fresh.by_target
        assert kept.nonempty == fresh.nonempty
        kinds["kept" if keys is previous else "followed" if kept.answers is table else "rebuilt"] += 1
    assert min(kinds.values()) > 50  # every way through was taken
