"""Ask for one file path (key b: which record to use as the baseline); None on escape."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.widgets import Input, Label

from .answer_once import AnswerOnceScreen


class PathInputScreen(AnswerOnceScreen[str | None]):
    BINDINGS = [Binding("escape", "cancel", "cancel")]

    DEFAULT_CSS = """
    PathInputScreen { align: center middle; }
    PathInputScreen > Vertical {
        width: 80;
        max-width: 95%;
        height: auto;
        border: thick $primary;
        background: $surface;
        padding: 0 1;
    }
    """

    def __init__(self, title: str, value: str = "") -> None:
        super().__init__()
        self.title_text = title
        self.value = value

    def compose(self) -> ComposeResult:
        with Vertical():
            yield Label(f"{self.title_text} (enter loads, escape cancels)")
            yield Input(value=self.value, placeholder="path/to/record.json", id="path")

    def on_mount(self) -> None:
        self.query_one(Input).focus()

    def on_input_submitted(self, event: Input.Submitted) -> None:
        value = event.value.strip()
        self.dismiss(value or None)

    def action_cancel(self) -> None:
        self.dismiss(None)
