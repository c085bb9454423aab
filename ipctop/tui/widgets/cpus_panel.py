"""One row per CPU of the run (all CPUs on request): busy history and split."""

from __future__ import annotations

from ...engine.sample import CpuSample
from ...live.session import Session
from .rows_view import Row, RowsView
from .spark import spark

LEFT = 9  # "cpu 12 ● "
RIGHT = 18  # busy usr sys sirq


class CpusPanel(RowsView):
    def __init__(self, *, id: str | None = None, classes: str | None = None) -> None:
        super().__init__(id=id, classes=classes)
        self._rows: list[tuple[CpuSample, tuple[float, ...], bool]] = []
        self.show_all = False

    def update_from(self, session: Session, run_cpus: tuple[int, ...]) -> None:
        s = session.latest
        hosts = session.pair_cpus()
        wanted = set(run_cpus)
        rows = []
        for c in s.cpus if s is not None else ():
            if self.show_all or c.cpu in wanted:
                rows.append((c, tuple(session.cpu_busy.get(c.cpu, ())), c.cpu in hosts))
        self._rows = rows
        subtitle = "all CPUs (c)" if self.show_all else "CPUs of this run (c: all)"
        if subtitle != self.border_subtitle:
            self.border_subtitle = subtitle
        self.changed()

    def row_count(self) -> int:
        return len(self._rows)

    def heading(self, width: int) -> str:
        sw = max(0, width - LEFT - RIGHT)
        label = "busy %" if sw >= 6 else ""
        return f"{'cpu':<8} {label:<{sw}} {'busy':>4} {'usr':>3} {'sys':>3} {'sirq':>4}"

    def row(self, index: int, width: int) -> Row:
        c, history, hosts = self._rows[index]
        sw = max(0, width - LEFT - RIGHT)
        return [
            (f"cpu{c.cpu:>3} ", None),
            ("●" if hosts else " ", "mark"),
            (" ", None),
            (spark(history, sw, 100.0), "spark"),
            (f" {c.busy:>3.0f}% {c.user:>3.0f} {c.system:>3.0f} {c.softirq:>4.0f}", None),
        ], None
