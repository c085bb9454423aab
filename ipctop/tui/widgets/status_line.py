"""The line above the key footer: the monitor's own cost and where it runs."""

from __future__ import annotations

from rich.text import Text

from .text_block import TextBlock


class StatusLine(TextBlock):
    DEFAULT_CSS = """
    StatusLine {
        height: 1;
        background: $panel;
        color: $text-muted;
        padding: 0 1;
        text-wrap: nowrap;
        text-overflow: ellipsis;
    }
    """

    def update_status(
        self,
        own_cpu: str,
        monitor_cpu: int | None,
        interval: float,
        message: str = "",
        priority_note: str = "",
    ) -> None:
        text = Text()
        # own_cpu: tui/own_cpu.py's text, the span's figure with its interval once it has one
        text.append(f"ipctop: {own_cpu}", "bold")
        if monitor_cpu is None:
            text.append(" · monitor shares the pairs' CPUs")
        else:
            text.append(f" · monitor on CPU {monitor_cpu}")
        if priority_note:
            text.append(f" · {priority_note}", "bold")
        text.append(f" · sample every {interval:g} s")
        if message:
            text.append(f" · {message}")
        self.show(text)
