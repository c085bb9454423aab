"""Ask for B's options (key a): what differs from the current setting; None on escape."""

from __future__ import annotations

from .text_input import TextInputScreen


class AbInputScreen(TextInputScreen):
    def __init__(self, current: str, value: str = "") -> None:
        lines = [
            f"A/B against the current setting ({current})",
            "B: the options that differ (enter starts, escape cancels)",
        ]
        super().__init__(lines, value, "--placement cross", "b-options")
        self.current = current
