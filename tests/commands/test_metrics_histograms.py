"""--metrics latency histograms: cumulative buckets from the native histograms,
scraped over real HTTP while real pairs run, parsed by prometheus_client."""

from __future__ import annotations

import time
from collections.abc import Iterable

import pytest
from conftest import two_cpus
from prometheus_client.core import Metric
from test_metrics import TIMEOUT, native, scrape, start

from ipctop.engine.latency import HIST_BYTES, bucket_of
from ipctop.engine.objects import _native
from ipctop.output.exports.metrics_histograms import (
    ALL_PAIRS,
    EDGES_NS,
    PER_PAIR_MAX,
    _buckets,
    histogram_families,
)

RTT = "ipctop_round_trip_latency_seconds"
WAKE = "ipctop_wakeup_latency_seconds"


def planted(values_ns: list[int]) -> bytearray:
    h = bytearray(HIST_BYTES)
    words = memoryview(h).cast("Q")
    for v in values_ns:
        words[1 + bucket_of(v)] += 1
        words[0] += v
    return h


def by_pair(m: dict, name: str, suffix: str) -> dict[str, float]:
    return {s.labels["pair"]: s.value for s in m[name] if s.name == name + suffix}


def test_planted_histogram_gives_exact_cumulative_buckets() -> None:
    buckets, total = _buckets(planted([1_100] * 5 + [50_000, 3_000_000_000]))
    le = {round(float(k) * 1e9) if k != "+Inf" else "inf": v for k, v in buckets}
    # 1.1 us falls below the 1.25 x 2^10 ns = 1280 ns edge, not below 1024 ns.
    assert le[1024] == 0 and le[1280] == 5
    assert le[57344] == 6 and le[2**31 * 5 // 4] == 6 and le[2**31 * 3 // 2] == 7
    assert le["inf"] == 7
    assert total == pytest.approx((5_500 + 50_000 + 3_000_000_000) / 1e9)
    counts = [v for _, v in buckets]
    assert counts == sorted(counts)  # cumulative
    assert len(buckets) == len(EDGES_NS) + 1


@two_cpus
@pytest.mark.skipif(_native is None, reason="the native extension is not built")
def test_run_exports_histograms_that_grow_while_two_real_pairs_run() -> None:
    proc, url = start("run", "-w", "sysv-sem", "--pairs", "2", "--seconds", "5",
                      "--interval", "0.2")  # fmt: skip
    try:
        deadline = time.monotonic() + TIMEOUT
        while True:
            first = scrape(url)
            counts = [s for s in first.get(RTT, ()) if s.name == f"{RTT}_count"]
            if len(counts) == 2 and all(s.value > 0 for s in counts):
                break
            assert time.monotonic() < deadline, f"no histogram counts: {sorted(first)}"
            time.sleep(0.1)

        def counted(m: dict) -> list[dict[str, float]]:
            return [by_pair(m, name, "_count") if name in m else {} for name in (RTT, WAKE)]

        # Until a later sample with timed rounds of both pairs is served: a loaded box
        # can serve none in a fixed 0.6 s (the sampler late, a pair starved). Whether
        # the counts grew, not merely changed, is asserted below.
        time.sleep(0.6)
        second = scrape(url)
        while not all(
            len(a) == 2 and all(a[p] != b.get(p) for p in a)
            for a, b in zip(counted(second), counted(first))
        ):
            assert time.monotonic() < deadline, f"no later counts: {counted(first)}"
            time.sleep(0.1)
            second = scrape(url)
        om = scrape(url, openmetrics=True)
    finally:
        out, err = proc.communicate(timeout=TIMEOUT)
    assert proc.returncode == 0, err
    assert native(second)

    for name in (RTT, WAKE):
        for pair in ("0", "1"):
            buckets = [s for s in second[name]
                       if s.name == f"{name}_bucket" and s.labels["pair"] == pair]  # fmt: skip
            values = [s.value for s in buckets]
            assert values == sorted(values) and buckets[-1].labels["le"] == "+Inf"
            assert values[-1] == by_pair(second, name, "_count")[pair]
            assert {"workload", "placement", "mode", "engine", "host"} <= set(buckets[0].labels)
        # Cumulative since the run began: a later scrape never counts fewer.
        before, after = by_pair(first, name, "_count"), by_pair(second, name, "_count")
        assert all(after[p] > before[p] for p in ("0", "1")), (before, after)
    rtt_mean = {p: by_pair(second, RTT, "_sum")[p] / c
                for p, c in by_pair(second, RTT, "_count").items()}  # fmt: skip
    wake_mean = {p: by_pair(second, WAKE, "_sum")[p] / c
                 for p, c in by_pair(second, WAKE, "_count").items()}  # fmt: skip
    for p in ("0", "1"):
        assert 50e-9 < wake_mean[p] < rtt_mean[p] < 1.0, (wake_mean, rtt_mean)
    assert om[RTT][0].name == f"{RTT}_bucket"  # the OpenMetrics flavour parses them too


def _exported(pairs: int) -> dict[str, dict[str, float]]:
    """The RTT histogram's _count per pair label, and its +Inf bucket, as a scraper parses them."""
    from prometheus_client import generate_latest
    from prometheus_client.parser import text_string_to_metric_families
    from prometheus_client.registry import CollectorRegistry

    # Planted: pair p timed p + 1 rounds of 1.1 us (pair 0 one, pair 1 two, ...).
    hists = {p: (planted([1_100] * (p + 1)), planted([500] * (p + 1))) for p in range(pairs)}

    class Histograms:
        def collect(self) -> Iterable[Metric]:
            yield from histogram_families(["h", "w"], ["host", "workload"], hists)

    registry = CollectorRegistry()
    registry.register(Histograms())
    (rtt, _wake) = text_string_to_metric_families(generate_latest(registry).decode())
    out: dict[str, dict[str, float]] = {"count": {}, "inf": {}}
    for s in rtt.samples:
        if s.name == f"{RTT}_count":
            out["count"][s.labels["pair"]] = s.value
        elif s.name == f"{RTT}_bucket" and s.labels["le"] == "+Inf":
            out["inf"][s.labels["pair"]] = s.value
    return out


def test_histograms_are_per_pair_up_to_the_cap_then_one_of_every_pair() -> None:
    # 112 series a pair and direction: above PER_PAIR_MAX pairs the page would
    # grow past what a scraper should keep, so every pair's rounds go in one.
    few = _exported(PER_PAIR_MAX)
    assert few["count"] == {str(p): p + 1.0 for p in range(PER_PAIR_MAX)}
    many = _exported(PER_PAIR_MAX + 1)
    every_round = sum(p + 1.0 for p in range(PER_PAIR_MAX + 1))
    assert many["count"] == {ALL_PAIRS: every_round}
    assert many["inf"] == {ALL_PAIRS: every_round}
