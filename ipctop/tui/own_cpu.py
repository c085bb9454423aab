"""The monitor's own CPU use on the status line: read once a second, shown over a span.

/proc counts CPU in 10 ms ticks, so one tick in the 18 ms after a throttled
redraw read as 54 % (screenshots/scaling.svg): a reading covers at least
OWN_CPU_MIN_WINDOW, even when a test or a screenshot asks for one now.

One reading of 1 s is a few ticks (at 2 % CPU two on average; 0, 1 or 3
are common), too coarse to tell 8 % from 12 %. So the footer's figure is taken over
the last OWN_CPU_SPAN seconds in batch means, blocks of OWN_CPU_BLOCK
readings, with the interval analysis.stats.summarize gives for them: its
estimate and its AR(1)-corrected interval, as neighbouring blocks still share
the box's drifting load (one block is one window; blocks of 3 s make a block
with no tick rare down to 1 % CPU; one that had none reads as half a tick).
Until OWN_CPU_MIN_BLOCKS blocks exist it shows the last reading.
"""

from __future__ import annotations

import os
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass

from ..analysis.stats import Summary, summarize

TICK_S = 1.0 / os.sysconf("SC_CLK_TCK")  # /proc's CPU counts are in these
OWN_CPU_EVERY = 1.0  # seconds between readings of the monitor's own CPU use
OWN_CPU_MIN_WINDOW = 0.5  # seconds: the shortest window a reading may cover
OWN_CPU_SPAN = 30.0  # seconds of readings the footer's figure covers
OWN_CPU_BLOCK = 3  # readings per block: one block is one window of the interval
OWN_CPU_MIN_BLOCKS = 5  # blocks before the footer gives a figure with an interval
#: the unit of replication the footer's interval names
OWN_CPU_UNIT = f"{OWN_CPU_BLOCK * OWN_CPU_EVERY:g} s"  # n=10 × 3 s: ten blocks of 3 s


@dataclass(frozen=True)
class OwnCpuFigure:
    """The monitor's CPU (% of one CPU) over `span_s`, from `summary.n` blocks."""

    summary: Summary
    span_s: float
    unit: str = OWN_CPU_UNIT

    def text(self) -> str:
        """'2.1 % [1.8, 2.5] of a CPU over 30 s, n=10 × 3 s': the estimate the
        interval is built around (summarize's geometric mean), not the median,
        so the figure always lies inside its interval."""
        s = self.summary
        figure = f"{s.figure:.1f} %"
        if s.low is not None and s.high is not None:
            figure += f" [{s.low:.1f}, {s.high:.1f}]"
        return f"{figure} of a CPU over {self.span_s:.0f} s, n={s.n} × {self.unit}"


def span_figure(readings: list[tuple[float, float]]) -> OwnCpuFigure | None:
    """(window seconds, %) readings, oldest first -> the figure over them, or None
    while there are fewer than OWN_CPU_MIN_BLOCKS whole blocks. A block's value
    is its readings' CPU over its seconds; a partial block at the start is left out."""
    whole = len(readings) - len(readings) % OWN_CPU_BLOCK
    kept = readings[len(readings) - whole :]
    blocks = []
    for i in range(0, whole, OWN_CPU_BLOCK):
        part = kept[i : i + OWN_CPU_BLOCK]
        seconds = sum(dt for dt, _ in part)
        if seconds > 0:
            # A block with no tick reads as half a tick: /proc cannot say less,
            # and a 0 has no log for the interval (analysis.stats).
            floor = 50.0 * TICK_S / seconds
            blocks.append(max(floor, sum(dt * pct for dt, pct in part) / seconds))
    if len(blocks) < OWN_CPU_MIN_BLOCKS:
        return None
    return OwnCpuFigure(summarize(blocks), sum(dt for dt, _ in kept))


#: the pair threads, asked for only when the meter lists the threads again
PairTids = Callable[[], set[int]]


class OwnCpu:
    """read(pair_tids) gives the % since its last call; the first call only primes it."""

    def __init__(self, read: Callable[[PairTids], float | None]) -> None:
        self._read = read
        self.value: float | None = None  # None: "measuring" until a first reading
        self._at = 0.0
        # (end time, window seconds, %): the span's readings, oldest first
        self._readings: deque[tuple[float, float, float]] = deque()
        # The span's figure until the readings change (once a second): the interval
        # costs a t quantile, and the footer is drawn at every redraw.
        self._figure: OwnCpuFigure | None = None
        self._figure_stale = True

    def prime(self, tids: PairTids, now: float) -> None:
        self._read(tids)
        self._at = now

    def due(self, now: float, asked: bool = False) -> bool:
        """Whether update() would read now."""
        since = now - self._at
        return since >= OWN_CPU_EVERY or (
            asked and (self.value is None or since >= OWN_CPU_MIN_WINDOW)
        )

    def update(self, tids: PairTids, now: float, asked: bool = False) -> float | None:
        """A new reading when one is due (or asked for and its window long enough)."""
        since = now - self._at
        if self.due(now, asked):
            self.value = self._read(tids)
            self._at = now
            self._figure_stale = True
            if self.value is not None:
                self._readings.append((now, since, self.value))
            while (
                self._readings and self._readings[0][0] - self._readings[0][1] < now - OWN_CPU_SPAN
            ):
                self._readings.popleft()  # began before the span
        return self.value

    def figure(self) -> OwnCpuFigure | None:
        """The footer's figure over the span, once it has enough blocks."""
        if self._figure_stale:
            self._figure = span_figure([(dt, pct) for _, dt, pct in self._readings])
            self._figure_stale = False
        return self._figure

    def text(self) -> str:
        """What the footer says: the span's figure, else the last reading, else measuring."""
        figure = self.figure()
        if figure is not None:
            return figure.text()
        return "measuring" if self.value is None else f"{self.value:.1f} % CPU"
