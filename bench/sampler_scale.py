#!/usr/bin/env python3
"""The sampler's own cost a sample on this box's CPU count, in units that survive emulation.

Starts --pairs sysv-sem pairs (default 64: 128 ends) spread over every allowed
CPU, samples them as the monitor does (0.5 s), and times each Sampler.sample()
on the sampling thread's own CPU clock. Beside it, a fixed piece of Python
(the calibration) is timed the same way, so the cost can be given as
calibrations a sample: a TCG guest runs everything 10-50 times slower, but
the sampler and the calibration alike, so a 64-CPU guest's figure divided by
a 2-CPU box's (or a smaller guest's) says what 64 CPUs cost the sampler:
/proc/stat and /proc/interrupts rows, per-CPU reads, the CPUs a sample lists.

    python bench/sampler_scale.py [--pairs 64] [--samples 40] [--json FILE]
    python bench/sampler_scale.py --pairs 256 --samples 40 --compare [end-pass|before]

--paired also times the calibration once after every sample, while the pairs
run, and gives each sample in the calibration next to it. In a TCG guest a
vCPU the host preempts still counts as running to the guest's CPU clock, and
64 busy vCPUs on a 2-CPU host are preempted most of the time: the calibration
before and after the pairs (idle vCPUs) does not see that, the paired one does.

--compare times two samplers of one engine, in ABBA blocks, each a Sampler of
its own, sampled in turn, 0.5 s apart as the monitor samples. end-pass (the
default): A is the Python per-end pass (engine/end_figures.py, a Python
object at a time), B the native pass (engine/end_pass.py). before: A is the
sample as it was at 7125c1b (the latency tracker's claims and PairLatency
made in Python per pair around lat_read, Engine.poll asking every end of
every pair, /proc/stat read twice), B the sample today.
    python -m ipctop.lab --cpus 64 -- .venv/bin/python bench/sampler_scale.py

Issue 29's goal: the 64-CPU figure at most twice the 2-CPU one.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from latency_read import LatReadTracker  # noqa: E402  (this folder: the script's own)

from ipctop.analysis.stats import fmt_diff, paired_difference, summarize  # noqa: E402
from ipctop.engine import procfs  # noqa: E402
from ipctop.engine.config import RunConfig  # noqa: E402
from ipctop.engine.engine import Engine, resolve_engine  # noqa: E402
from ipctop.engine.sampler import Sampler  # noqa: E402


def calibration_once_ms(share: int = 1) -> float:
    """CPU ms of a fixed Python loop, once; of 1/share of it, scaled back to the whole."""
    t0 = time.thread_time()
    total = 0
    for i in range(200_000 // share):
        total += i % 7
    return (time.thread_time() - t0) * 1e3 * share


def calibration_ms() -> float:
    """CPU ms of a fixed Python loop: what an emulated CPU's slowness is measured in."""
    return statistics.median(calibration_once_ms() for _ in range(7))


class _EveryPair:
    """The engine, but its poll asks every running pair (as before death_watch.py)."""

    def __init__(self, engine: Engine) -> None:
        self._engine = engine

    def poll(self) -> list[str]:
        return self._engine.poll(every=True)

    def __getattr__(self, name: str) -> object:
        return getattr(self._engine, name)


class Before(Sampler):
    """The sampler of 7125c1b: the latency reading of bench/latency_read.py's
    LatReadTracker, a poll of every pair, and /proc/stat read again for ctxt."""

    def __init__(self, engine: Engine, interval: float) -> None:
        super().__init__(engine, interval, end_pass="native")
        if self._latency is not None:
            self._latency = LatReadTracker(engine.counters.latency)
        self.engine = _EveryPair(engine)  # type: ignore[assignment]

    def _ctxt(self, cur: int | None, dt: float) -> float | None:
        return super()._ctxt(procfs.read_ctxt(self.proc), dt)


LABELS = {
    "end-pass": ("per-end Python (A)", "native pass (B)"),
    "before": ("7125c1b (A)", "today (B)"),
}


