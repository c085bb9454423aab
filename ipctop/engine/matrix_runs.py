"""The CPU-to-CPU latency matrix: one pinned pair per ordered pair of CPUs.

A cell (src, dst) runs end A on src and end B on dst; its one-way latency is
B's wake-up after A's post (src to dst), its reverse A's wake-up after B's.
Per topology class, the kernel's share is the mechanism's latency minus the
spin flag's on the same cells: what is left once the cache line's own trip
between the CPUs is taken away.
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, replace
from typing import Any

from ..cpuclass import CLASSES, SAME_CPU, CpuClasses
from ..errors import UsageError
from ..plain import from_plain, to_plain
from .config import RunConfig
from .engine import Engine
from .latency import NOTHING_TIMED, LatencySummary, Tracker, summarize
from .workloads import WORKLOADS

BASELINE = "spin"
# A cell with fewer timed wake-ups than this (a starved spinner on a busy box)
# says nothing about its class: it is shown, but left out of the class figures.
MIN_N = 100


@dataclass(frozen=True)
class Cell:
    workload: str
    src: int
    dst: int
    cls: str
    oneway: LatencySummary  # src to dst
    reverse: LatencySummary = NOTHING_TIMED  # dst to src, same run
    rtt: LatencySummary = NOTHING_TIMED
    ops_per_s: float = 0.0

    def to_dict(self) -> dict[str, Any]:
        # Kept for the written names ("from", "to", "class" are Python keywords or
        # taken) and the rounding: latencies to 3 significant digits, whole ops/s.
        rounded = replace(
            self,
            oneway=self.oneway.rounded(),
            reverse=self.reverse.rounded(),
            rtt=self.rtt.rounded(),
            ops_per_s=round(self.ops_per_s),
        )
        return {_WRITTEN.get(k, k): v for k, v in to_plain(rounded).items()}

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> Cell:
        names = {v: k for k, v in _WRITTEN.items()}
        return from_plain(cls, {names.get(k, k): v for k, v in d.items()})


# A field's key in a record where the name differs (a Cell's or a ClassRow's).
_WRITTEN = {
    "src": "from",
    "dst": "to",
    "cls": "class",
    "base_p50": "spin_p50",
    "base_p99": "spin_p99",
}


def check_workload(workload: str, engine: str) -> None:
    if workload not in WORKLOADS or not WORKLOADS[workload].timed:
        raise UsageError(f"matrix: {workload} has no two-end token to time")
    if engine == "python":
        raise UsageError("matrix needs the native engine (the Python engine does not time rounds)")


def measure_cell(
    workload: str,
    src: int,
    dst: int,
    classes: CpuClasses,
    seconds: float,
    warmup: float,
    mode: str = "threads",
    rt: int | None = None,
) -> Cell:
    placement, cpus = ("same", (src,)) if src == dst else ("cross", (src, dst))
    # Every round: the matrix measures latency only, and its pairs run one at a time.
    config = RunConfig(workload, placement, mode, cpus, "native", rt=rt, latency_every=1)
    with Engine(config) as engine:
        engine.start(1)
        time.sleep(warmup)
        tracker = Tracker(engine.counters.latency)
        tracker.read(engine.pairs)
        a = engine.pairs[0].ends[0].slot
        r0, t0 = engine.counters.rounds(a), time.monotonic()
        time.sleep(seconds)
        tracker.read(engine.pairs)
        rate = (engine.counters.rounds(a) - r0) / (time.monotonic() - t0)
        rtt, ab, ba = tracker.last[0]
    return Cell(
        workload,
        src,
        dst,
        classes.classify(src, dst),
        summarize(ab),
        summarize(ba),
        summarize(rtt),
        rate,
    )


def run_matrix(
    workloads: list[str],
    cells: list[tuple[int, int]],
    classes: CpuClasses,
    seconds: float,
    warmup: float,
    baseline: bool = True,
    mode: str = "threads",
    rt: int | None = None,
    progress: Callable[[Cell], None] | None = None,
) -> list[Cell]:
    """Every workload on every cell, and the spin flag on every two-CPU cell.

    The workloads of one cell run back to back, so a drift of the box's load
    touches a cell's mechanism and its baseline alike.
    """
    out = []
    names = list(workloads) + ([BASELINE] if baseline and BASELINE not in workloads else [])
    for src, dst in cells:
        for w in names:
            if w in ("spin",) and src == dst:
                continue  # two spinners on one CPU pass the flag once a tick: refused
            cell = measure_cell(w, src, dst, classes, seconds, warmup, mode, rt)
            out.append(cell)
            if progress is not None:
                progress(cell)
    return out


@dataclass(frozen=True)
class ClassRow:
    """One mechanism in one class: medians over its cells, in ns."""

    workload: str
    cls: str
    cells: int  # the cells its figures come from
    few: int  # cells left out: fewer than MIN_N timed wake-ups
    p50: float | None
    p99: float | None
    base_p50: float | None  # the spin flag's on the same cells; None on one CPU
    base_p99: float | None

    @property
    def kernel_p50(self) -> float | None:
        if self.p50 is None or self.base_p50 is None:
            return None
        return self.p50 - self.base_p50

    @property
    def kernel_p99(self) -> float | None:
        if self.p99 is None or self.base_p99 is None:
            return None
        return self.p99 - self.base_p99

    def to_dict(self) -> dict[str, Any]:
        # Kept for the written names and the kernel's share it works out.
        plain = {_WRITTEN.get(k, k): v for k, v in to_plain(self).items()}
        return {**plain, "kernel_p50": self.kernel_p50, "kernel_p99": self.kernel_p99}


def _median(xs: Iterable[float | None]) -> float | None:
    got = [x for x in xs if x is not None]
    return float(statistics.median(got)) if got else None


def class_rows(cells: list[Cell]) -> list[ClassRow]:
    """Per workload and class: the cells' median p50 and p99 one-way latency, and
    the spin flag's on the same (src, dst) cells."""
    base = {(c.src, c.dst): c for c in cells if c.workload == BASELINE}
    rows = []
    for w in dict.fromkeys(c.workload for c in cells):
        for cls in CLASSES:
            every = [c for c in cells if c.workload == w and c.cls == cls]
            if not every:
                continue
            mine = [c for c in every if c.oneway.n >= MIN_N]
            spins = [base[(c.src, c.dst)] for c in mine if (c.src, c.dst) in base]
            spins = [s for s in spins if s.oneway.n >= MIN_N]
            same = cls == SAME_CPU or w == BASELINE
            rows.append(
                ClassRow(
                    w,
                    cls,
                    len(mine),
                    len(every) - len(mine),
                    _median(c.oneway.p50 for c in mine),
                    _median(c.oneway.p99 for c in mine),
                    None if same else _median(c.oneway.p50 for c in spins),
                    None if same else _median(c.oneway.p99 for c in spins),
                )
            )
    return rows
