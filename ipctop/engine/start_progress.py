"""A line on stderr while many pairs start: a bulk start of 1,024 pairs takes seconds."""

from __future__ import annotations

import sys
import time
from collections.abc import Callable

SHOW_FROM = 64  # fewer pairs start in well under a second: no progress needed


def stderr_progress(n: int) -> Callable[[int, int, int], None] | None:
    """A progress callback for Engine.add_pairs that redraws one stderr line, or None."""
    if n < SHOW_FROM:
        return None
    t0 = time.monotonic()
    tty = sys.stderr.isatty()

    def show(launched: int, running: int, total: int) -> None:
        done = running == total
        line = (
            f"ipctop: starting pairs: {launched:,} launched, {running:,} running of "
            f"{total:,} ({time.monotonic() - t0:.1f} s)"
        )
        if tty:
            print(f"\r{line}", end="\n" if done else "", file=sys.stderr, flush=True)
        elif done or running == 0 and launched == total:
            print(line, file=sys.stderr, flush=True)  # a log gets the milestones only

    return show
