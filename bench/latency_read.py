#!/usr/bin/env python3
"""What the sampler's latency reading costs a sample: today's against an older one.

Plants every end's round-trip and one-way histograms in a latency block as real
ends fill them (a body near 5 us, a tail to milliseconds, counted through the
used bits as native.h does), adds a sample's worth of rounds between readings,
and times, in ABBA blocks on one thread's CPU clock:
  A: the reading as it was, --before:
     7125c1b (the default): one native pass (lat_read) over the used buckets,
       a claim per end and a PairLatency made per pair in Python;
     aade49b: three takes a pair over every bucket, a merge, two sums into the
       all-pairs figure, two summaries, each a native call;
  B: Tracker.readings today: claims, the pass and every PairLatency in one
     native call (lat_pairs).
Prints ms of CPU a reading for each, the ratio B/A with its interval (unit: ABBA
blocks), the share of one CPU at 2 samples a second, and whether A and B gave
the same figures.

    python bench/latency_read.py [--pairs 256,1024] [--blocks 12] [--readings 5]
                                 [--before 7125c1b|aade49b|build --build OLD.so]
                                 [--spread pairs|oversubscribed]

--before build: A is today's reading on an older build of the extension (a
copy of its .so), its figures made as the dict-backed classes of before
2026-12-07. --spread oversubscribed plants what 1,024 pairs on 2 CPUs count:
166 buckets used an end-histogram, about 23 moving between readings (with
--rounds 25).
"""

from __future__ import annotations

import argparse
import importlib.util
import random
import sys
import time
from array import array
from dataclasses import fields, make_dataclass
from pathlib import Path
from types import SimpleNamespace
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from ipctop.analysis.stats import fmt_diff, paired_difference  # noqa: E402
from ipctop.engine import latency, objects  # noqa: E402
from ipctop.engine.latency import (  # noqa: E402
    AREA,
    ONEWAY_OFFSET,
    RTT_OFFSET,
    LatencyBlock,
    LatencySummary,
    PairLatency,
    Tracker,
    add,
    empty,
    merged,
    summarize,
    take,
)


class Reference:
    """The reading of aade49b: a fresh histogram per take, per pair."""

    def __init__(self, block: LatencyBlock) -> None:
        self.block = block
        self.prev: dict[tuple[int, int], bytearray] = {}

    def delta(self, slot: int, offset: int) -> bytearray:
        prev = self.prev.setdefault((slot, offset), empty())
        acc = empty()
        take(self.block.buf, slot * AREA + offset, prev, acc)
        return acc

    def readings(self, pairs: list) -> tuple[PairLatency, ...]:
        out, all_rtt, all_oneway = [], empty(), empty()
        for pair in pairs:
            a, b = pair.ends
            rtt = self.delta(a.slot, RTT_OFFSET)
            ba, ab = self.delta(a.slot, ONEWAY_OFFSET), self.delta(b.slot, ONEWAY_OFFSET)
            both = merged(ab, ba)
            add(all_rtt, rtt)
            add(all_oneway, both)
            out.append(PairLatency(pair.index, summarize(rtt), summarize(both)))
        out.append(PairLatency(-1, summarize(all_rtt), summarize(all_oneway)))
        return tuple(out)


class LatReadTracker(Tracker):
    """Tracker.read of 7125c1b: a claim per end in Python, lat_read, then a
    PairLatency made in Python per pair (also bench/sampler_scale.py's "before")."""

    def read(self, pairs: list) -> list[PairLatency]:
        two = [pair for pair in pairs if len(pair.ends) == 2]
        chosen = [(pair.index, pair.ends[0].slot, pair.ends[1].slot) for pair in two]
        slots = array("i", [slot for _, a, b in chosen for slot in (a, b)])
        all_rtt, all_oneway = empty(), empty()
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


def load_build(path: str) -> Any:
    """An older build of the extension (a copy of its .so), beside today's."""
    spec = importlib.util.spec_from_file_location("ipctop._native", path)
    if spec is None or spec.loader is None:
        raise SystemExit(f"{path}: not an extension module")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


# LatencySummary and PairLatency as they were before 2026-12-07: frozen dataclasses
# with a dict each, the same fields (what the slots saved is part of the change timed).
DictSummary = make_dataclass(
    "DictSummary", [(f.name, f.type) for f in fields(LatencySummary)], frozen=True
)
DictPair = make_dataclass("DictPair", [(f.name, f.type) for f in fields(PairLatency)], frozen=True)


class OtherBuild(Tracker):
    """Tracker.read as today, on another build of the extension (--build), its
    figures made as the dict-backed classes of before (the objects cost too)."""

    native: Any = None
    made = (
        DictPair, tuple(f.name for f in fields(DictPair)),
        DictSummary, tuple(f.name for f in fields(DictSummary)),
    )  # fmt: skip

    def read(self, pairs: list) -> list[PairLatency]:
        lay = self._layout_of(pairs)
        all_rtt, all_oneway = empty(), empty()
        with self._lock:
            self._snap, self._old = self._old, self._snap
            got = self.native.lat_pairs(
                self.block.buf, self._snap, self._old, self._claimed, lay.slots,
                lay.tid_words, all_rtt, all_oneway, latency.QUANTILES, lay.indexes, self.made,
            )  # fmt: skip
            self._read = lay.chosen
            self._all = (all_rtt, all_oneway)
        # As today's classes, so the figures compare (and the cost of that is not timed
        # apart: a few us a pair, against A).
        return got

    def readings(self, pairs: list) -> tuple[PairLatency, ...]:
        got = [_today(p) for p in self.read(pairs)]
        if len(got) > 1:
            got.append(self.all_pairs())
        return tuple(got)


