"""A latency matrix record in the monitor (key x): the heatmaps and the class table.

`ipctop matrix --json FILE` measures; this shows what it measured, so the
matrix of a box sits beside its live curves without stopping the pairs.
"""

from __future__ import annotations

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Static

from ...output.records.matrix_record import MatrixRecord
from ...output.text import matrix_text


def matrix_text_of(rec: MatrixRecord, figure: str = "p50") -> str:
    """Heatmaps (ANSI colours) per mechanism, then the class table."""
    cpus = sorted({c.src for c in rec.cells} | {c.dst for c in rec.cells})
    parts = [f"{rec.name}: {rec.box.kernel_release or '?'}, CPUs {cpus}"]
    for w in dict.fromkeys(c.workload for c in rec.cells):
        mine = [c for c in rec.cells if c.workload == w]
        parts.append(f"{w}\n" + matrix_text.heatmap(mine, cpus, figure, colour=True))
    parts.append("by class (kernel = mechanism minus spin flag)\n"
                 + matrix_text.class_table(rec.classes))  # fmt: skip
    return "\n\n".join(parts)


class MatrixScreen(ModalScreen[None]):
    BINDINGS = [
        Binding("escape,x,q", "dismiss", "close"),
        Binding("9", "figure('p99')", "p99", show=False),
        Binding("5", "figure('p50')", "p50", show=False),
    ]

    DEFAULT_CSS = """
    MatrixScreen { align: center middle; }
    MatrixScreen > VerticalScroll {
        width: 95%; height: 90%; border: thick $primary; background: $surface;
        padding: 0 1;
    }
    """

    def __init__(self, record: MatrixRecord) -> None:
        super().__init__()
        self.record = record
        self.shown = ""  # the text on screen, colours included

    def compose(self) -> ComposeResult:
        with VerticalScroll():
            yield Static("keys: 5 = p50, 9 = p99, escape closes", id="matrix-help")
            yield Static(id="matrix-body")

    def on_mount(self) -> None:
        self.action_figure("p50")

    def action_figure(self, figure: str) -> None:
        self.shown = matrix_text_of(self.record, figure)
        self.query_one("#matrix-body", Static).update(Text.from_ansi(self.shown))
