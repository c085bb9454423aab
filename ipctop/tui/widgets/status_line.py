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
        own_cpu: float | None,
        monitor_cpu: int | None,
        interval: float,
        message: str = "",
        priority_note: str = "",
    ) -> None:
        text = Text()
        cpu = "measuring" if own_cpu is None else f"{own_cpu:.1f} % CPU"
        text.append(f"ipctop: {cpu}", "bold")
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
