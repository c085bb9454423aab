"""Record a live session while it is watched: the samples the UI took in, then one record.

The recorder is fed from the same stream the monitor draws, so a replay of
the file shows what was on screen. It is written once, atomically, when the
recording stops; every exit path (a key, quit, a signal, a crash) ends in
finish(), and a second finish() is a no-op, so callers may call it from
each path without coordinating.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Iterable
from datetime import datetime
from pathlib import Path

from ...analysis.scaling import ScalingPoint
from ...engine.config import RunConfig
from ...engine.sample import Sample
from .output_paths import write_or_keep
from .record import Record
from .record_box import Box
from .record_io import write_record


def default_record_path(
    directory: str | os.PathLike[str], workload: str, when: datetime | None = None
) -> Path:
    """ipctop-<workload>-<YYYYmmdd-HHMMSS>.json in directory; numbered if that exists."""
    stamp = (when or datetime.now()).strftime("%Y%m%d-%H%M%S")
    base = Path(directory) / f"ipctop-{workload}-{stamp}"
    path = base.with_suffix(".json")
    n = 2
    while path.exists():
        path = base.with_name(f"{base.name}-{n}.json")
        n += 1
    return path


class SessionRecorder:
    """Collects samples for one record of kind "session"; finish() writes it."""

    def __init__(self, path: str | os.PathLike[str], box: Box, config: RunConfig) -> None:
        self.path = Path(path)
        self.record = Record(kind="session", box=box, config=config)
        self.written: Path | None = None
        #: set when the record could not go to path and was kept elsewhere
        self.failure: str | None = None
        # finish() may race between a signal handler's path and the normal exit.
        self._lock = threading.Lock()

    @property
    def samples(self) -> int:
        return len(self.record.timeline)

    @property
    def finished(self) -> bool:
        return self.written is not None

    def feed(self, sample: Sample) -> None:
        if self.written is not None:
            return  # already on disk: later samples belong to no record
        self.record.timeline.append(sample)
        self.record.events.extend(sample.events)

    def finish(self, points: Iterable[ScalingPoint], interrupted: bool = False) -> Path:
        """Write the record with the settled points; later calls return the same path."""
        with self._lock:
            if self.written is not None:
                return self.written
            self.record.points = [p for p in points if p.settled]
            self.record.interrupted = interrupted
            # A full disk at the end keeps the session in the temp dir instead.
            kept: list[Path] = []

            def write(p: Path) -> Path:
                kept.append(write_record(p, self.record))
                return kept[-1]

            said, ok = write_or_keep(self.path, write)
            if not ok:
                self.failure = said
            self.written = kept[-1]
            return self.written
