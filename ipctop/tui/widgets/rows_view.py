"""A scrolling table drawn line by line: only the visible rows cost anything.

At 512 threads a widget per row would cost more than the workload can spare;
here a redraw formats the rows on screen and nothing else. Line 0 is a fixed
heading; rows scroll under it.
"""

from __future__ import annotations

from typing import ClassVar

from rich.segment import Segment
from rich.style import Style
from rich.text import Text
from textual.geometry import Size
from textual.scroll_view import ScrollView
from textual.strip import Strip


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
        self._styles: dict[str, Style] = {}

    # -- for subclasses ------------------------------------------------------------
    def row_count(self) -> int:
        return 0

    def heading(self, width: int) -> Text:
        return Text("")

    def row(self, index: int, width: int) -> Text:
        raise NotImplementedError

    # -- plumbing ------------------------------------------------------------------
    def style_of(self, name: str) -> Style:
        style = self._styles.get(name)
        if style is None:
            style = self.get_component_rich_style(f"rows--{name}", partial=True)
            self._styles[name] = style
        return style

    def notify_style_update(self) -> None:
        self._styles.clear()  # the theme changed: component styles must be read again
        super().notify_style_update()

    @property
    def text_width(self) -> int:
        return max(0, self.scrollable_content_region.width)

    def changed(self) -> None:
        """The data changed: resize the scroll area and redraw what is visible."""
        self.virtual_size = Size(self.text_width, self.row_count() + 1)
        self.refresh()

    def render_line(self, y: int) -> Strip:
        width = self.text_width
        base = self.rich_style
        if y == 0:
            text = self.heading(width)
            text.stylize(self.style_of("heading"))
        else:
            index = y - 1 + self.scroll_offset.y
            if index >= self.row_count():
                return Strip.blank(width, base)
            text = self.row(index, width)
        text.no_wrap = True
        text.overflow = "crop"
        text.truncate(width, pad=True)
        segments = list(text.render(self.app.console))
        return Strip(Segment.apply_style(segments, base), width).crop_extend(0, width, base)
