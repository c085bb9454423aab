"""The help screen: every key, and how to read each panel."""

from __future__ import annotations

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.widgets import Static

from .answer_once import AnswerOnceScreen

PANELS = [
    (
        "Threads",
        "one row per thread, by pair: last CPU (≠ flags a thread off its binding), "
        "ops/s history on one shared scale, ops/s and share. A highlighted row is more than 20 % "
        "off the median: a misplaced or starved pair.",
    ),
    ("CPUs", "busy history and user/system/softirq split; ● marks a CPU hosting a pair."),
    (
        "Context switches",
        "system-wide switches/s, rescheduling and function-call IPIs per CPU, "
        "voluntary and involuntary switches per thread.",
    ),
    (
        "Scaling",
        "settled total ops/s per pair count, the ideal line N x (1-pair reading) and "
        "scalability % = total(N) / total(1). A reading settles when its coefficient of variation "
        "stays under 5 % over 3 s.",
    ),
    (
        "Detail (d)",
        "where the time goes: CPU and run delay in µs per round, switches and migrations, "
        "IPIs and wake-ups per CPU, round trip per pair; n/a says why a source is missing.",
    ),
]


class HelpScreen(AnswerOnceScreen[None]):
    BINDINGS = [
        Binding("escape,question_mark,q", "dismiss", "close help"),
    ]

    DEFAULT_CSS = """
    HelpScreen { align: center middle; }
    HelpScreen > VerticalScroll {
        width: 90%;
        max-width: 100;
        height: 90%;
        border: thick $primary;
        background: $surface;
        padding: 0 1;
    }
    """

    def __init__(self, keys: list[tuple[str, str]]) -> None:
        super().__init__()
        self.keys = keys

    def compose(self) -> ComposeResult:
        text = Text()
        text.append("ipctop: add cores and watch scalability degrade\n\n", "bold")
        text.append("Keys\n", "bold underline")
        for key, what in self.keys:
            text.append(f"  {key:>7}  ", "bold")
            text.append(f"{what}\n")
        text.append("\nPanels\n", "bold underline")
        for name, what in PANELS:
            text.append(f"  {name}: ", "bold")
            text.append(f"{what}\n")
        text.append("\nescape or ? closes this screen; ctrl+p opens the command palette.")
        with VerticalScroll():
            yield Static(text)
