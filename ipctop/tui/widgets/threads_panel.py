"""One row per thread, grouped by pair: where it ran, its history, its share.

A row more than 20 % off the median of all running threads is highlighted:
the seeds found misplaced pairs by exactly this imbalance. A thread that last
ran somewhere other than its binding gets its CPU flagged.
"""

from __future__ import annotations

from ...live.session import Session
from ...live.thread_table import ThreadTable
from .rows_view import Pieces, Row, RowsView
from .spark import si, spark

LEFT = 13  # " pair role" + " cpu" columns
RIGHT = 16  # ops/s and share


class ThreadsPanel(RowsView):
    def __init__(self, *, id: str | None = None, classes: str | None = None) -> None:
        super().__init__(id=id, classes=classes)
        self._rows = ThreadTable((), 0.0, 0.0, {})
        self._top = 0.0

    def update_from(self, session: Session) -> None:
        # Rows are built as they are drawn (RowsView asks only for those on screen).
        self._rows = session.thread_table()
        self._top = session.thread_scale(self._spark_width(self.text_width))
        imbalanced = self._rows.imbalanced()
        off = self._rows.off_cpu()
        notes = []
        if imbalanced:
            notes.append(f"{imbalanced} imbalanced")
        if off:
            notes.append(f"{off} off their CPU")
        subtitle = " · ".join(notes)
        if subtitle != self.border_subtitle:
            self.border_subtitle = subtitle
        self.changed()

    def row_count(self) -> int:
        return len(self._rows)

    @staticmethod
    def _spark_width(width: int) -> int:
        return max(0, width - LEFT - RIGHT)

    def heading(self, width: int) -> str:
        sw = self._spark_width(width)
        label = f"history, top {si(self._top)}" if sw >= 20 else "history"
        return f"{'pair':>5} {'cpu':<6} {label[:sw]:<{sw}} {'ops/s':>8} {'share':>6}"

    def row(self, index: int, width: int) -> Row:
        r = self._rows.row(index)
        t = r.sample
        pieces: Pieces = [(f"{t.pair:>4}{t.role} ", None)]
        last = "?" if t.last_cpu is None else str(t.last_cpu)
        if t.off_cpu:
            pieces.append((f"{last}≠{t.bound_cpu}".ljust(6), "flag"))
        else:
            pieces.append((f"{last:>3}   ", None))
        pieces.append((" ", None))
        pieces.append((spark(r.history, self._spark_width(width), self._top), "spark"))
        if t.state == "running":
            pieces.append((f" {si(t.ops_per_s):>8} {100 * r.share:5.1f}%", None))
        else:
            pieces.append((f" {t.state[: RIGHT - 1]:>{RIGHT - 1}}", "flag"))
        if r.imbalanced:
            return pieces, "hot"
        return pieces, "band" if t.pair % 2 else None
