"""The tracker's reading in one native call (lat_pairs) gives what it gave before.

Three readers of the same histograms, each a Tracker of its own: lat_pairs
(claims, the pass and every PairLatency made in C), the reading it replaced
(lat_read's tuples, made into objects in Python a pair at a time) and the
pure-Python reading (no extension). Planted histograms over readings in which
counts grow, new buckets appear, nothing happens, a slot goes to a new end, an
end's tid appears on the same End and pairs come and go; and real ends,
read from one copy of their block per step so that all three see the same
counts.
"""

from __future__ import annotations

import dataclasses
import os
import random
import time
from array import array
from types import SimpleNamespace
from typing import Any

import pytest
from conftest import wait_for

import ipctop.engine.objects as objects
from ipctop.engine import latency
from ipctop.engine.config import RunConfig
from ipctop.engine.engine import Engine, resolve_engine
from ipctop.engine.latency import LatencySummary, PairLatency, Tracker

HAS = objects._native is not None and hasattr(objects._native, "lat_pairs")
needs_pairs = pytest.mark.skipif(not HAS, reason="needs the C extension with lat_pairs")


def shallow(obj: object) -> dict[str, object]:
    """Each field of a (slotted) dataclass by name: vars() for a class without a dict."""
    return {f.name: getattr(obj, f.name) for f in dataclasses.fields(obj)}  # type: ignore[arg-type]


class LatReadTracker(Tracker):
    """Tracker.read as it was before lat_pairs (7125c1b): a claim per end in
    Python, lat_read, then a PairLatency made in Python per pair."""

    def read(self, pairs: Any) -> list[PairLatency]:
        two = [pair for pair in pairs if len(pair.ends) == 2]
        chosen = [(pair.index, pair.ends[0].slot, pair.ends[1].slot) for pair in two]
        slots = array("i", [slot for _, a, b in chosen for slot in (a, b)])
        all_rtt, all_oneway = latency.empty(), latency.empty()
        with self._lock:
            for pair in two:
                for end in pair.ends:
                    self._claim(end.slot, end.tid)
            self._snap, self._old = self._old, self._snap
            got = objects._native.lat_read(
                self.block.buf, self._snap, self._old, slots, all_rtt, all_oneway,
                latency.QUANTILES,
            )  # fmt: skip
            self._read = chosen
            self._all = (all_rtt, all_oneway)
        return [
            PairLatency(index, latency._summary(rtt), latency._summary(oneway))
            for (index, _, _), (rtt, oneway) in zip(chosen, got)
        ]


class PythonTracker(Tracker):
    """Tracker.read without the extension: the fallback and the reference."""

    def read(self, pairs: Any) -> list[PairLatency]:
        saved, objects._native = objects._native, None
        try:
            return super().read(pairs)
        finally:
            objects._native = saved


def _readers(block: Any) -> list[Tracker]:
    return [Tracker(block), LatReadTracker(block), PythonTracker(block)]


def _same_readings(readers: list[Tracker], pairs: Any) -> tuple[PairLatency, ...]:
    """Every reader's reading of `pairs` now, held to the first's, to the repr."""
    got = [r.readings(pairs) for r in readers]
    first = got[0]
    for other in got[1:]:
        assert other == first
        assert repr(other) == repr(first)
        assert [shallow(p) for p in other] == [shallow(p) for p in first]
        assert [(shallow(p.rtt), shallow(p.oneway)) for p in other] == [
            (shallow(p.rtt), shallow(p.oneway)) for p in first
        ]
    for p in first:
        assert type(p) is PairLatency
        assert type(p.rtt) is LatencySummary and type(p.oneway) is LatencySummary
    lasts = [r.last for r in readers]
    assert all(last == lasts[0] for last in lasts)
    return first


def test_lat_pairs_is_told_the_classes_as_their_dataclasses_are() -> None:
    pair_cls, pair_fields, summary_cls, summary_fields = latency._MADE
    assert pair_fields == tuple(f.name for f in dataclasses.fields(PairLatency))
    assert summary_fields == tuple(f.name for f in dataclasses.fields(LatencySummary))
    # n, mean, one field per quantile in QUANTILES' order, max: what lat_pairs fills
    assert summary_fields == ("n", "mean", "p50", "p99", "p999", "max")
    assert latency.QUANTILES == (0.5, 0.99, 0.999)
    # Made with object.__new__ and object.__setattr__ per field, which is all a
    # frozen dataclass's __init__ does while it has no hook of its own.
    for cls in (pair_cls, summary_cls):
        assert not hasattr(cls, "__post_init__")
        assert cls.__new__ is object.__new__


def _write(block: latency.LatencyBlock, slots: range, rng: random.Random, spread: float) -> None:
    for slot in slots:
        for off in (latency.RTT_OFFSET, latency.ONEWAY_OFFSET):
            for _ in range(rng.randrange(1, 150)):
                ns = int(rng.lognormvariate(8, spread))
                latency.record(block.buf, slot * latency.AREA + off, ns)


