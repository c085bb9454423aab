"""One row per CPU of the run (all CPUs on request): busy history and split.

Where the box says them, two more columns: the share the hypervisor stole
(a CPU over STEAL_MARK_PCT is marked) and the clock (cpufreq); the window's
CPU pressure (PSI) is in the subtitle. Without them (old records, a kernel
without PSI, a VM without cpufreq) the columns are not drawn.
"""

from __future__ import annotations

from collections.abc import Sequence

from ...analysis.noise import STEAL_MARK_PCT, is_stolen
from ...engine.sample import CpuSample
from ...live.session import Session
from .rows_view import Row, RowsView
from .spark import spark

LEFT = 9  # "cpu 12 ● "
RIGHT = 18  # busy usr sys sirq
STEAL_W = 6  # " stl% " with its mark
MHZ_W = 5  # " 3400"


class CpusPanel(RowsView):
    def __init__(self, *, id: str | None = None, classes: str | None = None) -> None:
        super().__init__(id=id, classes=classes)
        self._rows: list[tuple[CpuSample, Sequence[float], bool]] = []
        self._steal = self._mhz = False
        self.show_all = False

    def update_from(self, session: Session, run_cpus: tuple[int, ...]) -> None:
        s = session.latest
        hosts = session.pair_cpus()
        wanted = set(run_cpus)
        rows: list[tuple[CpuSample, Sequence[float], bool]] = []
        for c in s.cpus if s is not None else ():
            if self.show_all or c.cpu in wanted:
                # The live history, not a copy: the sparkline reads only its tail.
                rows.append((c, session.cpu_busy.get(c.cpu, ()), c.cpu in hosts))
        self._rows = rows
        self._steal = any(c.steal is not None for c, _, _ in rows)
        self._mhz = any(c.mhz is not None for c, _, _ in rows)
        stolen = [c.cpu for c, _, _ in rows if is_stolen(c.steal)]
        subtitle = cpus_subtitle(
            self.show_all,
            None if s is None else s.cpu_pressure_pct,
            ",".join(f"cpu{c}" for c in stolen),
            self.size.width - 4,  # the border's corners and a space each side
        )
        if subtitle != self.border_subtitle:
            self.border_subtitle = subtitle
        self.changed()

    def row_count(self) -> int:
        return len(self._rows)

    def _shown(self, width: int) -> tuple[bool, bool]:
        """(steal, MHz) columns that fit beside the split: at 80x24 the panel is 30
        wide and the split alone 27, so the clock goes first, then steal (whose
        warning the subtitle still gives), rather than cut a row."""
        steal, mhz = self._steal, self._mhz
        if mhz and LEFT + RIGHT + STEAL_W * steal + MHZ_W > width:
            mhz = False
        if steal and LEFT + RIGHT + STEAL_W > width:
            steal = False
        return steal, mhz

    def heading(self, width: int) -> str:
        steal, mhz = self._shown(width)
        sw = max(0, width - LEFT - RIGHT - STEAL_W * steal - MHZ_W * mhz)
        label = "busy %" if sw >= 6 else ""
        head = f"{'cpu':<8} {label:<{sw}} {'busy':>4} {'usr':>3} {'sys':>3} {'sirq':>4}"
        if steal:
            head += f" {'stl':>4} "
        if mhz:
            head += f" {'MHz':>4}"
        return head

    def row(self, index: int, width: int) -> Row:
        c, history, hosts = self._rows[index]
        steal, mhz = self._shown(width)
        sw = max(0, width - LEFT - RIGHT - STEAL_W * steal - MHZ_W * mhz)
        pieces = [
            (f"cpu{c.cpu:>3} ", None),
            ("●" if hosts else " ", "mark"),
            (" ", None),
            (spark(history, sw, 100.0), "spark"),
            (f" {c.busy:>3.0f}% {c.user:>3.0f} {c.system:>3.0f} {c.softirq:>4.0f}", None),
        ]
        if steal:
            text = "   -" if c.steal is None else f"{c.steal:>4.1f}"
            if is_stolen(c.steal):
                pieces.append((f" {text}!", "flag"))
            else:
                pieces.append((f" {text} ", None))
        if mhz:
            pieces.append((f" {'-' if c.mhz is None else f'{c.mhz:.0f}':>4}", None))
        return pieces, None


def cpus_subtitle(show_all: bool, psi: float | None, stolen: str, width: int) -> str:
    """The panel's subtitle, whole at `width` (0: unknown): a steal warning
    first, then PSI, then the long words; a border never ends in "…"."""
    bases = ("all CPUs (c)", "all (c)") if show_all else ("CPUs of this run (c: all)", "c: all")
    warn = [f" · ! steal > {STEAL_MARK_PCT:g} % on {stolen}", " · ! steal"] if stolen else [""]
    pressure = [f" · PSI {psi:.0f} %", ""] if psi is not None else [""]
    tried = [b + p + w for w in warn for p in pressure for b in bases]
    return next((t for t in tried if width <= 0 or len(t) <= width), tried[-1])