def compare(engine: Engine, samples: int, what: str) -> str:
    """A against B (see --compare): ms of CPU a sample, and B/A."""
    if what == "before":
        a: Sampler = Before(engine, 0.5)
        b = Sampler(engine, 0.5)
    else:
        a = Sampler(engine, 0.5, end_pass="python")
        b = Sampler(engine, 0.5, end_pass="native")
    a.sample()
    b.sample()

    def timed(sampler: Sampler, k: int) -> list[float]:
        out = []
        for _ in range(k):
            time.sleep(0.5)
            t0 = time.thread_time()
            sampler.sample()
            out.append((time.thread_time() - t0) * 1e3)
        return out

    blocks = []
    for _ in range(max(2, samples // 4)):
        a1, b1, b2, a2 = timed(a, 1), timed(b, 1), timed(b, 1), timed(a, 1)
        blocks.append((a1 + a2, b1 + b2))
    a.close()
    b.close()
    ma = statistics.median(x for pa, _ in blocks for x in pa)
    mb = statistics.median(x for _, pb in blocks for x in pb)
    d = paired_difference(blocks)
    label_a, label_b = LABELS[what]
    return (
        f"{label_a} {ma:.2f} ms CPU a sample, {label_b} {mb:.2f} ms "
        f"(medians of {2 * len(blocks)} each); B/A {fmt_diff(d)} (unit: {len(blocks)} ABBA "
        f"blocks); at 2 samples/s {ma / 5:.2f} % -> {mb / 5:.2f} % of one CPU"
    )


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--pairs", type=int, default=64)
    p.add_argument("--samples", type=int, default=40)
    p.add_argument("--json", help="write the figures here")
    p.add_argument(
        "--compare",
        nargs="?",
        const="end-pass",
        choices=sorted(LABELS),
        help="two samplers side by side: end-pass (the default) or before",
    )
    p.add_argument(
        "--paired",
        action="store_true",
        help="also a calibration after every sample, while the pairs run (for a TCG guest)",
    )
    args = p.parse_args()
    cpus = tuple(sorted(os.sched_getaffinity(0)))
    kind = resolve_engine("native")
    config = RunConfig(workload="sysv-sem", placement="free", cpus=cpus, engine=kind)
    cal_before = calibration_ms()
    with Engine(config) as engine:
        engine.start(args.pairs)
        if args.compare:
            line = compare(engine, args.samples, args.compare)
            load = os.getloadavg()
            print(f"engine {kind}; {len(cpus)} CPUs; {2 * args.pairs} ends; load {load[0]:.1f}")
            print(line)
            return 0
        sampler = Sampler(engine, 0.5)
        sampler.sample()
        costs = []
        during = []
        listed = 0
        for _ in range(args.samples):
            time.sleep(0.5)
            t0 = time.thread_time()
            s = sampler.sample()
            costs.append((time.thread_time() - t0) * 1e3)
            listed = len(s.cpus)
            if args.paired:
                # A quarter of the loop: beside 64 preempted vCPUs a whole one took seconds.
                during.append(calibration_once_ms(share=4))
        sampler.close()
    cal = statistics.median([cal_before, calibration_ms()])
    cost = summarize(costs)
    units = [c / cal for c in costs]
    u = summarize(units)
    ends = 2 * args.pairs
    load = os.getloadavg()[0]
    print(f"engine {kind}; {len(cpus)} CPUs allowed, {listed} in each sample; {ends} ends")
    print(
        f"sampler: {cost.figure:.2f} ms CPU a sample [{cost.low:.2f}, {cost.high:.2f}] "
        f"({cost.basis}); calibration {cal:.2f} ms; "
        f"{u.figure:.3f} calibrations a sample [{u.low:.3f}, {u.high:.3f}]; load {load:.1f}"
    )
    figures = {
        "cpus": len(cpus),
        "listed": listed,
        "ends": ends,
        "engine": kind,
        "ms_per_sample": [cost.figure, cost.low, cost.high],
        "calibration_ms": cal,
        "calibrations_per_sample": [u.figure, u.low, u.high],
        "samples": len(costs),
        "load": load,
    }
    if during:
        paired = summarize([c / d for c, d in zip(costs, during, strict=True)])
        figures["calibration_during_ms"] = statistics.median(during)
        figures["calibrations_per_sample_paired"] = [paired.figure, paired.low, paired.high]
        print(
            f"paired: calibration while the pairs ran {statistics.median(during):.2f} ms "
            f"(median); {paired.figure:.3f} calibrations a sample [{paired.low:.3f}, "
            f"{paired.high:.3f}] ({paired.basis})"
        )
    if args.json:
        Path(args.json).write_text(json.dumps(figures) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
