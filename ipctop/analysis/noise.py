"""Why a window is noisy: steal, CPU pressure and the clock of the run's CPUs.

A figure from a window in which the hypervisor ran another guest on one of
the run's vCPUs for more than STEAL_MARK_PCT of it is marked, so a user sees
why an interval is wide. The worst CPU counts, not the mean: a ping-pong
pair waits for its slower end, so one robbed CPU slows the whole pair.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable
from dataclasses import dataclass
from typing import Any

from ..engine.sample import Sample
from ..plain import to_plain

#: percent of one CPU's window taken by the hypervisor above which a window is
#: marked: at 5 % a blocking pair's rate moves by about as much, more than the
#: spread of a quiet window, so the mark explains a wide figure.
STEAL_MARK_PCT = 5.0


@dataclass(frozen=True)
class WindowNoise:
    """One window's noise over the run's CPUs (None: the box does not say)."""

    steal_pct: float | None  # the most stolen of the run's CPUs
    steal_cpu: int | None  # which CPU that was
    pressure_pct: float | None  # PSI: share of the window some task waited for a CPU
    mhz: float | None  # the slowest clock of the run's CPUs, where cpufreq reports one

    @property
    def stolen(self) -> bool:
        return is_stolen(self.steal_pct)


def is_stolen(steal_pct: float | None) -> bool:
    """The marking rule: strictly more than STEAL_MARK_PCT of a CPU."""
    return steal_pct is not None and steal_pct > STEAL_MARK_PCT


def window_noise(sample: Sample, cpus: Collection[int] = ()) -> WindowNoise:
    """The noise of one sample over `cpus` (every CPU it has when empty)."""
    rows = [c for c in sample.cpus if not cpus or c.cpu in cpus]
    stolen = [c for c in rows if c.steal is not None]
    worst = max(stolen, key=lambda c: c.steal or 0.0) if stolen else None
    clocks = [c.mhz for c in rows if c.mhz is not None]
    return WindowNoise(
        steal_pct=worst.steal if worst is not None else None,
        steal_cpu=worst.cpu if worst is not None else None,
        pressure_pct=sample.cpu_pressure_pct,
        mhz=min(clocks) if clocks else None,
    )


def pair_cpus(sample: Sample) -> frozenset[int]:
    """The CPUs the sample's ends are bound to (or last ran on, when unpinned)."""
    cpus = (t.bound_cpu if t.bound_cpu is not None else t.last_cpu for t in sample.threads)
    return frozenset(c for c in cpus if c is not None)


def summary_line(timeline: Iterable[Sample]) -> str | None:
    """The run's noise in one line: the worst steal, how many windows were
    marked, the mean PSI and the clock's range; None when the box said nothing."""
    noise = [window_noise(s, pair_cpus(s)) for s in timeline]
    steal = [(n.steal_pct, n.steal_cpu) for n in noise if n.steal_pct is not None]
    if not steal:
        return None
    worst, cpu = max(steal, key=lambda x: x[0])
    marked = sum(n.stolen for n in noise)
    parts = [
        f"steal max {worst:.1f} % (cpu{cpu}), {marked} of {len(noise)} window(s) over "
        f"{STEAL_MARK_PCT:g} % marked STOLEN"
    ]
    psi = [n.pressure_pct for n in noise if n.pressure_pct is not None]
    if psi:
        parts.append(f"CPU pressure (PSI some) mean {sum(psi) / len(psi):.0f} %")
    clocks = [n.mhz for n in noise if n.mhz is not None]
    if clocks:
        parts.append(f"clock {min(clocks):.0f}-{max(clocks):.0f} MHz")
    return " · ".join(parts)


def noise_words(n: WindowNoise) -> list[str]:
    """key=value words for a one-line window (run's lines): steal always where
    known, PSI where the kernel has it, the clock where cpufreq has one, and
    STOLEN when the window is marked."""
    out = []
    if n.steal_pct is not None:
        out.append(f"steal={n.steal_pct:.1f}%")
    if n.pressure_pct is not None:
        out.append(f"psi={n.pressure_pct:.0f}%")
    if n.mhz is not None:
        out.append(f"mhz={n.mhz:.0f}")
    if n.stolen:
        out.append(f"STOLEN(cpu{n.steal_cpu}>{STEAL_MARK_PCT:g}%)")
    return out


@dataclass(frozen=True)
class StepNoise:
    """A record step's per-window noise, aligned with its `windows`."""

    mark_pct: float  # a window is marked when a CPU had more than this stolen
    stolen_windows: int
    steal_pct: tuple[float | None, ...]
    pressure_pct: tuple[float | None, ...]
    mhz: tuple[float | None, ...] | None = None  # only where cpufreq has a clock

    def to_dict(self) -> dict[str, Any]:
        # Kept: mhz is absent, not null, where cpufreq has no clock.
        d = to_plain(self)
        if self.mhz is None:
            del d["mhz"]
        return d


def record_noise(windows: Iterable[WindowNoise]) -> StepNoise | None:
    """A record's per-window noise (a sweep step's `noise`), aligned with its
    `windows`; None when the box said nothing for any of them."""
    rows = list(windows)
    if all(n.steal_pct is None and n.pressure_pct is None for n in rows):
        return None
    return StepNoise(
        mark_pct=STEAL_MARK_PCT,
        stolen_windows=sum(n.stolen for n in rows),
        steal_pct=tuple(n.steal_pct for n in rows),
        pressure_pct=tuple(n.pressure_pct for n in rows),
        mhz=tuple(n.mhz for n in rows) if any(n.mhz is not None for n in rows) else None,
    )


def record_note(noise: StepNoise | None) -> str | None:
    """One line for a step whose windows were marked; None when none was."""
    if noise is None or not noise.stolen_windows:
        return None
    steal = [v for v in noise.steal_pct if v is not None]
    return (
        f"noise: {noise.stolen_windows} of {len(noise.steal_pct)} window(s) "
        f"had over {noise.mark_pct:g} % of a CPU stolen by the "
        f"hypervisor (max {max(steal, default=0.0):.1f} %): the interval is wider for it"
    )
