"""A scrolling table drawn line by line: only the visible rows cost anything.

At 512 threads a widget per row would cost more than the workload can spare;
here a redraw formats the rows on screen and nothing else. Line 0 is a fixed
heading; rows scroll under it.
"""

from __future__ import annotations

from typing import Any, ClassVar

from rich.cells import cell_len
from rich.segment import Segment
from rich.style import Style
from textual.geometry import Region, Size
from textual.scroll_view import ScrollView
from textual.strip import Strip

#: a row: its pieces (text, component style name or None), and a style for the whole row
Pieces = list[tuple[str, str | None]]
Row = tuple[Pieces, str | None]


class RowsView(ScrollView, can_focus=True):
    COMPONENT_CLASSES: ClassVar[set[str]] = {
        "rows--heading",
        "rows--hot",
        "rows--flag",
        "rows--dim",
        "rows--spark",
        "rows--band",
        "rows--mark",
    }

    DEFAULT_CSS = """
    RowsView {
        scrollbar-size-vertical: 1;
        overflow-x: hidden;
    }
    RowsView > .rows--heading { text-style: bold; color: $text-muted; }
    RowsView > .rows--hot { background: $warning 35%; text-style: bold; }
    RowsView > .rows--flag { color: $error; text-style: bold reverse; }
    RowsView > .rows--dim { color: $text-muted; }
    RowsView > .rows--spark { color: $accent; }
    RowsView > .rows--band { background: $foreground 6%; }
    RowsView > .rows--mark { color: $success; text-style: bold; }
    """

    def __init__(self, *, id: str | None = None, classes: str | None = None) -> None:
        super().__init__(id=id, classes=classes)
        # Styles resolved once per theme: rendering a line must stay cheap at 512 rows.
        self._styles: dict[tuple[str | None, str | None], Style] = {}
        self._frame = (0, 0, 0)  # (width, height, scroll) the shown lines were made for
        self._lines: list[Row | None] = []
        # The content region by what it depends on: Textual computes it afresh on
        # every read, and render_line asked once per line (a quarter of a line's cost).
        self._region_key: tuple[object, ...] = ()
        self._region = Region()
        self._pass_frame: tuple[int, int, int] | None = None  # while render_lines runs

    # -- for subclasses ------------------------------------------------------------
    def row_count(self) -> int:
        return 0

    def heading(self, width: int) -> str:
        return ""

    def row(self, index: int, width: int) -> Row:
        raise NotImplementedError

    # -- plumbing ------------------------------------------------------------------
    def _style(self, piece: str | None, row: str | None) -> Style:
        key = (piece, row)
        style = self._styles.get(key)
        if style is None:
            # Resolved, not partial: a partial style keeps `$foreground 6%` as an
            # opaque colour, and the terminal paints it at full strength (text
            # on a band of its own colour). The row gives the background, the
            # piece its colour and weight on top of it.
            style = self.rich_style
            if row:
                style = style + self.get_component_rich_style(f"rows--{row}")
            if piece:
                own = self.get_component_rich_style(f"rows--{piece}")
                style = style + own.without_color + Style(color=own.color)
            self._styles[key] = style
        return style

    def notify_style_update(self) -> None:
        self._styles.clear()  # the theme changed: component styles must be read again
        super().notify_style_update()

    @property
    def text_width(self) -> int:
        return max(0, self.scrollable_content_region.width)

    def changed(self) -> None:
        """The data changed: repaint the visible lines whose text changed, and only those.

        Repainting a line costs far more in Textual than formatting it, so
        every visible line is formatted here and compared with what is shown.
        """
        size = Size(self.text_width, self.row_count() + 1)
        resized = size != self.virtual_size
        if resized:
            self.virtual_size = size
            if self.styles.height is not None and self.styles.height.is_auto:
                self.refresh(layout=True)  # as tall as its rows: the panels below move
        frame = self._frame_now()
        lines = [self._line(y, frame) for y in range(frame[1])]
        if resized or frame != self._frame or len(lines) != len(self._lines):
            self._frame, self._lines = frame, lines
            self.refresh()
            return
        changed = [y for y, (new, old) in enumerate(zip(lines, self._lines)) if new != old]
        self._lines = lines
        if changed:
            # Runs of changed lines, in one call: a bare refresh() would also drop
            # the border's cached lines (its title and subtitle are the dearest to
            # render), though only the rows moved. Regions are relative to the content.
            self.refresh(*_runs(changed, frame[0]))

    def _frame_now(self) -> tuple[int, int, int]:
        key = (
            self.size,
            self.styles.gutter,
            self.show_vertical_scrollbar,
            self.show_horizontal_scrollbar,
        )
        if key != self._region_key:
            self._region_key, self._region = key, self.scrollable_content_region
        region = self._region
        return (max(0, region.width), max(0, region.height), round(self.scroll_y))

    def _line(self, y: int, frame: tuple[int, int, int]) -> Row | None:
        width, _height, scroll = frame
        if y == 0:
            return [(self.heading(width), "heading")], None
        index = y - 1 + scroll
        if index >= self.row_count():
            return None
        return self.row(index, width)

    def render_lines(self, crop: Region) -> list[Strip]:
        # One frame for every line of the pass: reading it (size, gutter, both
        # scrollbars, worked out afresh by Textual on each read) cost about as much
        # as making the line itself.
        self._pass_frame = self._frame_now()
        try:
            return super().render_lines(crop)
        finally:
            self._pass_frame = None

    def render_line(self, y: int) -> Strip:
        frame = self._pass_frame or self._frame_now()
        if frame == self._frame and y < len(self._lines):
            line = self._lines[y]
        else:
            line = self._line(y, frame)
        width = frame[0]
        if line is None:
            return Strip.blank(width, self._style(None, None))
        pieces, row_style = line
        # Pieces of one style in one segment: every segment is handled again by each
        # line filter, cut at the screen's cuts and turned into escape sequences, and
        # a row's plain pieces and its padding are most of its segments.
        runs: list[list[Any]] = []
        for text, name in pieces:
            if text:
                style = self._style(name, row_style)
                if runs and runs[-1][1] is style:
                    runs[-1][0] += text
                else:
                    runs.append([text, style])
        # Padded here and the strip told its length, instead of crop_extend measuring
        # each segment's cells again; ASCII text is as wide as it is long.
        used = sum(len(t) if t.isascii() else cell_len(t) for t, _ in runs)
        pad = self._style(None, row_style)
        if used > width:
            return Strip([Segment(t, s) for t, s in runs]).crop_extend(0, width, pad)
        if used < width:
            if runs and runs[-1][1] is pad:
                runs[-1][0] += " " * (width - used)
            else:
                runs.append([" " * (width - used), pad])
        return Strip([Segment(t, s) for t, s in runs], width)


def _runs(lines: list[int], width: int) -> list[Region]:
    """Sorted line numbers -> one region per run of consecutive lines."""
    runs: list[Region] = []
    start = prev = lines[0]
    for y in lines[1:]:
        if y != prev + 1:
            runs.append(Region(0, start, width, prev - start + 1))
            start = y
        prev = y
    runs.append(Region(0, start, width, prev - start + 1))
    return runs
