"""--think-ns and the latency stamps: a one-way latency is the message's flight,
not the sender's think before it (issue 23, item 9)."""

from __future__ import annotations

import os
import time

import pytest

from ipctop.engine import latency
from ipctop.engine.config import RunConfig
from ipctop.engine.engine import Engine
from ipctop.engine.objects import _native
from ipctop.engine.outside_cpu import BUSY_PCT, OutsideCpu

THINK_NS = 200_000  # each end spins 200 µs per round, between its wake-up and its post


def _directions(config: RunConfig, seconds: float = 0.6):
    """The round trip and each direction's one-way latency of pair 0 over a window."""
    with Engine(config) as engine:
        engine.start(1)
        tracker = latency.Tracker(engine.counters.latency)
        time.sleep(0.3)  # past the first corrections of the spin count
        tracker.read(engine.pairs)
        time.sleep(seconds)
        tracker.read(engine.pairs)
        rtt, ab, ba = tracker.last[engine.pairs[0].index]
    return latency.summarize(rtt), latency.summarize(ab), latency.summarize(ba)


@pytest.mark.skipif(_native is None, reason="the native extension is not built")
@pytest.mark.parametrize("workload", ["sysv-msg", "sysv-sem", "pipe"])
def test_one_way_latency_does_not_carry_the_senders_think(workload: str) -> None:
    cpus = tuple(sorted(os.sched_getaffinity(0)))[:1]
    config = RunConfig(workload=workload, cpus=cpus, latency_every=1, think_ns=THINK_NS)
    others = OutsideCpu()
    rtt, ab, ba = _directions(config)
    busy = others.pct()
    if busy is not None and busy > BUSY_PCT:
        # A woken end waits behind whatever else runs on its CPU: a wake-up then takes
        # longer than the think, and the test could not tell where the stamp was read.
        pytest.skip(f"other processes used {busy:.0f} % of a CPU meanwhile: too busy to judge")
    if min(ab.n, ba.n) < 20:
        pytest.skip(f"the box left the pair {min(ab.n, ba.n)} timed rounds: too few to judge")
    # The post stamp is read after the think, so a one-way latency is the wake-up
    # alone. Were it read before (the wake-up's clock reused), every one-way would
    # be at least the sender's spin, ~200 µs: the median sits far from either side.
    for name, got in (("A to B", ab), ("B to A", ba)):
        assert got.p50 < THINK_NS / 2, f"{name} one-way p50 {got.p50:.0f} ns with a 200 µs think"
    # The round trip still holds the peer's think: the stamps moved, not the work.
    assert rtt.p50 > THINK_NS / 2
