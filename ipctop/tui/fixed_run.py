"""A fixed, made-up run for snapshot tests and demos: 1, 2, then 3 pairs on 4 CPUs.

Nothing here is measured: the numbers are made up so each picture is the
same on every box. Pair 2 runs at half speed (it should be highlighted) and
its end B last ran on CPU 3 although bound to CPU 2 (it should be flagged).
"""

from __future__ import annotations

import math

from ..engine.sample import CpuSample, IpiSample, Sample, ThreadSample
from .sources import FixedSource, RunInfo

INFO = RunInfo(
    workload="sysv-msg",
    placement="same",
    mode="threads",
    engine="native",
    cpus=(0, 1, 2, 3),
    kernel="6.1.0-fixed",
    cpu_model="Fixed CPU @ 3.00GHz (fake, for snapshots)",
    interval=0.5,
    source="fixed samples",
)

PER_PAIR = 250_000.0  # rounds/s of a healthy pair
STEPS = ((1, 10), (2, 10), (3, 12))  # (pairs, samples)


def _wiggle(i: int, amp: float) -> float:
    return 1.0 + amp * math.sin(i * 0.9)


def fixed_samples() -> list[Sample]:
    out: list[Sample] = []
    i = 0
    for pairs, count in STEPS:
        for _ in range(count):
            i += 1
            threads = []
            for p in range(pairs):
                speed = PER_PAIR * (0.5 if p == 2 else 1.0) * _wiggle(i + p, 0.02)
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
                    extra={"oversubscribed": False},
                )
            )
    return out


def fixed_source() -> FixedSource:
    return FixedSource(fixed_samples(), INFO, monitor_cpu=3)
