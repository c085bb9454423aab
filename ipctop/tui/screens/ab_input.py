"""Ask for B's options (key a): what differs from the current setting; None on escape."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.widgets import Input, Label

from .answer_once import AnswerOnceScreen


class AbInputScreen(AnswerOnceScreen[str | None]):
    BINDINGS = [Binding("escape", "cancel", "cancel")]

    DEFAULT_CSS = """
    AbInputScreen { align: center middle; }
    AbInputScreen > Vertical {
        width: 80;
        max-width: 95%;
        height: auto;
        border: thick $primary;
        background: $surface;
        padding: 0 1;
    }
    """

    def __init__(self, current: str, value: str = "") -> None:
        super().__init__()
        self.current = current
        self.value = value

    def compose(self) -> ComposeResult:
        with Vertical():
            yield Label(f"A/B against the current setting ({self.current})")
            yield Label("B: the options that differ (enter starts, escape cancels)")
            yield Input(value=self.value, placeholder="--placement cross", id="b-options")

    def on_mount(self) -> None:
        self.query_one(Input).focus()

    def on_input_submitted(self, event: Input.Submitted) -> None:
        self.dismiss(event.value.strip() or None)

    def action_cancel(self) -> None:
        self.dismiss(None)
