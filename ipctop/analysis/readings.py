"""What `ipctop check` measured, as the verdicts (verdicts.py) read it.

The check command fills these from its runs; tests plant them by hand, so
every threshold can be tried on known numbers without a kernel.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ipctop.analysis.scaling import ScalingPoint

from ..engine.latency import LatencySummary, PairLatency
from ..plain import to_plain


@dataclass(frozen=True)
class ThreadReading:
    """One end of a pair over a measured run."""

    pair: int
    role: str
    bound_cpu: int | None  # None when unpinned
    seen_cpus: tuple[int, ...]  # every CPU it was observed on during the run
    rounds: int
    errors: int = 0  # wrong messages received
    state: str = "running"


@dataclass(frozen=True)
class RunLatency:
    """Every pair of a run's median window as one (PairLatency's pair -1), to three
    significant digits as a record keeps latency, and how its rounds were timed:
    check's JSON writes these keys in this order."""

    pair: int
    rtt: LatencySummary
    oneway: LatencySummary
    note: str = ""  # Engine.latency_note

    @classmethod
    def of(cls, p: PairLatency, note: str) -> RunLatency:
        kept = p.rounded()
        return cls(kept.pair, kept.rtt, kept.oneway, note)


@dataclass(frozen=True)
class RunReading:
    """What one check run measured; error is set when it could not run at all."""

    workload: str
    placement: str
    pairs: int
    ncpus: int
    total_ops_per_s: float
    threads: tuple[ThreadReading, ...] = ()
    oversubscribed: bool = False
    events: tuple[str, ...] = ()
    seconds: float = 0.0
    error: str | None = None
    window_totals: tuple[float, ...] = ()  # total ops/s of each measured window
    windows: tuple[float, ...] = ()  # every sampler interval's rate: the interval's samples
    latency: RunLatency | None = None  # optional: the median window's, all pairs (ns)

    @property
    def label(self) -> str:
        s = "" if self.pairs == 1 else "s"
        return f"{self.workload} {self.placement}-core {self.pairs} pair{s}"

    def to_dict(self) -> dict[str, Any]:
        # Kept for the computed label a reader of check's JSON gets too.
        d = to_plain(self)
        d["label"] = self.label
        return d


@dataclass
class CheckReadings:
    """Every run of one check, by role; missing runs were not possible on this box."""

    one: dict[str, RunReading] = field(default_factory=dict)  # workload -> 1 pair same-core
    all: dict[str, RunReading] = field(default_factory=dict)  # workload -> N pairs same-core
    cross: dict[str, RunReading] = field(default_factory=dict)  # workload -> 1 pair cross-core
    shared: RunReading | None = None
    # workload -> pairs -> reading at the counts between 1 and N (check_curve.pair_counts)
    between: dict[str, dict[int, RunReading]] = field(default_factory=dict)
    engine: str = "native"

    def runs(self) -> list[RunReading]:
        mid = [r for by in self.between.values() for r in by.values()]
        out = [*self.one.values(), *mid, *self.all.values(), *self.cross.values()]
        return out + ([self.shared] if self.shared is not None else [])

    def curve(self, workload: str) -> list[ScalingPoint]:
        """Every measured pair count of a workload, same-core, 1 through N."""
        runs = [self.one.get(workload), *self.between.get(workload, {}).values()]
        runs.append(self.all.get(workload))
        return sorted(
            (ScalingPoint(r.pairs, r.total_ops_per_s) for r in runs if r and not r.error),
            key=lambda p: p.pairs,
        )
