"""What a terminal below the smallest layout shows: its size, and the size needed.

The app's breakpoints (-too-narrow, -too-low) show this widget and hide the
panels; it reads the size when it is drawn.
"""

from __future__ import annotations

from textual.app import RenderResult
from textual.widget import Widget

#: the smallest layout: the threads panel (29 columns of table) and one line of keys
MIN_SIZE = (30, 8)


class TooSmall(Widget):
    DEFAULT_CSS = """
    TooSmall { display: none; height: 1fr; content-align: center middle; text-style: bold; }
    """

    def render(self) -> RenderResult:
        w, h = self.app.size
        return f"terminal {w}x{h}: ipctop needs {MIN_SIZE[0]}x{MIN_SIZE[1]} (the pairs keep running; q quits)"
