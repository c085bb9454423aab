#!/usr/bin/env python3
"""What --profile costs: ops/s with perf sampling the pairs' CPUs against without.

One engine per workload runs its pairs throughout; ABBA blocks of windows
(on, off, off, on) alternate perf running (record at 997 Hz with call chains,
plus the `perf script` of each closed window) with perf stopped. An "on"
window starts only once perf has delivered its first window, so perf's
start-up is not counted as its steady cost. Prints, per workload and pair
count, the median ratio on/off with the middle half of the blocks, and perf's
own CPU as the recorder measured it (the figure the footer shows).

    python bench/profile_cost.py [--workloads sysv-sem,sysv-msg] [--seconds 2] [--blocks 6]
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from ipctop.cpus import choose_cpus, read_topology  # noqa: E402
from ipctop.engine.config import EngineConfig  # noqa: E402
from ipctop.engine.engine import Engine  # noqa: E402
from ipctop.engine.profile import PerfRecorder, perf_status  # noqa: E402
from ipctop.engine.profile.span import pair_tids  # noqa: E402
from ipctop.live.priority import raise_monitor  # noqa: E402


def rounds(engine: Engine) -> int:
    return sum(engine.counters.rounds(e.slot) for e in engine.ends())


def rate(engine: Engine, seconds: float) -> float:
    r0, t0 = rounds(engine), time.monotonic()
    time.sleep(seconds)
    return (rounds(engine) - r0) / (time.monotonic() - t0)


def blocks(workload: str, pairs: int, cpus: list[int], status, args) -> tuple[list, list]:
    """(on/off ratios, perf CPU % per on window)."""
    config = EngineConfig(workload, "same", "threads", tuple(cpus), "native")
    ratios, costs = [], []
    with Engine(config) as engine:
        engine.start(pairs)
        time.sleep(args.warmup)

        def on() -> float:
            rec = PerfRecorder(status, cpus, lambda: pair_tids(engine), window=1.0)
            with rec:
                deadline = time.monotonic() + 15
                while not rec.windows and time.monotonic() < deadline:
                    time.sleep(0.05)  # perf is up once its first window is read
                got = rate(engine, args.seconds)
            costs.extend(w.cost_pct for w in rec.windows if w.cost_pct is not None)
            return got

        for i in range(args.blocks):
            order = (True, False, False, True) if i % 2 == 0 else (False, True, True, False)
            res = {True: [], False: []}
            for flag in order:
                res[flag].append(on() if flag else rate(engine, args.seconds))
            ratios.append(statistics.mean(res[True]) / statistics.mean(res[False]))
    return ratios, costs


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--workloads", default="sysv-sem,sysv-msg")
    p.add_argument("--seconds", type=float, default=2.0, help="per window (2)")
    p.add_argument("--blocks", type=int, default=6, help="ABBA blocks (6)")
    p.add_argument("--warmup", type=float, default=1.0)
    args = p.parse_args()
    cpus = choose_cpus(None, read_topology())
    raise_monitor()  # as run, sweep and the TUI do: perf inherits the monitor's nice
    status = perf_status(cpus)
    if not status.ok:
        print(status.line)
        return 1
    load = os.getloadavg()
    print(
        f"profile cost · perf {status.version} · {status.event} at 997 Hz, -g · CPUs {cpus} · "
        f"{args.blocks} ABBA blocks of {args.seconds:g} s windows · "
        f"load average {load[0]:.1f} {load[1]:.1f} {load[2]:.1f}"
    )
    print(f"{'workload':<18}{'pairs':>6}{'on/off median':>15}{'middle half':>18}{'perf CPU %':>12}")
    for workload in args.workloads.split(","):
        for pairs in sorted({1, len(cpus)}):
            ratios, costs = blocks(workload, pairs, cpus, status, args)
            q = statistics.quantiles(ratios, n=4) if len(ratios) >= 2 else [ratios[0]] * 3
            cost = f"{statistics.median(costs):.1f}" if costs else "n/a"
            print(
                f"{workload:<18}{pairs:>6}{statistics.median(ratios):>15.3f}"
                f"{f'{q[0]:.3f}..{q[2]:.3f}':>18}{cost:>12}",
                flush=True,
            )
    return 0


if __name__ == "__main__":
    sys.exit(main())
