#!/usr/bin/env python3
"""How long 1,024 pairs take to be running: bulk start against one pair at a time.

Each run makes a fresh engine (sysv-msg, same placement, threads, every allowed
CPU), raises the monitor as the commands do, and times until every end has
answered "running"; then the time to stop and remove them all. The two ways
run interleaved (ABBA) so that load from elsewhere on a shared box hits both;
the ratio is one-at-a-time / bulk per block. Target: 1,024 pairs within 10 s
on 2 CPUs.

    python bench/bulk_start.py [--pairs 1024] [--blocks 2]
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
from ipctop.engine.config import RunConfig  # noqa: E402
from ipctop.engine.engine import Engine  # noqa: E402
from ipctop.live.priority import raise_monitor  # noqa: E402


def one_run(config: RunConfig, pairs: int, bulk: bool) -> tuple[float, float]:
    """(seconds until all pairs run, seconds to stop and remove them)."""
    engine = Engine(config)
    engine.start()
    try:
        t0 = time.monotonic()
        if bulk:
            engine.add_pairs(pairs)
        else:
            for _ in range(pairs):
                engine.add_pair()
        started = time.monotonic() - t0
        assert engine.active_pairs == pairs
    finally:
        t1 = time.monotonic()
        engine.stop()
    return started, time.monotonic() - t1


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--pairs", type=int, default=1024)
    ap.add_argument("--blocks", type=int, default=2, help="ABBA blocks (2)")
    args = ap.parse_args()
    cpus = choose_cpus(None, read_topology())
    config = RunConfig(
        workload="sysv-msg", placement="same", mode="threads", cpus=tuple(cpus), engine="auto"
    )
    note = raise_monitor().note
    load = os.getloadavg()
    print(f"# {args.pairs} pairs · sysv-msg · same · threads · CPUs {len(cpus)} · "
          f"load {load[0]:.1f} {load[1]:.1f} {load[2]:.1f}{' · ' + note if note else ''}")  # fmt: skip
    runs: dict[bool, list[tuple[float, float]]] = {True: [], False: []}
    ratios = []
    for _ in range(args.blocks):
        block: dict[bool, list[float]] = {True: [], False: []}
        for bulk in (True, False, False, True):
            start, stop = one_run(config, args.pairs, bulk)
            runs[bulk].append((start, stop))
            block[bulk].append(start)
            print(f"{'bulk' if bulk else 'one at a time':>13}: running in {start:6.2f} s, "
                  f"removed in {stop:5.2f} s", flush=True)  # fmt: skip
        ratios.append(statistics.mean(block[False]) / statistics.mean(block[True]))
    for bulk in (True, False):
        starts = [s for s, _ in runs[bulk]]
        print(f"# {'bulk' if bulk else 'one at a time'}: median {statistics.median(starts):.2f} s"
              f" to running (min {min(starts):.2f}, max {max(starts):.2f}, n={len(starts)})")  # fmt: skip
    print(f"# one-at-a-time / bulk: {', '.join(f'{r:.2f}' for r in ratios)} (per ABBA block)")
    print(f"# load after: {os.getloadavg()[0]:.1f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
