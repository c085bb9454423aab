"""Which mechanism key W compares next, and when two runs' curves compare at all.

No Textual here. A mechanism is tried with the workload's own check (the
engine kind, the placement): one that refuses is skipped with its reason,
e.g. spin on one CPU. Units that are not ping-pong pairs (sysv-sem-multi,
sysv-lifecycle) are skipped too: their ops/s count other operations than
round trips, so their curve would not share an axis with the pairs'.
"""

from __future__ import annotations

from ..engine.config import RunConfig
from ..engine.workloads import WORKLOADS, make_workload
from ..errors import UsageError
from .sources import RunInfo


def why_not(name: str, info: RunInfo) -> str | None:
    """None when `name` can run with this run's engine, placement, mode and CPUs."""
    workload = make_workload(name)
    config = RunConfig(
        workload=name, placement=info.config.placement, mode=info.config.mode, cpus=info.config.cpus
    )
    try:
        workload.configure(config)  # sets a unit's size: known only after this
        workload.check(info.config.placement, info.config.engine)
    except UsageError as exc:
        return str(exc)
    if workload.roles(0) != ("A", "B") or workload.ops:
        return "not a ping-pong pair"
    return None


def next_mechanism(info: RunInfo) -> tuple[str | None, list[tuple[str, str]]]:
    """The next runnable workload after this run's, wrapping around; and those skipped."""
    names = list(WORKLOADS)
    start = names.index(info.config.workload) if info.config.workload in names else -1
    skipped: list[tuple[str, str]] = []
    for step in range(1, len(names)):
        name = names[(start + step) % len(names)]
        why = why_not(name, info)
        if why is None:
            return name, skipped
        skipped.append((name, why))
    return None, skipped


def comparable(old: RunInfo, new: RunInfo) -> bool:
    """Two runs whose curves may share a chart: only the workload differs."""

    def same(i: RunInfo) -> tuple[object, ...]:
        return (i.config.placement, i.config.mode, i.config.cpus, i.config.engine, i.source)

    return same(old) == same(new)
