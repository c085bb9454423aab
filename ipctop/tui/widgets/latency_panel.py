"""Latency (key l): per pair, the last reading's round trip and one-way percentiles.

The figures come with each sample (Sample.latency, see engine/latency.py), or
every 2 s above 256 ends (engine/latency_pace.py: the subtitle says so);
a sample without them says why (the Python engine, an untimed workload, a
record made without timing). Up and down choose the pair whose histogram
key h shows.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from textual.binding import Binding

from ...engine.latency import PairLatency, format_ns
from ...engine.latency_pace import latency_span_s
from ...live.session import Session
from .rows_view import Row, RowsView
from .spark import spark

COLS = (("pair", 4), ("rtt p50", 8), ("p99", 8), ("p99.9", 8), ("max", 8),
        ("1-way p50", 9), ("p99", 8), ("p99.9", 8))  # fmt: skip
SPARK = 24  # the p99 history's columns at most; fewer when the panel is narrower
TABLE = sum(w for _, w in COLS) + len(COLS) - 1
SPARK_MIN = 8  # narrower than this, no history column: a cut heading read "rtt p9"


def spark_width(width: int) -> int:
    """Columns for the p99 history beside the table at this width (0: none)."""
    room = width - TABLE - 2
    return min(SPARK, room) if room >= SPARK_MIN else 0


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
        self._every = ""  # " · read every 2 s" above 256 ends
        self._sparks: Mapping[int, Sequence[float]] = {}
        self._top = 0.0
        self._note = "waiting for the first timed sample"
        self.selected = 0  # the pair key h shows

    def update_from(self, session: Session, why_not: str = "") -> None:
        s = session.latest
        # The last reading, not the latest sample's: above 256 ends latency is
        # read every 2 s and the samples between carry none (engine/latency_pace.py).
        readings = session.latency
        span = latency_span_s(len(s.threads)) if s is not None else 0.0
        self._every = f" · read every {span:g} s" if span else ""
        if not readings:
            self._rows = []
            self._note = why_not or "these samples carry no latency"
        else:
            self._rows = list(readings)
            self._note = ""
        # The live histories (each built when its row is drawn) and one ceiling from
        # the session's per-sample peaks: a redraw at 1,024 pairs walks no history.
        self._sparks = session.latency_p99
        self._top = session.latency_scale(SPARK)
        # The session's pairs with a history are this sample's, in its order: no pass
        # over 1,024 readings to find the selected one.
        pairs = session.latency_p99
        if pairs and self.selected not in pairs:
            self.selected = next(iter(pairs))
        self.border_subtitle = f"h: histogram of pair {self.selected}{self._every}" if pairs else ""
        self.changed()

    def action_move(self, step: int) -> None:
        pairs = [p.pair for p in self._rows if p.pair >= 0]
        if not pairs:
            return
        i = pairs.index(self.selected) if self.selected in pairs else 0
        self.selected = pairs[(i + step) % len(pairs)]
        self.border_subtitle = f"h: histogram of pair {self.selected}{self._every}"
        self.changed()

    def row_count(self) -> int:
        return len(self._rows) if self._rows else 1

    def heading(self, width: int) -> str:
        head = " ".join(f"{n:>{w}}" for n, w in COLS)
        sw = spark_width(width)
        if not sw:
            return head
        return f"{head}  {'rtt p99 history' if sw >= 15 else 'p99 hist'}"

    def row(self, index: int, width: int) -> Row:
        if not self._rows:
            return [(self._note, None)], "dim"
        p = self._rows[index]
        history = self._sparks.get(p.pair, ())
        mark = "mark" if p.pair == self.selected else None
        sw = spark_width(width)
        if not sw:
            return [(_row_text(p), mark)], None
        return [(_row_text(p), mark), ("  ", None), (spark(history, sw, self._top), "spark")], None
