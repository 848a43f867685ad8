"""The `slower` rule of verify --fix's timing (timing.slower_every_round through fix_timing.Timing), on
made-up rounds: no torch, no children."""
from compilelint.verify.fix_timing import Side, Timing


def _timing(before, after):
    return Timing("#0 eval", Side([x / 1e3 for x in before]), Side([x / 1e3 for x in after]))


def test_slower_needs_every_round_slower_and_five_percent():
    assert _timing([1.0, 1.1, 0.9, 1.0, 1.05], [2.0, 2.1, 1.9, 2.2, 2.0]).slower
    assert not _timing([1.0, 1.1, 0.9, 1.0, 1.05], [1.0, 2.1, 1.9, 2.2, 2.0]).slower  # one round as fast: noise
    assert not _timing([1.00, 1.01, 1.00], [1.02, 1.03, 1.02]).slower  # separated, but 2 %
    assert not _timing([2.0, 2.1], [1.0, 1.1]).slower  # faster


def test_slower_needs_more_than_half_a_millisecond_a_call():
    # two processes on a loaded machine, sub-millisecond CPU models: 0.282 -> 0.343 and 0.314 -> 0.421 ms
    assert not _timing([0.28, 0.27, 0.29, 0.28, 0.28], [0.34, 0.35, 0.33, 0.34, 0.36]).slower
    assert not _timing([0.31, 0.30, 0.33, 0.31, 0.32], [0.42, 0.41, 0.43, 0.42, 0.44]).slower
    assert _timing([0.28, 0.27, 0.29, 0.28, 0.28], [0.94, 0.95, 0.93, 0.94, 0.96]).slower


def test_the_numbers_are_said():
    t = _timing([1.0, 1.2, 1.1], [3.0, 3.4, 3.2])
    assert t.text() == "#0 eval: compiled 1.1 ms ± 0.1 ms → 3.2 ms ± 0.2 ms (median of 3 interleaved rounds × 10 calls)"
    d = t.as_dict()
    assert d["slower"] and d["rounds"] == 3 and abs(d["after"]["median_s"] - 3.2e-3) < 1e-12
    assert Timing("#0 eval", Side(), Side(), error="the after run stopped before its round 1").text() == \
        "#0 eval: not timed (the after run stopped before its round 1)"
