#!/usr/bin/env python3
"""Does memory touched every 2 s cost oversubscribed pairs more than its CPU?

At 2,048 threads the TUI costs the pairs 1.6 % [0.5, 2.7] of their rate over
8 runs (3 % in the first three) while its CPU beyond the idle app is about
0.9 % of the 2-CPU box (BENCHMARKS.md). One candidate is the caches: a frame touches megabytes the
pairs then miss. This starts --pairs sysv-msg pairs on CPUs 0-1 with the
sampler raised above them as the monitor is, and a raised thread that copies
MB megabytes every 2 s in the "touched" windows and does nothing in the
others: ABBA windows of 3 s. Prints touched/untouched throughput over the
window pairs (stats.paired_difference: the estimate, its 95 % interval, n)
and the CPU the copying took.

    python bench/memory_touch.py MB [--pairs 1024] [--windows 40]
"""

from __future__ import annotations

import argparse
import sys
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from observer import pair_tids, total_rounds  # noqa: E402

from ipctop.analysis.stats import paired_difference  # noqa: E402
from ipctop.engine.config import RunConfig  # noqa: E402
from ipctop.engine.engine import Engine  # noqa: E402
from ipctop.engine.sampler import Sampler  # noqa: E402
from ipctop.live.priority import MonitorPriority  # noqa: E402

WINDOW_S = 3.0
EVERY_S = 2.0  # the screen's step above 256 threads
CHUNK = 1 << 20


class Toucher:
    """Copies `mb` MB every EVERY_S while `on` is set; `cpu_s` is what that took."""

    def __init__(self, mb: float) -> None:
        self.buf = bytearray(int(mb * CHUNK))
        self.src = bytes(range(256)) * (len(self.buf) // 256)
        self.on, self.stop = threading.Event(), threading.Event()
        self.cpu_s = 0.0
        self.thread = threading.Thread(target=self._run)

    def _run(self) -> None:
        while not self.stop.is_set():
            if self.on.is_set():
                start = time.thread_time()
                for k in range(0, len(self.buf), CHUNK):
                    self.buf[k : k + CHUNK] = self.src[k : k + CHUNK]
                self.cpu_s += time.thread_time() - start
            self.stop.wait(EVERY_S)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("mb", type=float)
    ap.add_argument("--pairs", type=int, default=1024)
    ap.add_argument("--windows", type=int, default=40)
    args = ap.parse_args()
    engine = Engine(RunConfig(workload="sysv-msg", placement="same", cpus=(0, 1)))
    engine.start(args.pairs)
    priority = MonitorPriority()
    sampler = Sampler(engine, 0.5)
    sampler.start()
    toucher = Toucher(args.mb)
    toucher.thread.start()
    priority.apply(pair_tids(engine))
    try:
        time.sleep(5.0)
        windows = []
        for i in range(args.windows):
            touched = i % 4 in (1, 2)  # ABBA
            (toucher.on.set if touched else toucher.on.clear)()
            r0, t0 = total_rounds(engine), time.monotonic()
            time.sleep(WINDOW_S)
            windows.append((touched, (total_rounds(engine) - r0) / (time.monotonic() - t0)))
        blocks = []
        for a, b in zip(windows[::2], windows[1::2]):
            off, on = (a, b) if b[0] else (b, a)
            blocks.append(([off[1]], [on[1]]))
        d = paired_difference(blocks)
        print(
            f"{args.mb:g} MB every {EVERY_S:g} s, {args.pairs} pairs: touched/untouched"
            f" {d.ratio:.3f} [{d.low:.3f}, {d.high:.3f}] n={len(blocks)} window pairs;"
            f" copying took {toucher.cpu_s:.3f} s of CPU over"
            f" {args.windows * WINDOW_S / 2:.0f} s touched"
        )
    finally:
        toucher.stop.set()
        toucher.thread.join()
        sampler.close()
        priority.restore(pair_tids(engine))
        engine.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
