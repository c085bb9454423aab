#!/usr/bin/env python3
"""What the sampler's moved-thread check costs: one sched_getaffinity per bound end per sample.

Starts --threads idle threads, reads each one's affinity --passes times, and
prints the median cost of a call over --repeats tries, with what it makes per
sample at 512 threads and at 1,024 pairs (2,048 ends) at the default 0.5 s.

    python bench/affinity_cost.py [--threads 64] [--passes 32] [--repeats 7]
"""

from __future__ import annotations

import argparse
import os
import statistics
import threading
import time


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--threads", type=int, default=64)
    p.add_argument("--passes", type=int, default=32)
    p.add_argument("--repeats", type=int, default=7)
    args = p.parse_args()
    stop = threading.Event()
    threads = [threading.Thread(target=stop.wait) for _ in range(args.threads)]
    for t in threads:
        t.start()
    tids = [t.native_id for t in threads if t.native_id is not None]
    per_call = []
    try:
        for _ in range(args.repeats):
            t0 = time.perf_counter()
            for _ in range(args.passes):
                for tid in tids:
                    os.sched_getaffinity(tid)
            per_call.append((time.perf_counter() - t0) / (args.passes * len(tids)))
    finally:
        stop.set()
    call = statistics.median(per_call)
    print(f"# load average {os.getloadavg()[0]:.1f}; {len(tids)} threads, {args.passes} passes, "
          f"{args.repeats} repeats")  # fmt: skip
    print(f"sched_getaffinity: {call * 1e6:.2f} us a call (median; min {min(per_call) * 1e6:.2f})")
    for ends in (512, 2048):
        ms = ends * call * 1e3
        print(f"{ends:5d} ends: {ms:.2f} ms per sample, {ms / 500 * 100:.2f} % of one CPU at 0.5 s")


if __name__ == "__main__":
    main()
