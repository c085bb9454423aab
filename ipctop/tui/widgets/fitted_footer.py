"""The key footer, showing only the keys that fit whole.

Textual's footer runs on past the screen's edge, so the last key on show
was cut to its letter ("m" without "mode"); here the keys that would not
fit are left out, from the last one on (the keys come in order of need,
tui/keys.py), and `?` lists every key. Below 120 columns the keys sit closer.
"""

from __future__ import annotations

from textual.app import ComposeResult
from textual.widgets import Footer
from textual.widgets._footer import FooterKey

COMPACT_BELOW = 120  # columns


def key_width(key: str, description: str, compact: bool) -> int:
    """Cells a FooterKey takes, with its margin: Textual's footer CSS, counted."""
    return len(key) + len(description) + (2 if compact else 3)


class FittedFooter(Footer):
    def compose(self) -> ComposeResult:
        room = self.size.width or self.app.size.width
        used = 0
        for widget in super().compose():
            if isinstance(widget, FooterKey):
                used += key_width(widget.key_display, widget.description, self.compact)
                if used > room + (1 if self.compact else 0):  # the last margin may hang over
                    return
            yield widget

    def on_resize(self) -> None:
        compact = self.size.width < COMPACT_BELOW
        if compact != self.compact:
            self.compact = compact
        self.refresh(recompose=True)
