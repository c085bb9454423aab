"""Pick one of a few names (workload, placement): returns it, or None."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.containers import Vertical
from textual.widgets import Label, OptionList
from textual.widgets.option_list import Option

from .answer_once import AnswerOnceScreen


class ChoiceScreen(AnswerOnceScreen[str | None]):
    DEFAULT_CSS = """
    ChoiceScreen { align: center middle; }
    ChoiceScreen > Vertical {
        width: 60;
        max-width: 95%;
        height: auto;
        max-height: 90%;
        border: thick $primary;
        background: $surface;
    }
    ChoiceScreen OptionList { height: auto; max-height: 20; }
    """

    def __init__(self, title: str, choices: list[tuple[str, str]], current: str) -> None:
        super().__init__()
        self.title_text = title
        self.choices = choices
        self.current = current

    def compose(self) -> ComposeResult:
        with Vertical():
            yield Label(f" {self.title_text} (enter picks, escape cancels)")
            yield OptionList(
                *[
                    Option(f"{name}{' (now)' if name == self.current else ''}  {what}", id=name)
                    for name, what in self.choices
                ]
            )

    def on_mount(self) -> None:
        options = self.query_one(OptionList)
        names = [n for n, _ in self.choices]
        if self.current in names:
            options.highlighted = names.index(self.current)
        options.focus()

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        self.dismiss(event.option.id)
