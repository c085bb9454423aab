"""A modal screen that can be answered only once.

Two quick keys (Enter Enter, Escape Escape) both reach the screen before the
first dismiss has popped it; the second dismiss then popped the screen below
it, the main one, and the app died with ScreenStackError.
"""

from __future__ import annotations

from typing import Generic, TypeVar

from textual.await_complete import AwaitComplete
from textual.binding import Binding
from textual.screen import ModalScreen

ResultT = TypeVar("ResultT")


class AnswerOnceScreen(ModalScreen[ResultT], Generic[ResultT]):
    BINDINGS = [Binding("escape", "cancel", "cancel")]  # every prompt's way out
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
