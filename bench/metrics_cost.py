#!/usr/bin/env python3
"""What --metrics costs the pairs: ops/s with the endpoint scraped against without.

One engine runs throughout; windows alternate in ABBA blocks (off, on, on,
off). "on" publishes every sample to a live endpoint and a scraper thread
fetches /metrics every --scrape seconds (0.5 s by default, 30 times more often
than Prometheus's default 15 s, so the cost shows if there is one). It prints
on/off as a paired difference over the blocks with its 95 % interval
(analysis.stats), and how long one scrape took. Goal: on/off >= 0.99.

    python bench/metrics_cost.py [--pairs 1,2] [--window 1] [--blocks 8] [--scrape 0.5]
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import threading
import time
import urllib.request
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from ipctop.analysis.stats import fmt_diff, paired_difference  # noqa: E402
from ipctop.cpus import choose_cpus, read_topology  # noqa: E402
from ipctop.engine.config import RunConfig  # noqa: E402
from ipctop.engine.engine import Engine, resolve_engine  # noqa: E402
from ipctop.live.measure import measure_engine  # noqa: E402
from ipctop.output.exports.metrics import MetricsAddress, MetricsEndpoint, RunLabels  # noqa: E402


class Scraper(threading.Thread):
    def __init__(self, url: str, every: float) -> None:
        super().__init__(daemon=True)
        self.url, self.every = url, every
        self.on = threading.Event()
        self.stop = threading.Event()
        self.took: list[float] = []
        self.size = 0

    def run(self) -> None:
        while not self.stop.is_set():
            if self.on.is_set():
                t0 = time.perf_counter()
                with urllib.request.urlopen(self.url, timeout=10) as r:
                    self.size = len(r.read())
                self.took.append(time.perf_counter() - t0)
            self.stop.wait(self.every)


def blocks(pairs: int, cpus: list[int], kind: str, args) -> tuple[list, Scraper]:
    config = RunConfig("sysv-msg", "same", "threads", tuple(cpus), kind)
    out = []
    with MetricsEndpoint(MetricsAddress("127.0.0.1", 0)) as ep, Engine(config) as engine:
        engine.start(pairs)
        feed = ep.publisher(RunLabels("sysv-msg", "same", "threads", engine.kind))
        scraper = Scraper(ep.url, args.scrape)
        scraper.start()

        def window(on: bool) -> float:
            if on:
                scraper.on.set()
            else:
                scraper.on.clear()
            r = measure_engine(engine, args.window, 0.0, 0.5, feed if on else None, detail=False)
            return r.total_ops_per_s

        measure_engine(engine, 1.0, 0.0, 0.5, detail=False)  # warm-up
        for _ in range(args.blocks):
            a1, b1, b2, a2 = window(False), window(True), window(True), window(False)
            out.append(([a1, a2], [b1, b2]))
        scraper.stop.set()
        scraper.join(timeout=15)
    return out, scraper


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--pairs", default="1,2")
    ap.add_argument("--window", type=float, default=1.0)
    ap.add_argument("--blocks", type=int, default=8)
    ap.add_argument("--scrape", type=float, default=0.5)
    args = ap.parse_args()
    cpus = choose_cpus(None, read_topology())
    kind = resolve_engine("auto")
    print(f"# metrics cost · sysv-msg same-core · engine {kind} · CPUs {cpus} · "
          f"{args.blocks} ABBA blocks of {args.window:g} s windows · scrape every "
          f"{args.scrape:g} s · load {os.getloadavg()[0]:.1f}")  # fmt: skip
    print(f"{'pairs':>5}  {'on/off':>22}  {'off ops/s':>10}  {'scrape ms':>9}  {'bytes':>6}")
    for n in (int(x) for x in args.pairs.split(",")):
        got, scraper = blocks(n, cpus, kind, args)
        d = paired_difference(got)
        off = statistics.median(x for a, _ in got for x in a)
        ms = statistics.median(scraper.took) * 1e3 if scraper.took else float("nan")
        print(f"{n:>5}  {fmt_diff(d):>22}  {off:>10,.0f}  {ms:>9.1f}  {scraper.size:>6}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
