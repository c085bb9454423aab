#!/usr/bin/env python3
"""What timing every round costs: ops/s with latency on against off, interleaved.

For each SysV workload at 1 pair and at one pair per CPU, one engine runs
ABBA blocks of short windows (on, off, off, on), pausing the timing in the
ends between windows without stopping them (the paused path is one load and
a branch per round), and prints the median ratio on/off with the middle half
of the blocks. Goal: >= 0.98. Beside it, the same ratio of rounds per
CPU-second of the ends' threads (CLOCK of each thread): time the host or other
load steals from the pair cancels out of it. --fresh instead starts an engine per window,
with --no-latency for "off" (slower, and noisier on a shared box).
At 1 pair it also checks that the timing agrees with the counters: A's mean
round trip against 1 / (A's rounds per second), and the median beside them.

    python bench/latency_cost.py [--seconds 0.25] [--blocks 20] [--fresh] [--latency-every K]
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import time  # noqa: E402

from ipctop.cpus import choose_cpus, read_topology  # noqa: E402
from ipctop.engine.config import RunConfig  # noqa: E402
from ipctop.engine.engine import Engine, resolve_engine  # noqa: E402
from ipctop.engine.latency import format_ns  # noqa: E402
from ipctop.live.measure import RunResult, measure, measure_engine  # noqa: E402

DEFAULT = "sysv-msg,sysv-sem,sysv-msg-shared"


def window(workload: str, pairs: int, cpus: list[int], on: bool, args) -> RunResult:
    config = RunConfig(workload, "same", args.mode, tuple(cpus), "native", latency=on,
                          latency_every=args.latency_every)  # fmt: skip
    return measure(config, pairs, args.seconds, warmup=args.warmup)


def rounds(engine: Engine) -> int:
    return sum(engine.counters.rounds(e.slot) for e in engine.ends())


def cpu_ns(engine: Engine) -> int:
    """CPU time the ends' threads used (threads mode): immune to time the box stole."""
    return sum(
        time.clock_gettime_ns(time.pthread_getcpuclockid(e.thread.ident))
        for e in engine.ends()
        if e.thread is not None and e.thread.ident is not None
    )


def toggled(workload: str, pairs: int, cpus: list[int], args) -> tuple[list, list, list]:
    """ABBA blocks in one engine: (ratios, on rates, off rates, 1-pair windows timed,
    ratios of rounds per CPU-second)."""
    config = RunConfig(workload, "same", args.mode, tuple(cpus), "native",
                          latency_every=args.latency_every)  # fmt: skip
    ratios, ons, offs, per_cpu = [], [], [], []
    with Engine(config) as engine:
        engine.start(pairs)
        time.sleep(args.warmup)

        def rate(on: bool) -> tuple[float, float]:
            engine.pause_timing(not on)
            time.sleep(0.02)  # the switch takes a round; let it
            r0, t0, c0 = rounds(engine), time.monotonic(), cpu_ns(engine)
            time.sleep(args.seconds)
            n, c = rounds(engine) - r0, cpu_ns(engine) - c0
            return n / (time.monotonic() - t0), (n / c if c > 0 else 0.0)

        for _ in range(args.blocks):
            (a1, ca1), (b1, cb1), (b2, cb2), (a2, ca2) = (
                rate(True), rate(False), rate(False), rate(True)
            )  # fmt: skip
            if min(a1, b1, b2, a2) == 0:
                continue  # the box starved the pair for a whole window: no ratio in it
            ons.append((a1 + a2) / 2)
            offs.append((b1 + b2) / 2)
            ratios.append(ons[-1] / offs[-1])
            if min(ca1, cb1, cb2, ca2) > 0:
                per_cpu.append((ca1 + ca2) / (cb1 + cb2))
        engine.pause_timing(False)
        timed = [measure_engine(engine, 1.0, 0.0, 0.5, detail=False)] if pairs == 1 else []
    return ratios, ons, offs, timed, per_cpu


