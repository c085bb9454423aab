"""A fixed, made-up run for snapshot tests and demos: 1, 2, then 3 pairs on 4 CPUs.

Nothing here is measured: the numbers are made up so each picture is the
same on every box. Pair 2 runs at half speed (it should be highlighted) and
its end B last ran on CPU 3 although bound to CPU 2 (it should be flagged).
"""

from __future__ import annotations

import math

from ..engine.config import RunConfig
from ..engine.costs import Costs, CpuCost, ThreadCost
from ..engine.sample import CpuSample, IpiSample, Sample, ThreadSample
from .sources import FixedSource, RunInfo, SampleCallback

INFO = RunInfo(
    RunConfig(
        workload="sysv-msg",
        placement="same",
        mode="threads",
        engine="native",
        cpus=(0, 1, 2, 3),
        seconds=None,
        warmup=None,
        repeat=None,
        interval=0.5,
    ),
    kernel="6.1.0-fixed",
    cpu_model="Fixed CPU @ 3.00GHz (fake, for snapshots)",
    source="fixed samples",
)

PER_PAIR = 250_000.0  # rounds/s of a healthy pair
STEPS = ((1, 10), (2, 10), (3, 12))  # (pairs, samples)


def _wiggle(i: int, amp: float) -> float:
    return 1.0 + amp * math.sin(i * 0.9)


#: sources the fixed box "lacks", so the detail panel shows its n/a lines
FIXED_MISSING = {
    "wake-ups": "/proc/schedstat reads zero: set kernel.sched_schedstats=1",
    "cpu pressure": "no /proc/pressure/cpu: a fake kernel without PSI",
}


def fixed_costs(pairs: int, speed: dict[int, float], i: int) -> Costs:
    """Made-up costs for the detail panel: the slow pair 2 waits, and B drifts."""
    threads = []
    for p in range(pairs):
        slow = p == 2
        for role in ("A", "B"):
            cpu = 3.6 * (1.8 if slow else 1.0)
            threads.append(
                ThreadCost(
                    pair=p,
                    role=role,
                    cpu_us_per_round=cpu,
                    user_us_per_round=cpu * 0.3,
                    sys_us_per_round=cpu * 0.7,
                    run_delay_us_per_round=2.4 if slow else 0.15,
                    migrations=1 if slow and role == "B" else 0,
                    vcsw_per_round=0.98,
                    ivcsw_per_round=0.01,
                )
            )
    # Per round of all threads, from the IPI rates of fixed_samples().
    rounds = 2 * sum(speed.values())
    cpus = tuple(
        CpuCost(c, 120.0 * (c + 1) / rounds, 3.0 / rounds, None, None, None) for c in range(4)
    )
    flags: tuple[str, ...] = ()
    if pairs > 2:
        flags = ("placement drift: pair 2 B bound to CPU 2 ran on CPU 3",)
    return Costs(
        threads=tuple(threads),
        cpus=cpus,
        rtt_us=tuple((p, 1e6 / v) for p, v in sorted(speed.items())),
        system_share_pct=70.0,
        cpu_us_per_round=sum(t.cpu_us_per_round or 0.0 for t in threads) / len(threads),
        cpu_pressure_avg10=None,
        flags=flags,
        missing=dict(FIXED_MISSING),
    )


def fixed_samples(per_pair: float = PER_PAIR, slow: float = 0.5, start: int = 0) -> list[Sample]:
    """1, 2 then 3 pairs; pair 2 runs at `slow` of the others; sample i is at 0.5 * i s."""
    out: list[Sample] = []
    i = start
    for pairs, count in STEPS:
        for _ in range(count):
            i += 1
            threads = []
            speeds = {}
            for p in range(pairs):
                speed = per_pair * (slow if p == 2 else 1.0) * _wiggle(i + p, 0.02)
                speeds[p] = speed
                for role in ("A", "B"):
                    last = 3 if (p == 2 and role == "B") else p
                    threads.append(
                        ThreadSample(
                            pair=p,
                            role=role,
                            tid=1000 + 2 * p + (role == "B"),
                            bound_cpu=p,
                            last_cpu=last,
                            rounds=int(speed * i / 2),
                            ops_per_s=speed,
                            vcsw_per_s=speed * 0.98,
                            ivcsw_per_s=speed * 0.01,
                        )
                    )
            cpus = tuple(
                CpuSample(c, 10.0, 75.0 + c, 2.0, 13.0 - c)
                if c < pairs
                else CpuSample(c, 1.0, 2.0, 0.0, 97.0)
                for c in range(4)
            )
            out.append(
                Sample(
                    t=0.5 * i,
                    dt=0.5,
                    pairs=pairs,
                    threads=tuple(threads),
                    total_ops_per_s=sum(t.ops_per_s for t in threads),
                    cpus=cpus,
                    ctxt_per_s=2.0 * sum(t.ops_per_s for t in threads),
                    ipis=tuple(IpiSample(c, 120.0 * (c + 1), 3.0) for c in range(4)),
                    costs=fixed_costs(pairs, speeds, i),
                )
            )
    return out


def fixed_source() -> FixedSource:
    return FixedSource(fixed_samples(), INFO, monitor_cpu=3)


class FixedComparison(FixedSource):
    """Two fixed runs, the second as if key W had switched the workload between them.

    Both are delivered at start, the second under the next generation. The
    app reads `info` when the second run's first sample arrives, which is
    after start() returned: so `info` is the second run's from then on, and
    only two runs can be told apart this way.
    """

    def __init__(
        self,
        first: tuple[RunInfo, list[Sample]],
        second: tuple[RunInfo, list[Sample]],
        monitor_cpu: int | None = None,
    ) -> None:
        super().__init__(first[1] + second[1], first[0], monitor_cpu)
        self.runs = (first, second)

    def start(self, on_sample: SampleCallback) -> None:
        for generation, (info, samples) in enumerate(self.runs):
            self._info = info
            for s in samples:
                on_sample(s, generation)


def fixed_comparison() -> FixedComparison:
    """sysv-msg, then futex on the same pairs: futex is faster and its pair 2 is healthy."""
    first = fixed_samples()
    futex = fixed_samples(per_pair=2.4 * PER_PAIR, slow=0.96, start=len(first))
    futex_info = INFO.changed(workload="futex")
    return FixedComparison((INFO, first), (futex_info, futex), monitor_cpu=3)
