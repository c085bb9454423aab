"""A measured run's ends are the sampler's readings: who they are at the window's end,
and their rounds and rates over the samples' own span."""

from __future__ import annotations

import math

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
    # The window is the samples' span: from the priming reading to the last.
    assert r.seconds == sum(s.dt for s in r.timeline)
    for end, seen in zip(r.threads, last.threads, strict=True):
        # Who it is, where it ran, its state and errors: the sampler's, not a second read.
        assert end.at_end is seen
        # Its rounds are the sampler's readings at the window's two ends: what it saw in
        # the intervals after the first, plus the first interval's (its rate times its
        # length), and no more than the counter has in all.
        first = next(t for t in r.timeline[0].threads if t.tid == seen.tid)
        inside = seen.rounds - first.rounds
        assert math.isclose(end.rounds - inside, first.ops_per_s * r.timeline[0].dt, abs_tol=0.5)
        assert end.rounds <= counters[(seen.pair, seen.role)]
        assert end.ops_per_s == end.rounds / r.seconds
        # One source of truth: the end's window rate is its interval rates weighted by length.
        per_interval = [
            t.ops_per_s * s.dt for s in r.timeline for t in s.threads if t.tid == seen.tid
        ]
        assert math.isclose(end.ops_per_s, sum(per_interval) / r.seconds, rel_tol=1e-9)
    assert [t.at_end.last_cpu for t in r.threads] == [0, 1]
    assert r.total_ops_per_s == sum(t.ops_per_s for t in r.threads) > 0
    weighted = sum(s.total_ops_per_s * s.dt for s in r.timeline) / r.seconds
    assert math.isclose(r.total_ops_per_s, weighted, rel_tol=1e-9)
