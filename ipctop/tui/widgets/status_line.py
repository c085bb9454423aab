"""The line above the key footer: the monitor's own cost and where it runs."""

from __future__ import annotations

from .run_header import CPUS, KEEP, LAST, LINEAR, NOTE, STATE, fit
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
        screen_every: float | None = None,
    ) -> None:
        # The answer to the key just pressed first and kept; at a narrow width the
        # sample interval goes first, then where the monitor runs (run_header.fit).
        # own_cpu: tui/own_cpu.py's text, the span's figure with its interval once it has one
        cpu = own_cpu
        pieces: list[tuple[str, str, int]] = []
        if message:
            pieces.append((f"{message} · ", "bold", KEEP))
        # The answer is read once and goes in seconds: at a narrow width it has the line,
        # and the monitor's own CPU comes back when it has gone.
        pieces.append((f"ipctop: {cpu}", "bold", STATE if message else KEEP))
        if monitor_cpu is None:
            pieces.append((" · monitor shares the pairs' CPUs", "", LINEAR))
        else:
            pieces.append((f" · monitor on CPU {monitor_cpu}", "", CPUS))
        if priority_note:
            pieces.append((f" · {priority_note}", "bold", NOTE))
        # Paced (table_pace.py): every sample is taken, the screen steps less often.
        screen = f", screen every {screen_every:g} s" if screen_every is not None else ""
        pieces.append((f" · sample every {interval:g} s{screen}", "", LAST))
        width = max(0, self.size.width - 2) or 10_000  # the padding; unmounted: no limit
        text = fit(pieces, width)
        if text.plain.endswith(" · "):
            text.right_crop(3)  # the answer alone
        self.show(text)
