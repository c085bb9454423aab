"""A measured run's ends are the sampler's readings plus the window's own figures."""

from __future__ import annotations

from ipctop.engine.config import RunConfig
from ipctop.engine.engine import Engine
from ipctop.live.measure import measure_engine


def test_a_measured_end_is_the_samplers_last_reading_of_it() -> None:
    # One pair across two CPUs: each end has its own binding to be read back.
    with Engine(RunConfig("sysv-sem", "cross", "threads", (0, 1))) as e:
        e.start(1)
        r = measure_engine(e, 0.6, 0.2, 0.2)
        counters = {(end.pair, end.role): e.counters.rounds(end.slot) for end in e.ends()}
    assert r.stalls is None, r.events  # a stalled window leaves rounds out of the rates
    last = r.timeline[-1]
    assert len(r.threads) == len(last.threads) == 2
    for end, seen in zip(r.threads, last.threads, strict=True):
        # Who it is, where it ran, its state and errors: the sampler's, not a second read.
        assert end.at_end is seen
        # The window's rounds are the counter's difference over it: no more than the
        # counter has in all, and at least what the sampler saw inside the window
        # (its first reading came after the window's start, its last before the end).
        first = next(t for t in r.timeline[0].threads if t.tid == seen.tid)
        inside = seen.rounds - first.rounds
        assert inside <= end.rounds <= counters[(seen.pair, seen.role)]
        assert end.ops_per_s == end.rounds / r.seconds
    assert [t.at_end.last_cpu for t in r.threads] == [0, 1]
    assert r.total_ops_per_s == sum(t.ops_per_s for t in r.threads) > 0
