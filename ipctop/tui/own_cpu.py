"""The monitor's own CPU use on the status line: read once a second, never over a short window.

/proc counts CPU in 10 ms ticks, so one tick in the 18 ms after a throttled
redraw read as 54 % (screenshots/scaling.svg): a reading covers at least
OWN_CPU_MIN_WINDOW, even when a test or a screenshot asks for one now.
"""

from __future__ import annotations

from collections.abc import Callable

OWN_CPU_EVERY = 1.0  # seconds between readings of the monitor's own CPU use
OWN_CPU_MIN_WINDOW = 0.5  # seconds: the shortest window a reading may cover


class OwnCpu:
    """read(tids) gives the % since its last call; the first call only primes it."""

    def __init__(self, read: Callable[[set[int]], float | None]) -> None:
        self._read = read
        self.value: float | None = None  # None: "measuring" until a first reading
        self._at = 0.0

    def prime(self, tids: set[int], now: float) -> None:
        self._read(tids)
        self._at = now

    def update(self, tids: set[int], now: float, asked: bool = False) -> float | None:
        """A new reading when one is due (or asked for and its window long enough)."""
        since = now - self._at
        if since >= OWN_CPU_EVERY or (
            asked and (self.value is None or since >= OWN_CPU_MIN_WINDOW)
        ):
            self.value = self._read(tids)
            self._at = now
        return self.value
