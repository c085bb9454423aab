"""Ask for one file path (key b: which record to use as the baseline); None on escape."""

from __future__ import annotations

from .text_input import TextInputScreen


class PathInputScreen(TextInputScreen):
    def __init__(self, title: str, value: str = "") -> None:
        super().__init__(
            [f"{title} (enter loads, escape cancels)"], value, "path/to/record.json", "path"
        )
        self.title_text = title
