"""The immutable sample every consumer reads: TUI, sweep, records, verdicts.

A Sample is what the sampler saw over one interval. Replay and the snapshot
tests build the same objects from JSON, so nothing downstream can tell a live
sample from a recorded one.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..plain import from_plain, to_plain
from .costs import Costs
from .latency import PairLatency
from .opstats import OpStats


@dataclass(frozen=True, slots=True)
class ThreadSample:
    """One end of a pair over one interval."""

    pair: int
    role: str  # "A" starts the ping-pong, "B" answers
    tid: int
    bound_cpu: int | None  # None when unpinned
    last_cpu: int | None  # where it last ran (/proc task stat), None if unknown
    rounds: int  # cumulative
    ops_per_s: float
    errors: int = 0  # cumulative wrong messages (never counted as rounds)
    state: str = "running"
    vcsw_per_s: float | None = None
    ivcsw_per_s: float | None = None
    # Cumulative, one per operation the workload names (workload.ops), empty for the
    # workloads that count none: any window's per-end rates are rebuilt from two readings.
    ops: tuple[int, ...] = ()

    @property
    def off_cpu(self) -> bool:
        """True when the thread ran somewhere other than its binding."""
        return (
            self.bound_cpu is not None
            and self.last_cpu is not None
            and self.bound_cpu != self.last_cpu
        )


@dataclass(frozen=True, slots=True)
class CpuSample:
    """Utilization of one CPU over the interval, in percent."""

    cpu: int
    user: float
    system: float
    softirq: float
    idle: float
    # Optional (written only when known): the share of the interval the
    # hypervisor ran another guest on this vCPU (/proc/stat steal, inside busy),
    # and the clock where cpufreq reports one.
    steal: float | None = None
    mhz: float | None = None

    @property
    def busy(self) -> float:
        return max(0.0, 100.0 - self.idle)


@dataclass(frozen=True, slots=True)
class IpiSample:
    """Inter-processor interrupts received by one CPU, per second."""

    cpu: int
    resched_per_s: float | None
    callfunc_per_s: float | None


@dataclass(frozen=True, slots=True)
class Sample:
    t: float  # seconds since the sampler started
    dt: float  # length of the interval
    pairs: int
    threads: tuple[ThreadSample, ...]
    total_ops_per_s: float
    cpus: tuple[CpuSample, ...] = ()
    ctxt_per_s: float | None = None
    ipis: tuple[IpiSample, ...] = ()
    events: tuple[str, ...] = ()  # failures and warnings seen in this interval
    oversubscribed: bool = False  # more ends than CPUs to run them
    ops: OpStats | None = None  # per-operation rates (life-cycle workloads)
    latency: tuple[PairLatency, ...] = ()  # per pair, when the ends time their rounds
    costs: Costs | None = None  # where the time went (None: detail off)
    side: str | None = None  # "A" or "B": which setting ran, in an `ipctop ab` run
    # Optional (written only when set; engine/stalls.py): pairs with no round for
    # STALL_S at this reading, and a reading STALL_S later than its period.
    stalled: tuple[int, ...] = ()
    gap: bool = False
    # Optional (written only when known): the share of the interval some task
    # waited for a CPU, from PSI's /proc/pressure/cpu "some" total.
    cpu_pressure_pct: float | None = None

    @property
    def rate_sample(self) -> bool:
        """False for a stalled window: it is left out of every rate."""
        return not self.stalled and not self.gap

    def to_dict(self) -> dict[str, Any]:
        d = to_plain(self)
        # Kept: their own writers round what the instruments cannot resolve.
        d["latency"] = [p.to_dict() for p in self.latency]
        d["ops"] = {k: v.to_dict() for k, v in self.ops.items()} if self.ops else None
        for key in ("stalled", "gap"):
            if not d[key]:
                del d[key]
        if d["cpu_pressure_pct"] is None:
            del d["cpu_pressure_pct"]
        for t in d["threads"]:
            if not t["ops"]:
                del t["ops"]  # absent, so the records of workloads without ops do not grow
        for c in d["cpus"]:
            for key in ("steal", "mhz"):
                if c[key] is None:
                    del c[key]
        return d

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> Sample:
        # Kept for the legacy "extra" object and the nulls older writers put for "none".
        d = lift_extra(d)
        kept = {k: v for k, v in d.items() if not (k in _DEFAULT_WHEN_EMPTY and not v)}
        return from_plain(cls, kept)


# Null or empty in an older record: read as the field's default ((), None).
_DEFAULT_WHEN_EMPTY = ("latency", "stalled", "costs", "ops")


def lift_extra(d: dict[str, Any]) -> dict[str, Any]:
    """A sample written before these fields were typed kept them under "extra"."""
    extra = d.get("extra")
    if not isinstance(extra, dict):
        return d
    out = {k: v for k, v in d.items() if k != "extra"}
    for key in ("oversubscribed", "ops", "latency", "costs"):
        if key in extra and key not in out:
            out[key] = extra[key]
    if "ab" in extra and "side" not in out:
        out["side"] = extra["ab"]
    return out
