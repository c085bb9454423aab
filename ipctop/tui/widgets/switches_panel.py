"""Context switches: system-wide history, IPIs per CPU, switches per thread.

Ping-pong over a blocking object is a context switch per message; when the
ends sit on different CPUs every wake-up becomes a rescheduling IPI. This
panel shows where those costs land. Above PACED_ROWS threads the per-thread
rows step once a second, every 2 s above LONG_ROWS (table_pace.py), with the
rest of the screen.
"""

from __future__ import annotations

from collections.abc import Sequence
from itertools import islice

from ...engine.sample import ThreadSample
from ...live.session import Session
from .rows_view import Row as ViewRow
from .rows_view import RowsView
from .spark import si, spark
from .table_pace import Pace, Taken, paced_title

# A row above the threads: ("system", None) | ("section", title) | ("note", text) | ("ipi", IpiSample)
Row = tuple[str, object]
TITLE = "Context switches"


class SwitchesPanel(RowsView):
    def __init__(self, *, id: str | None = None, classes: str | None = None) -> None:
        super().__init__(id=id, classes=classes)
        self._rows: list[Row] = []
        self._ctxt: Sequence[float] = ()
        self._threads: Sequence[ThreadSample] = []
        self._now: float | None = None
        self._taken = Taken()  # Pace.at of the thread rows shown

    def update_from(
        self,
        session: Session,
        run_cpus: tuple[int, ...],
        show_all: bool,
        pace: Pace | None = None,
    ) -> None:
        every_s = pace.every_s if pace is not None else None
        title = paced_title(TITLE, every_s, "threads ")
        if title != self.border_title:
            self.border_title = title
        s = session.latest
        self._ctxt = session.ctxt  # the live history: row 0 reads its tail
        self._now = s.ctxt_per_s if s is not None else None
        rows: list[Row] = [("system", None)]
        if s is not None:
            ipis = [i for i in s.ipis if show_all or i.cpu in run_cpus]
            rows.append(("section", f"{'IPIs/s':<10} {'resched':>9} {'call':>9}"))
            if ipis:
                rows.extend(("ipi", i) for i in ipis)
            else:
                rows.append(("note", "no IPI counts in /proc/interrupts"))
            rows.append(("section", f"{'thread':<10} {'vol/s':>9} {'invol/s':>9}"))
        self._rows = rows
        step = pace.at if every_s is not None and pace is not None else None
        if self._taken.due(session, step):
            # The threads follow the rows above, read by index: none is built off screen.
            # Between two steps (table_pace.py) the last step's stay: their rows do not move.
            self._threads = session.thread_table().threads if s is not None else []
        self.changed()

    def row_count(self) -> int:
        return len(self._rows) + len(self._threads)

    def heading(self, width: int) -> str:
        return "switches/s, system-wide"

    def row(self, index: int, width: int) -> ViewRow:
        if index >= len(self._rows):
            t = self._threads[index - len(self._rows)]
            text = f"{t.pair:>4}{t.role:<6} {si(t.vcsw_per_s):>9} {si(t.ivcsw_per_s):>9}"
            return [(text, None)], None
        kind, item = self._rows[index]
        if kind == "system":
            value = f" {si(self._now):>8}"
            sw = max(0, width - len(value))
            top = max(islice(reversed(self._ctxt), sw), default=0.0)
            return [(spark(self._ctxt, sw, top), "spark"), (value, None)], None
        if kind == "section":
            return [(str(item), "heading")], None
        if kind == "note":
            return [(str(item), "dim")], None
        if kind == "ipi":
            text = f"cpu{item.cpu:<7} {si(item.resched_per_s):>9} {si(item.callfunc_per_s):>9}"  # type: ignore[attr-defined]
            return [(text, None)], None
        return [(str(item), None)], None
