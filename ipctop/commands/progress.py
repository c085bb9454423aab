"""Progress bars with the time left, on stderr, only when stderr is a terminal.

Long commands (sweep, check, a bulk start of many pairs) know their plan in
seconds before they start, so the bar runs on planned seconds: each measured
window moves it by its own length, and the time left is what is planned minus
what is done. Piped or redirected, nothing extra is written. rich lives here,
in the commands layer, never in the engine, analysis or record code.
"""

from __future__ import annotations

import sys
import time
from types import TracebackType
from typing import Any

#: a start of at least this many pairs shows a bar (fewer start in a blink)
BULK_PAIRS = 16


def wanted() -> bool:
    try:
        return sys.stderr.isatty()
    except (AttributeError, ValueError):  # closed or replaced by something without a fd
        return False


class PlannedProgress:
    """A bar over planned work; a no-op when stderr is not a terminal.

    `begin(seconds, label)` starts a unit (one measured window), `tick()` moves
    the bar within it (call it from on_sample), `done()` closes the unit at its
    planned length whatever it really took, so the time left stays honest
    about what is still to come.
    """

    def __init__(self, what: str, total: float, unit: str = "s") -> None:
        self.what = what
        self.total = max(float(total), 1e-9)
        self.unit = unit
        self._bar: Any = None
        self._task: Any = None
        self._done = 0.0
        self._unit_len = 0.0
        self._unit_t0 = 0.0

    def __enter__(self) -> PlannedProgress:
        if not wanted():
            return self
        from rich.console import Console
        from rich.progress import (
            BarColumn,
            Progress,
            TaskProgressColumn,
            TextColumn,
            TimeRemainingColumn,
        )

        self._bar = Progress(
            TextColumn("{task.description}"),
            BarColumn(),
            TaskProgressColumn(),
            TextColumn("left"),
            TimeRemainingColumn(),
            TextColumn("{task.fields[label]}"),
            console=Console(file=sys.stderr),
            transient=True,
            # stdout to a file stays in the file; both on the terminal print above the bar
            redirect_stdout=sys.stdout.isatty(),
        )
        self._bar.start()
        self._task = self._bar.add_task(self.what, total=self.total, label="")
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        if self._bar is not None:
            self._bar.stop()
            self._bar = None

    @property
    def shown(self) -> bool:
        return self._bar is not None

    def begin(self, seconds: float, label: str = "") -> None:
        self._unit_len, self._unit_t0 = float(seconds), time.monotonic()
        if self._bar is not None:
            self._bar.update(self._task, label=label)

    def tick(self, *_: object) -> None:
        """Move within the current unit; takes and ignores a sample (on_sample)."""
        if self._bar is not None:
            within = min(time.monotonic() - self._unit_t0, self._unit_len)
            self._bar.update(self._task, completed=self._done + within)

    def done(self) -> None:
        self._done += self._unit_len
        self._unit_len = 0.0
        if self._bar is not None:
            self._bar.update(self._task, completed=self._done)

    def advance(self, amount: float = 1.0, label: str = "") -> None:
        """Counted work (pairs started): one more of `total`."""
        self._done += amount
        if self._bar is not None:
            self._bar.update(self._task, completed=self._done, label=label)


def start_pairs(engine: Any, pairs: int) -> None:
    """engine.start(pairs), with a bar when many pairs are started on a terminal."""
    if pairs < BULK_PAIRS or not wanted():
        engine.start(pairs)
        return
    engine.start()
    with PlannedProgress(f"starting {pairs} pairs", pairs) as bar:
        for i in range(pairs):
            engine.add_pair()
            bar.advance(1, f"{i + 1}/{pairs}")
