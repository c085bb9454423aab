"""A one-line prompt over the monitor: the answer (stripped), or None on escape or empty."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.containers import Vertical
from textual.widgets import Input, Label

from .answer_once import AnswerOnceScreen


class TextInputScreen(AnswerOnceScreen[str | None]):
    DEFAULT_CSS = """
    TextInputScreen { align: center middle; }
    TextInputScreen > Vertical {
        width: 80;
        max-width: 95%;
        height: auto;
        border: thick $primary;
        background: $surface;
        padding: 0 1;
    }
    """

    def __init__(self, lines: list[str], value: str, placeholder: str, input_id: str) -> None:
        super().__init__()
        self.lines = lines
        self.value = value
        self.placeholder = placeholder
        self.input_id = input_id

    def compose(self) -> ComposeResult:
        with Vertical():
            for line in self.lines:
                yield Label(line)
            yield Input(value=self.value, placeholder=self.placeholder, id=self.input_id)

    def on_mount(self) -> None:
        self.query_one(Input).focus()

    def on_input_submitted(self, event: Input.Submitted) -> None:
        self.dismiss(event.value.strip() or None)
