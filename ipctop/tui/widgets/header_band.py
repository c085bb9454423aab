"""The bands above the panels (the run, a baseline, an A/B): one look for all three."""

from __future__ import annotations

from .text_block import TextBlock


class HeaderBand(TextBlock):
    """A tinted band, one line unless a subclass says more; long text ends in an ellipsis
    rather than wrapping, so the panels below never move. A band that is not always
    there (the A/B and baseline bands) hides itself in its own CSS until -shown."""

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
