"""The one-line bands: the header's look, a baseline's line, the demo's narration, and
what a terminal below the smallest layout shows."""

from __future__ import annotations

from rich.text import Text
from textual.app import RenderResult
from textual.widget import Widget
from textual.widgets import Static

from ...live.baseline import Baseline
from ...live.sources import RunInfo
from .text_block import TextBlock

#: the smallest layout: the threads panel (29 columns of table) and one line of keys
MIN_SIZE = (30, 8)


class HeaderBand(TextBlock):
    """A tinted band, one line unless a subclass says more; long text ends in an ellipsis
    rather than wrapping, so the panels below never move. A band that is not always
    there (the A/B and baseline bands) hides itself in its own CSS until -shown.

    The bands above the panels (the run, a baseline, an A/B) are all one: one look."""

    DEFAULT_CSS = """
    HeaderBand {
        height: 1;
        background: $primary 25%;
        color: $foreground;
        padding: 0 1;
        text-wrap: nowrap;
        text-overflow: ellipsis;
    }
    """


class BaselineBar(HeaderBand):
    """One line under the header while a baseline is shown: whose curve it is, and if it is fair."""

    DEFAULT_CSS = """
    BaselineBar { display: none; }
    BaselineBar.-shown { display: block; }
    """

    def update_from(self, baseline: Baseline | None, info: RunInfo) -> None:
        self.set_class(baseline is not None, "-shown")
        if baseline is None:
            return
        text = Text()
        text.append("baseline ", "bold magenta")
        text.append(f"{baseline.name}: kernel {baseline.kernel} · {baseline.cpu_model}")
        differs = baseline.mismatches(info)
        if differs:
            text.append(f" · differs: {', '.join(differs)}", "bold reverse yellow")
        self.show(text)


class NarrationBand(Static):
    """The demo's narration (ipctop demo): a band of its own, whole at any width.

    The step's caption in the footer was cut at 120 columns and its last step
    was a pop-up; a room needs to read it from the back, and to see what the
    screen is waiting for. The band wraps instead of cutting and repaints only
    when its text changes.
    """

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


class TooSmall(Widget):
    """What a terminal below the smallest layout shows: its size, and the size needed.

    The app's breakpoints (-too-narrow, -too-low) show this widget and hide the
    panels; it reads the size when it is drawn.
    """

    DEFAULT_CSS = """
    TooSmall { display: none; height: 1fr; content-align: center middle; text-style: bold; }
    """

    def render(self) -> RenderResult:
        w, h = self.app.size
        return f"terminal {w}x{h}: ipctop needs {MIN_SIZE[0]}x{MIN_SIZE[1]} (the pairs keep running; q quits)"
