"""Sparklines as strings, on a scale the caller chooses.

Textual's Sparkline scales each line to its own min and max, so two rows
could not be compared; these take one ceiling for a whole table. A line is
exactly `width` cells: the newest value on the right, blanks where there is
no history yet. A table that steps every second or two draws a history that has
grown since its step without the newest `lag` values (table_pace.py).
"""

from __future__ import annotations

from collections.abc import Sequence
from itertools import islice

BARS = "▁▂▃▄▅▆▇█"


def spark(values: Sequence[float], width: int, top: float, lag: int = 0) -> str:
    if width <= 0:
        return ""
    tail = _tail(values, width, lag)
    pad = " " * (width - len(tail))
    if top <= 0:
        return pad + BARS[0] * len(tail)
    last = len(BARS) - 1
    return pad + "".join(BARS[max(0, min(last, round(v / top * last)))] for v in tail)


def _tail(values: Sequence[float], width: int, lag: int = 0) -> list[float]:
    """The last `width` values before the newest `lag`, read from the end: a
    512-long history costs `width` steps, not 512 (a deque does not slice)."""
    lag = max(0, lag)
    if not lag and len(values) <= width:
        return list(values)
    tail = list(islice(reversed(values), lag, lag + width))
    tail.reverse()
    return tail


def si(value: float | None, unit: str = "") -> str:
    """1234567 -> '1.23M': compact enough for an 80-column panel."""
    if value is None:
        return "-"
    for factor, suffix in ((1e9, "G"), (1e6, "M"), (1e3, "k")):
        if abs(value) >= factor:
            return f"{value / factor:.2f}{suffix}{unit}"
    return f"{value:.0f}{unit}"
