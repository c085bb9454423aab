"""A measured run's ends are the sampler's readings: who they are at the window's end,
and their rounds, rates and calls per operation over the samples' own span."""

from __future__ import annotations

import math
import statistics
import time

import pytest

from ipctop.engine.config import RunConfig
from ipctop.engine.engine import Engine, resolve_engine
from ipctop.engine.sample import Sample
from ipctop.engine.sampler import Sampler
from ipctop.engine.workloads.msgbench import LIFECYCLE_OPS
from ipctop.live.measure import measure_engine

native = pytest.mark.skipif(resolve_engine() != "native", reason="needs the native engine")


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


def test_a_late_reading_is_not_followed_by_one_at_once(monkeypatch) -> None:
    # One reading is taken 0.3 s late (the sampler's thread held off the CPU, as a
    # loaded box does; injected here so that it happens every run). The schedule
    # moves on, and the next reading comes at least a quarter interval after it:
    # taken at once, it made a window of a few ms, two lines at the same t in run.
    real = Sampler._reading
    calls = [0]

    def late(self: Sampler) -> Sample:
        calls[0] += 1
        if calls[0] == 4:
            time.sleep(0.3)
        return real(self)

    monkeypatch.setattr(Sampler, "_reading", late)
    with Engine(RunConfig("sysv-sem", "same", "threads", (0,))) as e:
        e.start(1)
        r = measure_engine(e, 1.0, 0.1, 0.1)
    gaps = [s.dt for s in r.timeline]
    assert calls[0] > 4 and max(gaps) > 0.3, gaps  # the late one was in the window
    assert min(gaps) >= 0.1 / 4 - 0.002, gaps


def calls_per_s(start: Sample, timeline: tuple[Sample, ...]) -> list[list[float]]:
    """Each end's calls of each operation per second, from a timeline alone: its counts
    at the first reading and the last, over the intervals' summed length."""
    first = {(t.pair, t.role, t.tid): t.ops for t in start.threads}
    seconds = sum(s.dt for s in timeline)
    return [
        [(b - a) / seconds for a, b in zip(first[(t.pair, t.role, t.tid)], t.ops, strict=True)]
        for t in timeline[-1].threads
    ]


@native
def test_a_lifecycle_runs_calls_are_rebuilt_from_its_timeline() -> None:
    cfg = RunConfig("sysv-lifecycle", "same", "threads", (0,), "native", queues=256)
    with Engine(cfg) as e:
        e.start(2)
        r = measure_engine(e, 1.0, 0.2, 0.25)
    assert r.stalls is None, r.events  # a stalled window leaves calls out of the rates
    assert r.start is not None and r.op_calls is not None
    per_end = calls_per_s(r.start, r.timeline)
    assert len(per_end) == 2 and all(len(x) == len(LIFECYCLE_OPS) for x in per_end)
    assert list(r.op_calls) == list(LIFECYCLE_OPS)
    for k, name in enumerate(LIFECYCLE_OPS):
        rates = [x[k] for x in per_end]
        got = r.op_calls[name]
        assert math.isclose(got.per_s, sum(rates), rel_tol=1e-9), (name, got, rates)
        assert math.isclose(got.avg, statistics.fmean(rates), rel_tol=1e-9)
        assert math.isclose(got.stddev, statistics.stdev(rates), rel_tol=1e-9, abs_tol=1e-6)
        assert math.isclose(got.min, min(rates), rel_tol=1e-9)
        assert math.isclose(got.max, max(rates), rel_tol=1e-9)
        assert got.n is None
    assert r.op_calls["msgget"].min > 0, r.op_calls
    # The rounds of the same readings: an end's rate is its rounds over that span.
    for end in r.threads:
        assert end.ops_per_s == end.rounds / r.seconds
    # The figures reported stay msgbench's own: each phase timed by the ends, over the
    # repeats the window finished (256 queues repeat many times a second).
    assert r.ops is not None and list(r.ops) == list(LIFECYCLE_OPS)
    assert all(s.n is not None and s.n >= 1 for s in r.ops.values()), r.ops


def test_a_workload_without_operations_has_no_calls() -> None:
    with Engine(RunConfig("sysv-sem", "same", "threads", (0,))) as e:
        e.start(1)
        r = measure_engine(e, 0.3, 0.1, 0.1)
    assert r.op_calls is None and r.ops is None
    assert all(t.ops == () for s in r.timeline for t in s.threads)
