"""The demo's narration (ipctop demo): a band of its own, whole at any width.

The step's caption in the footer was cut at 120 columns and its last step
was a pop-up; a room needs to read it from the back, and to see what the
screen is waiting for. The band wraps instead of cutting and repaints only
when its text changes.
"""

from __future__ import annotations

from rich.text import Text
from textual.widgets import Static


class NarrationBand(Static):
    DEFAULT_CSS = """
    NarrationBand {
        height: auto;
        border: tall $accent;
        background: $accent 15%;
        color: $foreground;
        padding: 0 1;
        text-wrap: wrap;
        display: none;
    }
    NarrationBand.-shown { display: block; }
    """

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.said = Text()

    def say(self, text: Text) -> None:
        """Show this narration (an empty text hides the band)."""
        if text == self.said:
            return
        self.said = text
        self.set_class(bool(text.plain), "-shown")
        self.update(text)
