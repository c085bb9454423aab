"""What the engine warned about (Engine.events), said once each to a headless user.

An engine collects its warnings as it goes: no reaper, contention with another
ipctop, a pair that failed, an end that did not stop in time or was killed.
Some come only when it stops, after the last sample, so a command reads them
once its engine has stopped. A sweep or check runs many engines that warn
alike; each line is said once, on stderr, and goes into the record.
"""

from __future__ import annotations

import sys
from collections.abc import Iterable
from typing import TextIO

PREFIX = "ipctop: warning: "


class EngineWarnings:
    """The warning lines of one command, in the order they came, each said once."""

    def __init__(self, stream: TextIO | None = None) -> None:
        self._stream = stream
        self._said: dict[str, None] = {}

    def take(self, lines: Iterable[str]) -> list[str]:
        """Say the lines not said before; return all of them, once each (for a record)."""
        out = list(dict.fromkeys(lines))
        for line in out:
            if line not in self._said:
                self._said[line] = None
                print(PREFIX + line, file=self._stream or sys.stderr, flush=True)
        return out

    @property
    def lines(self) -> list[str]:
        """Every line said so far."""
        return list(self._said)
