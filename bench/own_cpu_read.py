#!/usr/bin/env python3
"""What reading the monitor's own CPU costs, beside the pairs it leaves out.

Starts --pairs sysv-msg pairs on the allowed CPUs and reads the monitor's CPU
(live/monitor.py) once a second as the footer does, two ways in turn (ABBA):
  listing   the pair threads' set made and /proc/self/task listed at every
            reading (the meter before issue 29's last step);
  cached    both only when the process's thread count changes (read_lazy).
Each reading is timed on the reading thread's own CPU clock, raised above
the pairs as the app's UI thread is. Prints each way's median and its
geometric mean with the 95 % interval analysis.stats.summarize gives (unit:
a reading, n each), and the share of one CPU the median comes to at the
footer's pace of one reading a second.

    python bench/own_cpu_read.py [--pairs 1024] [--readings 20]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

import observer  # noqa: E402

from ipctop.analysis.stats import summarize  # noqa: E402
from ipctop.cpus import choose_cpus, read_topology  # noqa: E402
from ipctop.engine.config import RunConfig  # noqa: E402
from ipctop.engine.engine import Engine  # noqa: E402
from ipctop.live.monitor import MonitorCpuMeter  # noqa: E402
from ipctop.live.priority import MonitorPriority  # noqa: E402


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--pairs", type=int, default=1024)
    ap.add_argument("--readings", type=int, default=20, help="per way")
    args = ap.parse_args()
    cpus = tuple(choose_cpus(None, read_topology()))
    engine = Engine(RunConfig(workload="sysv-msg", placement="same", cpus=cpus))
    priority = MonitorPriority()

    def pair_tids() -> set[int]:
        return observer.pair_tids(engine)

    engine.start(args.pairs)
    try:
        priority.apply(pair_tids())
        listing, cached = MonitorCpuMeter(), MonitorCpuMeter()
        ways: dict[str, Callable[[], float | None]] = {
            "listing": lambda: listing.read(pair_tids()),
            "cached": lambda: cached.read_lazy(pair_tids),
        }
        for read in ways.values():
            read()  # primes (and lists)
        costs: dict[str, list[float]] = {name: [] for name in ways}
        for i in range(args.readings):
            order = list(ways) if i % 2 == 0 else list(ways)[::-1]
            for name in order:
                time.sleep(0.5)
                start = time.thread_time()
                ways[name]()
                costs[name].append((time.thread_time() - start) * 1e3)
        threads = len(list(Path("/proc/self/task").iterdir()))
        print(f"# {args.pairs} pairs on CPUs {','.join(map(str, cpus))}, {threads} threads")
        print("# unit: a reading (ms of the reading thread's CPU); geometric mean, 95 % interval")
        for name, ms in costs.items():
            s = summarize(ms)
            ci = f"[{s.low:.2f}, {s.high:.2f}]" if s.low is not None else ""
            med = statistics.median(ms)
            print(
                f"{name:8} median {med:6.2f} ms  geo mean {s.figure:6.2f} ms {ci} n={s.n}"
                f"  = {med / 10:.2f} % of a CPU at one reading a second"
            )
    finally:
        priority.restore(pair_tids())
        engine.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
