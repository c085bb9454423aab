"""Hand-made sweep records: what a sweep could have written, with steps a test plants.

Nothing here is measured; the configuration is the nine keys every record
has, as an `ipctop sweep` of one workload on two CPUs writes them.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ipctop.engine.config import RunConfig
from ipctop.output.records.record import Record, Step, StepThread


def sweep_of(
    steps: Sequence[Step],
    *,
    workload: str = "sysv-msg",
    box: dict[str, Any] | None = None,
    cpus: Sequence[int] = (0, 1),
    seconds: float = 5.0,
    warmup: float = 1.0,
    repeat: int = 1,
) -> Record:
    """A same-core threads sweep of `workload` on the native engine, with these steps."""
    config = RunConfig(
        workload, "same", "threads", cpus, "native", seconds=seconds, warmup=warmup, repeat=repeat
    )
    return Record(kind="sweep", box=box or {}, config=config, steps=list(steps))


def handmade_sweep(workload: str = "sysv-msg") -> Record:
    """A sweep someone could have run: 1 pair 400k, 2 pairs 1M (hand-made, not measured)."""

    def step(pairs: int, total: float) -> Step:
        per = total / (2 * pairs)
        threads = [
            StepThread(pair=p, role=r, cpu=p, ops_per_s=per, rounds=int(per * 5))
            for p in range(pairs)
            for r in ("A", "B")
        ]
        return Step(pairs=pairs, total_ops_per_s=total, threads=threads)

    return sweep_of(
        [step(1, 400_000.0), step(2, 1_000_000.0)],
        workload=workload,
        box={"kernel_release": "5.10.0-handmade", "cpu_model": "Handmade CPU @ 1.00GHz"},
    )
