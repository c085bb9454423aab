"""Progress bars with the time left, on stderr, only when stderr is a terminal.

Long commands (sweep, check, a bulk start of many pairs) know their plan in
seconds before they start, so the bar runs on planned seconds: each measured
window moves it by its own length, and the time left is what is planned minus
what is done. Piped or redirected, nothing extra is written.

The bar is one line drawn with a carriage return, not rich: check, run and
sweep stay importable without any UI library (the import-linter contract),
and the line is wiped at the end of each unit, before the command prints its
results to stdout, so a table never lands in the middle of a bar.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable
from types import TracebackType
from typing import Any

#: a start of at least this many pairs shows a bar (fewer start in a blink)
BULK_PAIRS = 16
WIDTH = 30
#: at most this many redraws a second: on_sample may call tick() far more often
REDRAW_HZ = 4.0


def wanted() -> bool:
    try:
        return sys.stderr.isatty()
    except (AttributeError, ValueError):  # closed or replaced by something without a fd
        return False


def bar_line(what: str, fraction: float, left_s: float, label: str) -> str:
    """'sweep ━━━━━━━━━━━━━━━─────────────── 50 % · 0:42 left · sysv-msg · 2 pair(s)'"""
    fraction = max(0.0, min(1.0, fraction))
    filled = round(fraction * WIDTH)
    left = int(round(max(0.0, left_s)))
    clock = f"{left // 3600}:{left // 60 % 60:02d}:{left % 60:02d}" if left >= 3600 else (
        f"{left // 60}:{left % 60:02d}"
    )  # fmt: skip
    text = f"{what} {'━' * filled}{'─' * (WIDTH - filled)} {fraction * 100:3.0f} % · {clock} left"
    return f"{text} · {label}" if label else text


class PlannedProgress:
    """A bar over planned work; a no-op when stderr is not a terminal.

    `begin(seconds, label)` starts a unit (one measured window), `tick()` moves
    the bar within it (call it from on_sample), `done()` closes the unit at its
    planned length whatever it really took, so the time left stays honest
    about what is still to come, and wipes the line for the results.
    """

    def __init__(self, what: str, total: float, unit: str = "s") -> None:
        self.what = what
        self.total = max(float(total), 1e-9)
        self.unit = unit  # "s": planned seconds; "pairs": counted work
        self.shown = False
        self._done = 0.0
        self._unit_len = 0.0
        self._unit_t0 = 0.0
        self._label = ""
        self._t0 = time.monotonic()
        self._drawn_at = 0.0

    def __enter__(self) -> PlannedProgress:
        self.shown = wanted()
        self._t0 = time.monotonic()
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self._wipe()
        self.shown = False

    def begin(self, seconds: float, label: str = "") -> None:
        self._unit_len, self._unit_t0, self._label = float(seconds), time.monotonic(), label
        self._draw(self._done, force=True)

    def tick(self, *_: object) -> None:
        """Move within the current unit; takes and ignores a sample (on_sample)."""
        within = min(time.monotonic() - self._unit_t0, self._unit_len)
        self._draw(self._done + within)

    def done(self) -> None:
        self._done += self._unit_len
        self._unit_len = 0.0
        self._wipe()

    def advance(self, amount: float = 1.0, label: str = "") -> None:
        """Counted work (pairs started): one more of `total`."""
        self._done += amount
        self._label = label
        self._draw(self._done, force=self._done >= self.total)

    def _left(self, done: float) -> float:
        if self.unit == "s":
            return self.total - done
        # counted work: the rate so far says how long the rest takes
        spent = time.monotonic() - self._t0
        return (self.total - done) * spent / done if done > 0 else 0.0

    def _draw(self, done: float, force: bool = False) -> None:
        if not self.shown:
            return
        now = time.monotonic()
        if not force and now - self._drawn_at < 1.0 / REDRAW_HZ:
            return
        self._drawn_at = now
        line = bar_line(self.what, done / self.total, self._left(done), self._label)
        self._write("\r\x1b[K" + line)

    def _wipe(self) -> None:
        if self.shown:
            self._write("\r\x1b[K")

    def _write(self, text: str) -> None:
        try:
            sys.stderr.write(text)
            sys.stderr.flush()
        except (OSError, ValueError):  # the terminal went away: the work goes on
            self.shown = False


def _counting(bar: PlannedProgress) -> Callable[[int, int, int], None]:
    """Engine.add_pairs's progress(launched, running, total) moving `bar` by the pairs running."""
    shown = [0]

    def advance(launched: int, running: int, total: int) -> None:
        bar.advance(running - shown[0], f"{launched}/{total} launched, {running} running")
        shown[0] = running

    return advance


def start_pairs(engine: Any, pairs: int) -> None:
    """engine.start(pairs), with a bar when many pairs are started on a terminal.

    The pairs start in bulk (every end launched, then all awaited): the bar
    counts the pairs running, after a first stretch of launching.
    """
    if pairs < BULK_PAIRS or not wanted():
        engine.start(pairs)
        return
    engine.start()
    with PlannedProgress(f"starting {pairs} pairs", pairs, unit="pairs") as bar:
        engine.add_pairs(pairs, _counting(bar))


def start_bar(pairs: int) -> Callable[[int, int, int], None] | None:
    """The same bar for a start the command does not make itself (the monitor's first
    pairs, started by its source): a callback for Engine.start_progress that wipes the
    bar once every pair runs; None for a few pairs or without a terminal."""
    if pairs < BULK_PAIRS or not wanted():
        return None
    bar = PlannedProgress(f"starting {pairs} pairs", pairs, unit="pairs").__enter__()
    advance = _counting(bar)

    def shown(launched: int, running: int, total: int) -> None:
        advance(launched, running, total)
        if running >= total:
            bar.__exit__(None, None, None)

    return shown
