#!/usr/bin/env python3
"""What --profile costs: ops/s with perf sampling the pairs' CPUs against without.

One engine per workload runs its pairs throughout; each block runs windows
off, then each variant, then the same backwards (a linear drift cancels),
a variant being perf record at HZ with call chains plus the `perf script` of
each closed window, read by a thread at NICE. An "on"
window starts only once perf has delivered its first window, so perf's
start-up is not counted as its steady cost. Prints, per workload and pair
count, the median ratio on/off with the middle half of the blocks, and perf's
own CPU as the recorder measured it (the figure the footer shows).

    python bench/profile_cost.py [--workloads sysv-sem,sysv-msg] [--seconds 2] [--blocks 6]
        [--variants 997:10,997:-20,499:10]    # perf Hz : the reader thread's nice
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
from ipctop.engine.profile import (  # noqa: E402
    PerfRecorder,
    perf_status,
)
from ipctop.engine.profile import (
    perf_record as recorder,  # noqa: E402
)
from ipctop.engine.profile.span import pair_tids  # noqa: E402
from ipctop.live.priority import raise_monitor  # noqa: E402


def rounds(engine: Engine) -> int:
    return sum(engine.counters.rounds(e.slot) for e in engine.ends())


def rate(engine: Engine, seconds: float) -> float:
    r0, t0 = rounds(engine), time.monotonic()
    time.sleep(seconds)
    return (rounds(engine) - r0) / (time.monotonic() - t0)


def variant(text: str) -> tuple[int, int]:
    """'997:10' -> (perf frequency in Hz, the reader thread's nice)."""
    freq, _, nice = text.partition(":")
    return int(freq), int(nice or recorder.READER_NICE)


def blocks(workload: str, pairs: int, cpus: list[int], status, args) -> dict:
    """variant -> (its on/off ratio per block, perf CPU % per on window)."""
    config = RunConfig(workload, "same", "threads", tuple(cpus), "native")
    out = {v: ([], []) for v in args.variants}
    with Engine(config) as engine:
        engine.start(pairs)
        time.sleep(args.warmup)

        def on(v: tuple[int, int]) -> float:
            recorder.READER_NICE = v[1]  # read by the reader thread when it starts
            rec = PerfRecorder(status, cpus, lambda: pair_tids(engine), 1.0, frequency=v[0])
            with rec:
                deadline = time.monotonic() + 15
                while not rec.windows and time.monotonic() < deadline:
                    time.sleep(0.05)  # perf is up once its first window is read
                got = rate(engine, args.seconds)
            out[v][1].extend(w.cost_pct for w in rec.windows if w.cost_pct is not None)
            return got

        for i in range(args.blocks):
            # off, each variant, then the same backwards: a linear drift cancels.
            slots = [None, *args.variants]
            order = slots + slots[::-1] if i % 2 == 0 else slots[::-1] + slots
            res: dict = {v: [] for v in slots}
            for v in order:
                res[v].append(rate(engine, args.seconds) if v is None else on(v))
            off = statistics.mean(res[None])
            for v in args.variants:
                out[v][0].append(statistics.mean(res[v]) / off)
    return out


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--workloads", default="sysv-sem,sysv-msg")
    p.add_argument("--seconds", type=float, default=2.0, help="per window (2)")
    p.add_argument("--blocks", type=int, default=6, help="ABBA blocks (6)")
    p.add_argument("--warmup", type=float, default=1.0)
    p.add_argument(
        "--variants",
        default=f"{recorder.FREQUENCY}:{recorder.READER_NICE},{recorder.FREQUENCY}:-20",
        help="HZ:NICE,... perf frequencies and reader nices, each against off "
        "(default: the shipped one, and the reader at the monitor's -20 as before)",
    )
    args = p.parse_args()
    args.variants = [variant(x) for x in args.variants.split(",")]
    cpus = choose_cpus(None, read_topology())
    raise_monitor()  # as run, sweep and the TUI do: perf inherits the monitor's nice
    status = perf_status(cpus)
    if not status.ok:
        print(status.line)
        return 1
    load = os.getloadavg()
    print(
        f"profile cost · perf {status.version} · {status.event}, -g · CPUs {cpus} · "
        f"{args.blocks} blocks of {args.seconds:g} s windows (off, variants, reversed) · "
        f"load average {load[0]:.1f} {load[1]:.1f} {load[2]:.1f}"
    )
    head = f"{'workload':<18}{'pairs':>6}{'Hz':>6}{'nice':>6}"
    print(f"{head}{'on/off median':>15}{'middle half':>18}{'perf CPU %':>12}")
    for workload in args.workloads.split(","):
        for pairs in sorted({1, len(cpus)}):
            for (hz, nice), (ratios, costs) in blocks(workload, pairs, cpus, status, args).items():
                q = statistics.quantiles(ratios, n=4) if len(ratios) >= 2 else [ratios[0]] * 3
                cost = f"{statistics.median(costs):.1f}" if costs else "n/a"
                print(
                    f"{workload:<18}{pairs:>6}{hz:>6}{nice:>6}{statistics.median(ratios):>15.3f}"
                    f"{f'{q[0]:.3f}..{q[2]:.3f}':>18}{cost:>12}",
                    flush=True,
                )
    return 0


if __name__ == "__main__":
    sys.exit(main())