def _today(p: Any) -> PairLatency:
    def summary(s: Any) -> LatencySummary:
        return LatencySummary(*(getattr(s, f.name) for f in fields(DictSummary)))

    return PairLatency(p.pair, summary(p.rtt), summary(p.oneway))


BEFORE = {"7125c1b": LatReadTracker, "aade49b": Reference, "build": OtherBuild}


def fill(
    block: LatencyBlock, slots: int, rounds: int, rng: random.Random, spread: str = "pairs"
) -> None:
    for slot in range(slots):
        for off in (RTT_OFFSET, ONEWAY_OFFSET):
            for _ in range(rounds):
                latency.record(block.buf, slot * AREA + off, int(SPREADS[spread](rng)))


SPREADS = {
    # 98 % near 5 us, 2 % a preempted round of up to 5 ms: a few pairs a CPU on a 2-CPU box
    "pairs": lambda rng: (
        rng.lognormvariate(8.5, 0.25) if rng.random() < 0.98 else rng.uniform(2e4, 5e6)
    ),
    # 1,024 pairs on 2 CPUs (2026-12-07): round trips near 4.4 ms, p99 3x that, a tail
    # to 130 ms; an end had used 166 buckets (median) and 23 moved in half a second.
    "oversubscribed": lambda rng: (
        rng.lognormvariate(15.3, 0.5) if rng.random() < 0.99 else rng.uniform(2e7, 1.3e8)
    ),
}


def used_buckets(block: LatencyBlock, slots: int) -> float:
    words = memoryview(block.buf).cast("Q")
    n = 0
    for slot in range(slots):
        for off in (RTT_OFFSET, ONEWAY_OFFSET):
            base = (slot * AREA + off) // 8 + 1 + latency.BUCKETS
            n += sum(bin(w).count("1") for w in words[base : base + latency.USED_WORDS])
    del words
    return n / (2 * slots)


def run(npairs: int, args: argparse.Namespace) -> None:
    rng = random.Random(5)
    block = LatencyBlock(2 * npairs)
    ends = [SimpleNamespace(slot=s, tid=1000 + s) for s in range(2 * npairs)]
    pairs = [SimpleNamespace(index=i, ends=(ends[2 * i], ends[2 * i + 1])) for i in range(npairs)]
    fill(block, 2 * npairs, 2000, rng, args.spread)
    OtherBuild.native = load_build(args.build) if args.build else None
    ref, new = BEFORE[args.before](block), Tracker(block)
    ref.readings(pairs), new.readings(pairs)

    def timed(reader) -> float:
        spent = 0.0
        for _ in range(args.readings):
            fill(block, 2 * npairs, args.rounds, rng, args.spread)  # the ends go on meanwhile
            t0 = time.thread_time()
            reader.readings(pairs)
            spent += time.thread_time() - t0
        return spent / args.readings * 1e3

    blocks = []
    for _ in range(args.blocks):
        a1, b1, b2, a2 = timed(ref), timed(new), timed(new), timed(ref)
        blocks.append(([a1, a2], [b1, b2]))
    # From the same reading on, both see the same counts: their figures must agree.
    ref.readings(pairs), new.readings(pairs)
    fill(block, 2 * npairs, args.rounds, rng, args.spread)
    same = ref.readings(pairs) == new.readings(pairs)
    a = sorted(x for pa, _ in blocks for x in pa)
    b = sorted(x for _, pb in blocks for x in pb)
    d = paired_difference(blocks)
    print(
        f"{npairs} pairs ({used_buckets(block, 2 * npairs):.0f} buckets used an end-histogram): "
        f"A ({args.before}) {a[len(a) // 2]:.2f} ms a reading, B (today) {b[len(b) // 2]:.2f} ms "
        f"(medians of {len(a)} x {args.readings} readings); B/A {fmt_diff(d)}; "
        f"at 2 samples/s {2 * b[len(b) // 2] / 10:.2f} % of a CPU against {2 * a[len(a) // 2] / 10:.2f} %; "
        f"figures identical: {same}"
    )
    block.close()


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--pairs", default="256,1024")
    p.add_argument("--blocks", type=int, default=12)
    p.add_argument("--readings", type=int, default=5)
    p.add_argument(
        "--rounds", type=int, default=50, help="rounds each histogram gains between readings"
    )
    p.add_argument("--before", choices=sorted(BEFORE), default="7125c1b", help="what A reads as")
    p.add_argument("--build", help="--before build: the older extension's .so (a copy)")
    p.add_argument("--spread", choices=sorted(SPREADS), default="pairs", help="what the ends count")
    args = p.parse_args()
    if (args.before == "build") != bool(args.build):
        p.error("--before build and --build PATH go together")
    print(
        f"engine: native (ipctop._native); load average {open('/proc/loadavg').read().split()[:3]}"
    )
    for n in (int(x) for x in args.pairs.split(",")):
        run(n, args)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