@needs_pairs
def test_lat_pairs_reads_what_lat_read_and_python_read_on_planted_histograms() -> None:
    rng = random.Random(29)
    block = latency.LatencyBlock(10)
    ends = [SimpleNamespace(slot=s, tid=100 + s) for s in range(10)]
    pairs = [SimpleNamespace(index=i, ends=tuple(ends[2 * i : 2 * i + 2])) for i in range(4)]
    # A unit of three ends is not timed: no reader lists it.
    pairs.append(SimpleNamespace(index=4, ends=(ends[8], ends[9], ends[0])))
    readers = _readers(block)
    try:
        seen = []
        for spread in (0.5, 0.5, 2.5):  # the same pairs list: the layout is kept
            _write(block, range(10), rng, spread)
            seen.append(_same_readings(readers, pairs))
        quiet = _same_readings(readers, pairs)  # nothing written since the last reading
        assert all(p.rtt.n == 0 and p.oneway.n == 0 for p in quiet)
        # The same End gets its tid (an end that was starting), and its slot was
        # the old end's: from zero, not from the old end's counts.
        block.clear(3)
        ends[3].tid = 999
        _write(block, range(10), rng, 1.0)
        seen.append(_same_readings(readers, pairs))
        _, a_to_b, b_to_a = readers[0].last[1]  # pair 1: slots 2 (A) and 3 (B)
        live = memoryview(block.buf)[3 * latency.AREA + latency.ONEWAY_OFFSET :].cast("Q")
        assert _count(a_to_b) == sum(live[1 : 1 + latency.BUCKETS]) > 0
        assert seen[-1][1].oneway.n == _count(a_to_b) + _count(b_to_a)
        del live
        # Pairs come and go in the same list (the engine appends and pops).
        pairs.pop(0)
        _write(block, range(10), rng, 1.5)
        seen.append(_same_readings(readers, pairs))
        pairs.insert(0, SimpleNamespace(index=0, ends=(ends[0], ends[1])))
        _write(block, range(10), rng, 0.3)
        seen.append(_same_readings(readers, pairs))
        assert [p.pair for p in seen[-1]] == [0, 1, 2, 3, -1]
        assert all(p.rtt.n > 0 for reading in seen[:3] for p in reading)
        assert seen[2][-1].rtt.max is not None and seen[2][-1].rtt.max > 1e5
    finally:
        block.close()


def _count(hist: bytearray) -> int:
    return sum(memoryview(hist).cast("Q")[1 : 1 + latency.BUCKETS])


@needs_pairs
def test_an_empty_reading_and_a_single_pair() -> None:
    block = latency.LatencyBlock(2)
    readers = _readers(block)
    try:
        assert _same_readings(readers, []) == ()
        ends = (SimpleNamespace(slot=0, tid=7), SimpleNamespace(slot=1, tid=8))
        pairs = [SimpleNamespace(index=0, ends=ends)]
        latency.record(block.buf, latency.RTT_OFFSET, 2**60)  # a sum past 2**53
        latency.record(block.buf, latency.RTT_OFFSET, 3)
        got = _same_readings(readers, pairs)
        assert len(got) == 1  # no all-pairs figure beside a single pair
        assert got[0].rtt.n == 2 and got[0].rtt.mean == (2**60 + 3) / 2
        assert got[0].oneway == latency.NOTHING_TIMED
    finally:
        block.close()


@needs_pairs
def test_bad_arguments_are_refused_not_read() -> None:
    native = objects._native
    block = latency.LatencyBlock(2)
    t = Tracker(block)
    try:
        args = [
            block.buf, t._snap, t._old, t._claimed, array("i", [0, 5]), array("q", [1, 2]),
            latency.empty(), latency.empty(), latency.QUANTILES, [0], latency._MADE,
        ]  # fmt: skip
        with pytest.raises(ValueError, match="outside the block"):
            native.lat_pairs(*args)
        args[4] = array("i", [0, 1])
        args[5] = array("q", [1])
        with pytest.raises(ValueError, match="tids"):
            native.lat_pairs(*args)
        args[5] = array("q", [1, 2])
        args[10] = (PairLatency, ("pair", "rtt"), LatencySummary, latency._MADE[3])
        with pytest.raises(ValueError, match="3 fields"):
            native.lat_pairs(*args)
    finally:
        block.close()


class _Copy:
    """One step's copy of a live block's first slots: what every reader reads."""

    def __init__(self, live: latency.LatencyBlock, slots: int) -> None:
        self.buf = bytearray(live.buf[: slots * latency.AREA])


@needs_pairs
@pytest.mark.parametrize("mode", ["threads", "processes"])
def test_lat_pairs_reads_what_the_others_read_on_real_ends(mode: str) -> None:
    if resolve_engine() != "native":
        pytest.skip("needs the native engine")
    cpus = tuple(sorted(os.sched_getaffinity(0)))[:2]
    config = RunConfig("sysv-sem", "same", mode, cpus, "native", latency_every=1)
    with Engine(config) as e:
        e.start(3)
        slots = 8  # 3 pairs, then one more: the first 8 slots hold every end
        copy = _Copy(e.counters.latency, slots)
        readers = _readers(copy)
        counted = 0
        first = e.pairs[0].ends[0].slot
        at_start = e.counters.rounds(first)
        for step in range(6):
            time.sleep(0.05)
            if step == 0:
                # Some timed rounds in the first step, however long a loaded box takes.
                wait_for(lambda: e.counters.rounds(first) - at_start >= 10, 30)
            if step == 3:
                e.remove_pair()  # its slots go back ...
                e.add_pair()  # ... and to the new pair's ends: new tids, from zero
            if step == 4:
                e.add_pair()
            copy.buf[:] = e.counters.latency.buf[: slots * latency.AREA]
            got = _same_readings(readers, e.pairs)
            counted += sum(p.rtt.n for p in got if p.pair >= 0)
        assert [p.pair for p in got] == [0, 1, 2, 3, -1]
        assert counted > 0
