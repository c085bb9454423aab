"""One row per thread, grouped by pair: where it ran, its history, its share.

A row more than 20 % off the median of all running threads is highlighted:
the seeds found misplaced pairs by exactly this imbalance. A thread that last
ran somewhere other than its binding gets its CPU flagged. A load workload
(hackbench, chat) shows one row per group or room instead (live/unit_rows.py):
40 or 80 ends each would be thousands of rows. Above PACED_ROWS threads the
table steps once a second, every 2 s above LONG_ROWS (table_pace.py), and its
title says so.
"""

from __future__ import annotations

from ...live.session import Session
from ...live.thread_table import ThreadTable
from ...live.unit_rows import UnitRow
from .rows_view import Pieces, Row, RowsView
from .spark import si, spark
from .table_pace import PACED_ROWS, Pace, Taken, paced_title

LEFT = 13  # " pair role" + " cpu" columns
RIGHT = 16  # ops/s and share
TITLE = "Threads"


class ThreadsPanel(RowsView):
    def __init__(self, *, id: str | None = None, classes: str | None = None) -> None:
        super().__init__(id=id, classes=classes)
        self._rows = ThreadTable((), 0.0, 0.0, {})
        self._units: list[UnitRow] | None = None  # a load workload's rows, else None
        self._unit = "pair"
        self._top = 0.0
        self._taken = Taken()  # (Pace.at, text width) of the rows shown
        self._count = 0  # the session's sample count when they were taken

    def update_from(self, session: Session, pace: Pace | None = None) -> None:
        """Take the session's latest sample, or, when paced, only at a step (table_pace.py)."""
        if session.units is not None and len(session.units.units) <= PACED_ROWS:
            pace = None  # a load workload's rows are its groups or rooms: few, every sample
        every_s = pace.every_s if pace is not None else None
        title = paced_title(TITLE, every_s)
        if title != self.border_title:
            self.border_title = title
        step = (pace.at, self.text_width) if every_s is not None and pace is not None else None
        if not self._taken.due(session, step):
            return  # the last step's rows stay, their sparklines too (_lag)
        self._count = session.count
        if session.units is not None:
            self._update_units(session)
            return
        self._units = None
        # Rows are built as they are drawn (RowsView asks only for those on screen).
        self._rows = session.thread_table()
        self._top = session.thread_scale(self._spark_width(self.text_width))
        self._say_subtitle()
        self.changed()

    def on_resize(self) -> None:
        if self._units is not None:
            return  # a unit's subtitle does not depend on the height (nor on thread rows)
        self._say_subtitle()  # an auto height settles after the rows came: rows hidden or not

    def _say_subtitle(self) -> None:
        imbalanced = self._rows.imbalanced()
        off = self._rows.off_cpu()
        notes = []
        if imbalanced:
            notes.append(f"{imbalanced} imbalanced")
        if off:
            notes.append(f"{off} off their CPU")
        shown = max(0, self.scrollable_content_region.height - 1)  # under the heading
        if self.is_mounted and shown and len(self._rows) > shown:
            # A row out of sight must not read as a thread that is not there; the
            # longest form that fits the edge, whole.
            room = self.size.width - 4 - sum(len(n) + 3 for n in notes)
            n = len(self._rows)
            for say in (f"{shown} of {n} rows, scroll", f"{shown}/{n} rows", f"{shown}/{n}"):
                if len(say) <= room or say == f"{shown}/{n}":
                    notes.append(say)
                    break
        subtitle = " · ".join(notes)
        if subtitle != self.border_subtitle:
            self.border_subtitle = subtitle

    def _update_units(self, session: Session) -> None:
        assert session.units is not None and session.unit is not None
        self._unit = session.unit
        self._units = session.units.rows()
        self._top = session.units.scale(self._spark_width(self.text_width))
        ends = sum(r.ends for r in self._units)
        notes = [f"{len(self._units)} {self._unit}s, {ends} threads"]
        imbalanced = sum(1 for r in self._units if r.imbalanced)
        if imbalanced:
            notes.append(f"{imbalanced} imbalanced")
        subtitle = " · ".join(notes)
        if subtitle != self.border_subtitle:
            self.border_subtitle = subtitle
        self.changed()

    def row_count(self) -> int:
        return len(self._units) if self._units is not None else len(self._rows)

    @staticmethod
    def _spark_width(width: int) -> int:
        return max(0, width - LEFT - RIGHT)

    def _lag(self) -> int:
        """Samples the session took since the rows were: a line drawn between two steps
        (a scroll, a toast gone) ends its sparkline where the table's figures are."""
        taken = self._taken.session
        return 0 if taken is None else max(0, taken.count - self._count)

    def heading(self, width: int) -> str:
        sw = self._spark_width(width)
        label = f"history, top {si(self._top)}" if sw >= 20 else "history"
        if self._units is not None:
            return f"{self._unit:>5} {'cpus':<6} {label[:sw]:<{sw}} {'msgs/s':>8} {'share':>6}"
        return f"{'pair':>5} {'cpu':<6} {label[:sw]:<{sw}} {'ops/s':>8} {'share':>6}"

    def row(self, index: int, width: int) -> Row:
        if self._units is not None:
            return self._unit_row(self._units[index], width)
        r = self._rows.row(index)
        t = r.sample
        pieces: Pieces = [(f"{t.pair:>4}{t.role} ", None)]
        last = "?" if t.last_cpu is None else str(t.last_cpu)
        if t.off_cpu:
            pieces.append((f"{last}≠{t.bound_cpu}".ljust(6), "flag"))
        else:
            pieces.append((f"{last:>3}   ", None))
        pieces.append((" ", None))
        pieces.append((spark(r.history, self._spark_width(width), self._top, self._lag()), "spark"))
        if t.state == "running":
            pieces.append((f" {si(t.ops_per_s):>8} {100 * r.share:5.1f}%", None))
        else:
            pieces.append((f" {t.state[: RIGHT - 1]:>{RIGHT - 1}}", "flag"))
        if r.imbalanced:
            return pieces, "hot"
        return pieces, "band" if t.pair % 2 else None

    def _unit_row(self, r: UnitRow, width: int) -> Row:
        pieces: Pieces = [(f"{r.unit:>5} ", None), (f"{r.cpus[:6]:<6}", None), (" ", None)]
        pieces.append((spark(r.history, self._spark_width(width), self._top, self._lag()), "spark"))
        if r.stopped:
            pieces.append((f" {f'{r.stopped}/{r.ends} stopped'[: RIGHT - 1]:>{RIGHT - 1}}", "flag"))
        else:
            pieces.append((f" {si(r.ops_per_s):>8} {100 * r.share:5.1f}%", None))
        if r.imbalanced:
            return pieces, "hot"
        return pieces, "band" if r.unit % 2 else None
