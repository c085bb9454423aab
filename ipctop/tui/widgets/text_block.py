"""A few lines of styled text that repaint without a layout pass.

Static.update() asks for a new layout on every call, the dearest thing a
redraw can do, twice a second. This widget repaints only when the text really
changed, and changes its height (a layout) only when the line count does.
"""

from __future__ import annotations

from rich.text import Text
from textual.app import RenderResult
from textual.widget import Widget


class TextBlock(Widget):
    def __init__(
        self, *, id: str | None = None, classes: str | None = None, fit_height: bool = False
    ) -> None:
        super().__init__(id=id, classes=classes)
        self._text = Text()
        self.fit_height = fit_height

    @property
    def text(self) -> Text:
        return self._text

    def show(self, text: Text) -> None:
        if text == self._text:
            return
        lines = text.plain.count("\n") + 1
        relayout = self.fit_height and lines != self._text.plain.count("\n") + 1
        self._text = text
        if relayout:
            self.styles.height = lines
        else:
            self.refresh()

    def render(self) -> RenderResult:
        return self._text