def fresh(workload: str, pairs: int, cpus: list[int], args) -> tuple[list, list, list]:
    ratios, ons, offs, timed = [], [], [], []
    for _ in range(args.blocks):
        a1 = window(workload, pairs, cpus, True, args)
        b1 = window(workload, pairs, cpus, False, args)
        b2 = window(workload, pairs, cpus, False, args)
        a2 = window(workload, pairs, cpus, True, args)
        ons.append((a1.total_ops_per_s + a2.total_ops_per_s) / 2)
        offs.append((b1.total_ops_per_s + b2.total_ops_per_s) / 2)
        ratios.append(ons[-1] / offs[-1])
        timed += [a1, a2] if pairs == 1 else []
    return ratios, ons, offs, timed, []


def middle_half(xs: list[float]) -> str:
    s = sorted(xs)
    k = len(s) // 4
    return f"{s[k]:.3f}..{s[len(s) - 1 - k]:.3f}"


def consistency(runs: list[RunResult]) -> str:
    """A's mean and median round trip beside 1/(its round rate), over the 'on' windows."""
    lines = []
    for r in runs:
        a = next(t for t in r.threads if t.at_end.role == "A")
        (p,) = r.latency
        lines.append(
            f"    1/rate {format_ns(1e9 / a.ops_per_s)}  mean rtt {format_ns(p.rtt.mean)}"
            f"  (ratio {p.rtt.mean * a.ops_per_s / 1e9:.3f})  median rtt {format_ns(p.rtt.p50)}"
            f"  n={p.rtt.n:,}"
        )
    return "\n".join(lines)


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--workloads", default=DEFAULT, help=f"comma-separated (default {DEFAULT})")
    p.add_argument("--seconds", type=float, default=0.25, help="per window (0.25)")
    p.add_argument("--warmup", type=float, default=0.5, help="per engine (0.5)")
    p.add_argument("--blocks", type=int, default=20, help="ABBA blocks per point (20)")
    p.add_argument("--fresh", action="store_true", help="an engine per window, --no-latency off")
    p.add_argument("--mode", default="threads", choices=("threads", "processes"))
    p.add_argument("--cpus", help="default: the allowed set")
    p.add_argument(
        "--latency-every",
        type=int,
        default=RunConfig.latency_every,
        metavar="K",
        help=f"time one round in K (default {RunConfig.latency_every}, ipctop's)",
    )
    args = p.parse_args()
    if resolve_engine() != "native":
        print("latency_cost: needs the native engine", file=sys.stderr)
        return 2
    cpus = choose_cpus(args.cpus, read_topology())
    load = os.getloadavg()
    how = "an engine per window" if args.fresh else "one engine, timing paused in between"
    print(
        f"latency cost · {args.mode} · CPUs {cpus} · {how} · {args.blocks} ABBA blocks of "
        f"{args.seconds:g} s windows · 1 round in {args.latency_every} timed · load average {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}"
    )
    print(f"{'workload':16} {'pairs':>5} {'on ops/s':>12} {'off ops/s':>12} {'on/off':>7}  "
          "middle half of blocks")  # fmt: skip
    worst = 1.0
    for workload in args.workloads.split(","):
        for pairs in sorted({1, len(cpus)}):
            run = fresh if args.fresh else toggled
            ratios, ons, offs, timed, per_cpu = run(workload, pairs, cpus, args)
            if not ratios:
                print(f"{workload:16} {pairs:5} starved in every block", flush=True)
                continue
            med = statistics.median(ratios)
            worst = min(worst, med)
            print(
                f"{workload:16} {pairs:5} {statistics.median(ons):12,.0f} "
                f"{statistics.median(offs):12,.0f} {med:7.3f}  {middle_half(ratios)} "
                f"(n={len(ratios)})"
                + (
                    f"  per CPU-second {statistics.median(per_cpu):.3f} {middle_half(per_cpu)}"
                    if per_cpu
                    else ""
                ),
                flush=True,
            )
            if pairs == 1:
                print(consistency(timed), flush=True)
    load = os.getloadavg()
    print(f"worst median on/off {worst:.3f} · load average at the end {load[0]:.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
