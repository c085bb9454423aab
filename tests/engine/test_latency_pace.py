"""Above 256 ends the sampler reads latency every 2 s (engine/latency_pace.py).

Real ends on the native engine: 129 pairs (258 ends) on the allowed CPUs, read
by a real Sampler; every round the ends time between two readings is in the
next one, so a reading 2 s apart holds 2 s of rounds, not one interval's.
"""

from __future__ import annotations

import os
import time

import pytest
from conftest import two_cpus

import ipctop.engine.objects as objects
from ipctop.engine.config import RunConfig
from ipctop.engine.engine import Engine
from ipctop.engine.latency import LatencySummary, PairLatency, whole
from ipctop.engine.latency_pace import (
    EVERY_SAMPLE_ENDS,
    LONG_SPAN_S,
    latency_due,
    latency_span_s,
    span_note,
)
from ipctop.engine.sample import Sample, ThreadSample
from ipctop.engine.sampler import Sampler
from ipctop.live.priority import MonitorPriority
from ipctop.live.session import Session

native = pytest.mark.skipif(objects._native is None, reason="needs the C extension")
CPUS = tuple(sorted(os.sched_getaffinity(0))[:2])
INTERVAL = 0.25


def test_every_sample_up_to_256_ends_then_every_2_s() -> None:
    assert latency_span_s(EVERY_SAMPLE_ENDS) == 0.0 and span_note(EVERY_SAMPLE_ENDS) == ""
    assert latency_span_s(EVERY_SAMPLE_ENDS + 2) == LONG_SPAN_S == 2.0
    assert "every 2 s above 256 threads" in span_note(258)
    assert latency_due(10.0, 9.9, 256, 0.5), "256 ends: every sample"
    assert latency_due(10.0, None, 2048, 0.5), "the first reading always"
    assert not latency_due(10.0, 8.5, 2048, 0.5)  # 1.5 s: not yet
    assert latency_due(10.0, 8.25, 2048, 0.5)  # 1.75 s: within half an interval of 2 s


def _samples(pairs: int, seconds: float) -> list[Sample]:
    config = RunConfig(workload="sysv-msg", cpus=CPUS, latency_every=1)
    with Engine(config) as engine:
        engine.start(pairs)
        # Raised as every command raises its monitor: at nice 0 beside 258 busy ends
        # this thread was preempted between a reading's rates and its latency, and
        # the two windows drifted apart by a tenth (after the tmux tests, 12-07).
        ends = {e.tid for e in engine.ends()}
        priority = MonitorPriority()
        priority.apply(ends)
        sampler = Sampler(engine, interval=INTERVAL)
        try:
            sampler.sample()  # the prime: the windows below start here
            got = []
            end = time.monotonic() + seconds
            while time.monotonic() < end:
                time.sleep(INTERVAL)
                got.append(sampler.sample())
            return got
        finally:
            sampler.close()
            priority.restore(ends)


@native
@two_cpus
def test_258_real_ends_are_read_every_2_s_and_no_round_is_lost() -> None:
    samples = _samples(129, 6.0)
    read = [i for i, s in enumerate(samples) if s.latency]
    assert len(read) >= 2 and len(read) < len(samples), "the samples between carry none"
    # From the first reading in the loop on (the prime's first pass over 258 new
    # ends takes a second, and its histograms are read at its end).
    last, rounds, checked = samples[read[0]].t, 0.0, 0
    for s in samples[read[0] + 1 :]:
        rounds += sum(t.ops_per_s * s.dt for t in s.threads if t.role == "A")
        span = s.t - last
        # A reading comes once 2 s (less half an interval) have passed, never before.
        assert bool(s.latency) == (span >= LONG_SPAN_S - INTERVAL / 2), (span, len(s.latency))
        if not s.latency:
            continue
        assert {p.pair for p in s.latency} == set(range(129)) | {-1}
        every = whole(s.latency)
        assert every is not None
        # Every round A timed since the last reading is in this one: the rates and the
        # histograms are read a few ms apart while 258 ends run, hence the 10 %.
        assert 0.9 * rounds <= every.rtt.n <= 1.1 * rounds, (every.rtt.n, rounds)
        checked += 1
        last, rounds = s.t, 0.0
    assert checked >= 1


@native
@two_cpus
def test_256_real_ends_have_a_reading_in_every_sample() -> None:
    samples = _samples(128, 1.2)
    assert samples and all(len(s.latency) == 129 for s in samples)


def _sample(t: float, latency: tuple[PairLatency, ...]) -> Sample:
    threads = (ThreadSample(0, "A", 100, 0, 0, 0, 1e5), ThreadSample(0, "B", 101, 0, 0, 0, 1e5))
    return Sample(t, 0.5, 1, threads, 2e5, latency=latency)


def test_the_session_holds_the_last_reading_between_readings() -> None:
    summary = LatencySummary(10, 5000.0, 4000.0, 9000.0, 9500.0, 9900.0)
    reading = (PairLatency(0, summary, summary),)
    s = Session(workload="sysv-msg")
    s.feed(_sample(0.5, reading))
    s.feed(_sample(1.0, ()))
    s.feed(_sample(1.5, ()))
    assert s.latency == reading and s.latency_t == 0.5
    assert list(s.latency_p99[0]) == [9000.0], "one history entry per reading"
    s.feed(_sample(2.5, reading))
    assert s.latency_t == 2.5 and list(s.latency_p99[0]) == [9000.0, 9000.0]
