"""Latency (key l): per pair, the last interval's round trip and one-way percentiles.

The figures come with each sample (Sample.latency, see engine/latency.py);
a sample without them says why (the Python engine, an untimed workload, a
record made without timing). Up and down choose the pair whose histogram
key h shows.
"""

from __future__ import annotations

from collections import deque

from textual.binding import Binding

from ...engine.latency import PairLatency, format_ns
from ...live.session import Session
from .rows_view import Row, RowsView
from .spark import spark

COLS = (("pair", 4), ("rtt p50", 8), ("p99", 8), ("p99.9", 8), ("max", 8),
        ("1-way p50", 9), ("p99", 8), ("p99.9", 8))  # fmt: skip
SPARK = 24


def _row_text(p: PairLatency) -> str:
    name = "all" if p.pair < 0 else str(p.pair)
    cells = [f"{name:>{COLS[0][1]}}"]
    values = (p.rtt.p50, p.rtt.p99, p.rtt.p999, p.rtt.max, p.oneway.p50, p.oneway.p99,
              p.oneway.p999)  # fmt: skip
    cells += [f"{format_ns(v):>{w}}" for v, (_, w) in zip(values, COLS[1:])]
    return " ".join(cells)


class LatencyPanel(RowsView):
    BINDINGS = [
        Binding("up", "move(-1)", "previous pair", show=False),
        Binding("down", "move(1)", "next pair", show=False),
    ]

    DEFAULT_CSS = """
    LatencyPanel { height: 1fr; display: none; }
    """

    def __init__(self, *, id: str | None = None, classes: str | None = None) -> None:
        super().__init__(id=id, classes=classes)
        self._rows: list[PairLatency] = []
        self._sparks: dict[int, deque[float]] = {}
        self._top = 0.0
        self._note = "waiting for the first timed sample"
        self.selected = 0  # the pair key h shows

    def update_from(self, session: Session, why_not: str = "") -> None:
        s = session.latest
        readings = s.latency if s is not None else ()
        if not readings:
            self._rows = []
            self._note = why_not or "these samples carry no latency"
        else:
            self._rows = list(readings)
            self._note = ""
        # The live histories, not copies, and one ceiling from the session's
        # per-sample peaks: a redraw at 1,024 pairs walks no history.
        self._sparks = session.latency_p99
        self._top = session.latency_scale(SPARK)
        pairs = [p.pair for p in self._rows if p.pair >= 0]
        if pairs and self.selected not in pairs:
            self.selected = pairs[0]
        self.border_subtitle = f"h: histogram of pair {self.selected}" if pairs else ""
        self.changed()

    def action_move(self, step: int) -> None:
        pairs = [p.pair for p in self._rows if p.pair >= 0]
        if not pairs:
            return
        i = pairs.index(self.selected) if self.selected in pairs else 0
        self.selected = pairs[(i + step) % len(pairs)]
        self.border_subtitle = f"h: histogram of pair {self.selected}"
        self.changed()

    def row_count(self) -> int:
        return len(self._rows) if self._rows else 1

    def heading(self, width: int) -> str:
        return " ".join(f"{n:>{w}}" for n, w in COLS) + "  rtt p99 history"

    def row(self, index: int, width: int) -> Row:
        if not self._rows:
            return [(self._note, None)], "dim"
        p = self._rows[index]
        history = self._sparks.get(p.pair, ())
        mark = "mark" if p.pair == self.selected else None
        return [
            (_row_text(p), mark),
            ("  ", None),
            (spark(history, SPARK, self._top), "spark"),
        ], None
