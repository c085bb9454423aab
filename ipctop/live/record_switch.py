"""The monitor's recording switch (key R, --record FILE): at most one recorder at a time.

No Textual here: the app calls these methods and shows the strings they
return. A recording covers one run: when the pairs are restarted with
another workload, placement or mode, the record so far is saved and the
recording stops, because a record has one config.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable
from pathlib import Path

from ..analysis.scaling import ScalingPoint
from ..box import read_box
from ..engine.sample import Sample
from ..errors import RecordError
from ..output.records.record_box import Box
from ..output.records.session_recorder import SessionRecorder, default_record_path
from .sources import RunInfo


class RecordSwitch:
    def __init__(
        self,
        directory: str = ".",
        read_box_facts: Callable[[], Box] | None = None,
    ) -> None:
        self.directory = directory
        self._read_box = read_box_facts or (lambda: Box.of(read_box()))
        self._box: Box | None = None
        self.recorder: SessionRecorder | None = None
        self._generation: int | None = None
        self.last_path: Path | None = None

    @property
    def active(self) -> bool:
        return self.recorder is not None

    def start(self, info: RunInfo, generation: int, path: str | os.PathLike[str] | None) -> str:
        """Start recording from the next sample; returns what to tell the user."""
        if self.recorder is not None:
            return f"already recording to {self.recorder.path}"
        target = Path(path) if path else default_record_path(self.directory, info.config.workload)
        if not target.parent.is_dir():
            raise RecordError(f"cannot record to {target}: {target.parent} is not a directory")
        if self._box is None:
            self._box = self._read_box()
        self.recorder = SessionRecorder(target, self._box, info.config)
        self._generation = generation
        return f"recording to {target.resolve()}"

    def feed(self, sample: Sample, generation: int, points: Iterable[ScalingPoint]) -> str:
        """Take one sample; returns a message when the run changed and the record was saved."""
        rec = self.recorder
        if rec is None:
            return ""
        if generation != self._generation:
            return self.stop(points, reason="the pairs were restarted")
        rec.feed(sample)
        return ""

    def stop(
        self, points: Iterable[ScalingPoint], interrupted: bool = False, reason: str = ""
    ) -> str:
        """Write the record; returns what to tell the user ("" when not recording).

        Raises RecordError or OSError when the file cannot be written.
        """
        rec = self.recorder
        if rec is None:
            return ""
        path = rec.finish(points, interrupted=interrupted)  # on failure, still recording
        self.recorder = None
        self.last_path = path
        why = f" ({reason})" if reason else ""
        if rec.failure:
            return f"{rec.failure}: {rec.samples} samples{why}"
        return f"record saved to {path.resolve()}: {rec.samples} samples{why}"

    def note(self) -> str:
        """For the header while recording: "REC name (N samples)".

        The file's name, not its path: a long directory pushed the note off an
        80 or 120 column header; the whole path is said when recording starts
        and when the record is saved.
        """
        rec = self.recorder
        if rec is None:
            return ""
        return f"REC {os.path.basename(rec.path)} ({rec.samples})"
