"""Keys that change what is shown, not what runs: panels, curve, pause, theme, files.

Mixed into IpctopApp. The detail panel is the one view that costs the
source something (extra /proc reads), so its switch runs on a worker.
"""

from __future__ import annotations

import json
import os

from ..errors import IpctopError, RecordError
from .contrast_floor import AA
from .host import AppHost
from .screens.present import AAA as PRESENT_CONTRAST
from .screens.present import PresentScreen
from .svg_text import tidy_svg


class ViewActions:
    """Uses the app's panels, source, session, _say, _schedule_redraw and push_screen."""

    _paused = False
    _detail_on = False
    _latency_on = False
    _present: PresentScreen | None = None

    def action_toggle_latency(self: AppHost) -> None:
        self._latency_on = not self._latency_on
        self.latency_panel.display = self._latency_on
        self.query_one("#main").set_class(self._latency_on, "-latency")  # the side column
        self._schedule_redraw()
        self._say("latency panel on" if self._latency_on else "latency panel off")

    def action_latency_histogram(self: AppHost) -> None:
        from .screens.histogram import HistogramScreen

        pair = self.latency_panel.selected
        series = self.source.latency_histogram(pair)
        if not series:
            self._say(f"no histogram of pair {pair}: {self.source.histogram_missing}", "warning")
            return
        note = "the ends' buckets (0.8 % wide), last reading, grouped on a log axis"
        self.push_screen(HistogramScreen(f"pair {pair}", series, note))

    def action_toggle_curve_metric(self: AppHost) -> None:
        panel = self.scaling_panel
        panel.metric = "p99" if panel.metric == "ops" else "ops"
        panel.redraw()
        what = "round-trip p99 by pairs (P)" if panel.metric == "p99" else "total ops/s by pairs"
        panel.border_subtitle = what
        self._schedule_redraw()
        self._say(f"scaling curve: {what}")

    def action_show_matrix(self: AppHost) -> None:
        from .screens.prompts import PathInputScreen

        self.push_screen(PathInputScreen("matrix record (ipctop matrix --json)"), self._open_matrix)

    def _open_matrix(self: AppHost, path: str | None) -> None:
        from ..output.records.bounded_read import read_bounded_text
        from ..output.records.matrix_record import matrix_from_dict
        from ..output.records.record_text import escape_controls
        from .screens.matrix_view import MatrixScreen

        if not path:
            return
        try:
            text = read_bounded_text(path)  # a FIFO or /dev/zero must not hang the monitor
            rec = matrix_from_dict(escape_controls(json.loads(text), text), path)
        except (OSError, ValueError, RecursionError, RecordError) as exc:
            self._say(f"no matrix from {path}: {exc}", "error")
            return
        self.push_screen(MatrixScreen(rec))

    def action_toggle_detail(self: AppHost) -> None:
        self._detail_on = not self._detail_on
        self.detail_panel.display = self._detail_on
        # The layout gives it the side column (a class on #main: a screen on top changes self.screen).
        self.query_one("#main").set_class(self._detail_on, "-detail")
        # The sampler stops and starts to switch: a worker, and the latest wish wins.
        self.run_worker(self._switch_detail, thread=True, group="detail")
        self._say("detail on: extra /proc reads per sample" if self._detail_on else "detail off")

    def _switch_detail(self: AppHost) -> None:
        try:
            self.source.set_detail(self._detail_on)
        except (IpctopError, OSError) as exc:
            try:
                self.call_from_thread(self._say, f"could not read the detail: {exc}", "error")
            except RuntimeError:
                return  # the app closed meanwhile: nobody to tell

    def action_pause(self: AppHost) -> None:
        self._paused = not self._paused
        self._say("display paused" if self._paused else "display resumed")

    def action_reset_curve(self: AppHost) -> None:
        self.session.reset_curve()
        self.scaling_panel.redraw()
        self._say("scaling curve reset")

    def action_all_cpus(self: AppHost) -> None:
        cpus = self.cpus_panel
        cpus.show_all = not cpus.show_all
        self._schedule_redraw()

    def action_present(self: AppHost) -> None:
        """Presentation mode on or off: its own screen, and a 7:1 contrast floor while shown."""
        floor = self.contrast_floor
        if self._present is None:
            self._present = PresentScreen()
            floor.set_minimum(PRESENT_CONTRAST)
            self.push_screen(self._present)  # it asks for a redraw once composed
        else:
            if self.screen is self._present:
                self.pop_screen()
            self._present = None
            floor.set_minimum(AA)
            self.refresh()
        self._schedule_redraw()

    def action_toggle_theme(self: AppHost) -> None:
        self.theme = "textual-light" if self.current_theme.dark else "textual-dark"

    def save_screenshot(
        self: AppHost,
        filename: str | None = None,
        path: str | None = None,
        time_format: str | None = None,
    ) -> str:
        """Textual's save_screenshot, its text tidied for any viewer (svg_text.py)."""
        from textual._files import generate_datetime_filename

        name = filename or generate_datetime_filename(self.title, ".svg", time_format)
        svg_path = os.path.expanduser(os.path.join(path or "./", name))
        with open(svg_path, "w", encoding="utf-8") as f:
            f.write(tidy_svg(self.export_screenshot()))
        return svg_path

    def action_screenshot(
        self: AppHost, filename: str | None = None, path: str | None = None
    ) -> None:
        """Textual's signature; the key saves in --screenshot-dir."""
        folder = path or self.screenshot_dir
        try:
            saved = self.save_screenshot(filename, folder)
        except OSError as exc:
            self._say(f"could not save a screenshot in {folder}: {exc}", "error")
            return
        # The file's name first: a long directory is what a narrow line may cut.
        where = os.path.dirname(os.path.abspath(saved))
        self._say(f"screenshot {os.path.basename(saved)} saved in {where}")
