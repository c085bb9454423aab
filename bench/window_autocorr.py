"""How long a window must be for consecutive windows to be close to independent.

    python bench/window_autocorr.py [--seconds 40] [--workload sysv-msg] [--pairs 1]

One engine runs for --seconds; its total round count is read every 0.1 s.
The readings are then cut into windows of 0.1, 0.2, 0.5, 1 and 2 s and, per
length, the lag-1 autocorrelation of the window rates is printed with the
band |r| < 2/sqrt(n) that white noise stays in 95 % of the time. Intervals
(ipctop.analysis.stats) assume independent windows: a length whose r is well
inside the band is a fair window; a positive r means the interval is too
narrow. The figures go into BENCHMARKS.md with the box and its load.
"""

from __future__ import annotations

import argparse
import math
import os
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from ipctop.cpus import default_cpus, read_topology  # noqa: E402
from ipctop.engine.config import RunConfig  # noqa: E402
from ipctop.engine.engine import Engine  # noqa: E402

TICK = 0.1
LENGTHS = (0.1, 0.2, 0.5, 1.0, 2.0)


def lag1(xs: list[float]) -> float:
    m = statistics.fmean(xs)
    num = sum((a - m) * (b - m) for a, b in zip(xs, xs[1:]))
    den = sum((a - m) ** 2 for a in xs)
    return num / den if den > 0 else 0.0


def counts(engine: Engine, seconds: float) -> list[int]:
    ends = engine.ends()
    out = []
    due = time.monotonic()
    for _ in range(int(seconds / TICK) + 1):
        while time.monotonic() < due:
            time.sleep(max(0.0, due - time.monotonic()))
        out.append(sum(engine.counters.rounds(e.slot) for e in ends))
        due += TICK
    return out


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--seconds", type=float, default=40.0)
    ap.add_argument("--workload", default="sysv-msg")
    ap.add_argument("--pairs", type=int, default=1)
    args = ap.parse_args()
    cpus = tuple(default_cpus(read_topology()))
    config = RunConfig(workload=args.workload, cpus=cpus)
    with Engine(config) as engine:
        engine.start(args.pairs)
        time.sleep(1.0)
        c = counts(engine, args.seconds)
        kind = engine.kind
    print(
        f"# {args.workload} · {args.pairs} pair(s) · engine {kind} · {args.seconds:g} s · "
        f"load average {os.getloadavg()[0]:.2f}"
    )
    print(f"{'window [s]':>10}  {'n':>4}  {'lag-1 r':>8}  {'white-noise band':>16}  cv [%]")
    for length in LENGTHS:
        step = round(length / TICK)
        rates = [(c[i + step] - c[i]) / length for i in range(0, len(c) - step, step)]
        if len(rates) < 8:
            continue
        band = 2.0 / math.sqrt(len(rates))
        cv = 100.0 * statistics.stdev(rates) / statistics.fmean(rates)
        print(f"{length:>10g}  {len(rates):>4}  {lag1(rates):>+8.2f}  {'±' + f'{band:.2f}':>16}"
              f"  {cv:.1f}")  # fmt: skip


if __name__ == "__main__":
    main()
