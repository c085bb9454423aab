"""Records in the monitor: key R records, key b overlays a baseline, a replay says so.

Mixed into IpctopApp; the app calls the _records_* hooks from its own life
cycle (mount, each sample, each redraw, unmount, a signal). The record is
written on every way out: R again, quit, Ctrl-C, a signal, or (from
run_app) an exception; only the first of those writes.
"""

from __future__ import annotations

import os

from ..engine.sample import Sample
from ..errors import RecordError
from ..live.baseline import Baseline, load_baseline, newest_record
from ..live.record_switch import RecordSwitch
from .host import AppHost
from .screens.prompts import PathInputScreen


class RecordActions:
    """Uses the app's source, info, session, scaling_panel, _generation and _say."""

    baseline: Baseline | None
    recording: RecordSwitch
    #: the last word on the record, for run_app to print once the screen is gone
    record_message: str

    def _records_init(
        self: AppHost, record: str | None, baseline: Baseline | None, record_dir: str
    ) -> None:
        self.recording = RecordSwitch(record_dir)
        self._record_at_start = record
        self.baseline = baseline
        self._baseline_path = baseline.path if baseline is not None else None
        self._interrupted = False
        self._end_told = False
        self.record_message = ""

    def _records_mounted(self: AppHost) -> None:
        """Before the source starts: recording from the first sample on, the baseline drawn."""
        self._show_baseline(self.baseline)
        if self._record_at_start:
            self._start_recording(self._record_at_start)

    def _records_feed(self: AppHost, sample: Sample, generation: int) -> None:
        """Every sample the session takes in, in the same order."""
        if self.recording.active:
            try:
                said = self.recording.feed(sample, generation, self.session.points())
            except (RecordError, OSError) as exc:
                said = f"could not save the record: {exc}"
            if said:
                self._say(said)
        ended = self.source.end_message()
        if ended and not self._end_told:
            self._end_told = True
            self._say(ended)

    def _records_notes(self: AppHost) -> list[str]:
        """Header notes: the source's (REPLAY / replay finished), REC."""
        notes = [self.source.header_note()]
        rec = self.recording.note()
        if rec:
            notes.append(rec)
        self.baseline_bar.update_from(self.baseline, self.info)
        return [n for n in notes if n]

    def _records_finish(self: AppHost, interrupted: bool) -> None:
        """Write the record if one is being made; never raises (this runs on the way out)."""
        if not self.recording.active:
            return
        try:
            self.record_message = self.recording.stop(
                self.session.points(), interrupted=interrupted or self._interrupted
            )
        except (RecordError, OSError) as exc:
            self.record_message = f"could not save the record: {exc}"

    # -- keys ------------------------------------------------------------------------
    def action_toggle_record(self: AppHost) -> None:
        if self.recording.active:
            try:
                self._say(self.recording.stop(self.session.points()))
            except (RecordError, OSError) as exc:
                self._say(f"could not save the record: {exc}", "error")
            return
        if self.source.record is not None:
            self._say("a replay is already a record: nothing to record", "warning")
            return
        self._start_recording(None)

    def _start_recording(self: AppHost, path: str | None) -> None:
        try:
            self._say(self.recording.start(self.info, self._generation, path))
        except (RecordError, OSError) as exc:
            self._say(f"could not record: {exc}", "error")

    def action_baseline(self: AppHost) -> None:
        """b: hide the baseline, or ask which record to show (the last one offered)."""
        if self.baseline is not None:
            self._show_baseline(None)
            self._say("baseline hidden; b loads one again")
            return
        offer = (
            self._baseline_path
            or self.recording.last_path
            or newest_record(self.recording.directory)
        )
        self.push_screen(
            PathInputScreen("baseline record", os.fspath(offer) if offer else ""),
            self._load_baseline,
        )

    def _load_baseline(self: AppHost, path: str | None) -> None:
        if not path:
            return
        try:
            baseline = load_baseline(path)
        except RecordError as exc:
            self._say(f"no baseline: {exc}", "error")
            return
        self._baseline_path = path
        self._show_baseline(baseline)
        differs = baseline.mismatches(self.info)
        warn = f" (differs: {', '.join(differs)})" if differs else ""
        self._say(f"baseline {baseline.name}: kernel {baseline.kernel}{warn}")

    def _show_baseline(self: AppHost, baseline: Baseline | None) -> None:
        self.baseline = baseline
        self.scaling_panel.set_baseline(baseline)
        self._schedule_redraw()

    async def action_interrupt(self: AppHost) -> None:
        """Ctrl-C: quit like q, but a record being made is marked interrupted."""
        self._interrupted = True
        self.exit(0)
