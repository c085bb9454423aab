"""The prompts over the monitor: one question each, answered once (a name, a line, a path).

Two quick keys (Enter Enter, Escape Escape) both reach a prompt before the
first dismiss has popped it; the second dismiss then popped the screen below
it, the main one, and the app died with ScreenStackError: AnswerOnceScreen
takes the first answer only.
"""

from __future__ import annotations

from typing import Generic, TypeVar

from textual.app import ComposeResult
from textual.await_complete import AwaitComplete
from textual.binding import Binding
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import Input, Label, OptionList
from textual.widgets.option_list import Option

ResultT = TypeVar("ResultT")


class AnswerOnceScreen(ModalScreen[ResultT], Generic[ResultT]):
    BINDINGS = [Binding("escape", "cancel", "cancel")]  # every prompt's way out

    # Every prompt is one box in the middle: a subclass gives its width.
    DEFAULT_CSS = """
    AnswerOnceScreen { align: center middle; }
    AnswerOnceScreen > Vertical {
        max-width: 95%;
        height: auto;
        border: thick $primary;
        background: $surface;
    }
    """
    _answered = False

    def dismiss(self, result: ResultT | None = None) -> AwaitComplete:
        if self._answered:
            done: AwaitComplete = AwaitComplete.nothing()  # Textual leaves it unannotated
            return done
        self._answered = True
        return super().dismiss(result)

    def action_cancel(self) -> None:
        """Escape on a prompt: answer None."""
        self.dismiss(None)


class TextInputScreen(AnswerOnceScreen[str | None]):
    """A one-line prompt over the monitor: the answer (stripped), or None on escape or empty."""

    DEFAULT_CSS = """
    TextInputScreen > Vertical { width: 80; padding: 0 1; }
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


class AbInputScreen(TextInputScreen):
    """Ask for B's options (key a): what differs from the current setting; None on escape."""

    def __init__(self, current: str, value: str = "") -> None:
        lines = [
            f"A/B against the current setting ({current})",
            "B: the options that differ (enter starts, escape cancels)",
        ]
        super().__init__(lines, value, "--placement cross", "b-options")
        self.current = current


class PathInputScreen(TextInputScreen):
    """Ask for one file path (key b: which record to use as the baseline); None on escape."""

    def __init__(self, title: str, value: str = "") -> None:
        super().__init__(
            [f"{title} (enter loads, escape cancels)"], value, "path/to/record.json", "path"
        )
        self.title_text = title


class ChoiceScreen(AnswerOnceScreen[str | None]):
    """Pick one of a few names (workload, placement): returns it, or None."""

    DEFAULT_CSS = """
    ChoiceScreen > Vertical { width: 60; max-height: 90%; }
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
