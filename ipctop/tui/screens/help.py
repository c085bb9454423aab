"""The help screen: every key (generated from the bindings, key_list.py), and each panel."""

from __future__ import annotations

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.widgets import Static

from .key_list import KeySection
from .prompts import AnswerOnceScreen

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
        "stays under 5 % over 3 s; one that keeps climbing or falling says rising or falling. "
        "Against a baseline (b), diff % is red (slower) or green (faster) only where its "
        "verdict holds Holm-adjusted over every settled point judged (5 % family-wise, as "
        "compare's verdicts); plain otherwise.",
    ),
    (
        "Detail (d)",
        "where the time goes: CPU and run delay in µs per round, switches and migrations, "
        "IPIs and wake-ups per CPU, round trip per pair; n/a says why a source is missing.",
    ),
]


class HelpScroll(VerticalScroll):
    """The help's box, whose bottom edge says when there is more below, and how to get it."""

    def on_mount(self) -> None:
        self.call_after_refresh(self._say_where)  # the text's height is known after a layout

    def on_resize(self) -> None:
        self._say_where()

    def watch_scroll_y(self, old: float, new: float) -> None:
        super().watch_scroll_y(old, new)
        self._say_where()

    def _say_where(self) -> None:
        if self.max_scroll_y <= 0:
            where = "escape closes"
        elif self.scroll_y < self.max_scroll_y:
            where = "more below: ↓ / PgDn · escape closes"
        else:
            where = "end · ↑ / PgUp back · escape closes"
        if where != self.border_subtitle:
            self.border_subtitle = where


class HelpScreen(AnswerOnceScreen[None]):
    BINDINGS = [
        Binding("escape,question_mark,q", "dismiss", "close help"),
    ]

    DEFAULT_CSS = """
    HelpScreen { align: center middle; }
    HelpScreen > HelpScroll {
        width: 90%;
        max-width: 100;
        height: 90%;
        border: thick $primary;
        background: $surface;
        padding: 0 1;
        border-subtitle-style: bold;
        border-subtitle-color: $text;
    }
    """

    def __init__(self, sections: list[KeySection]) -> None:
        super().__init__()
        self.sections = sections

    def compose(self) -> ComposeResult:
        text = Text()
        text.append("ipctop: add cores and watch scalability degrade\n\n", "bold")
        for section in self.sections:
            text.append(f"{section.heading}\n", "bold underline")
            width = max((len(r.keys) for r in section.rows), default=0)
            for row in section.rows:
                text.append(f"  {row.keys:>{max(7, width)}}  ", "bold")
                text.append(f"{row.what}\n")
            text.append("\n")
        text.append("Panels\n", "bold underline")
        for name, what in PANELS:
            text.append(f"  {name}: ", "bold")
            text.append(f"{what}\n")
        text.append("\nescape or ? closes this screen; ctrl+p opens the command palette.")
        with HelpScroll():
            yield Static(text)
