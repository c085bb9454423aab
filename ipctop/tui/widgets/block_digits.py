"""Large digits in solid blocks, for presentation mode's figures.

Textual's Digits draws with box-drawing strokes, one cell thin: in a
projected terminal (and in the SVG screenshots) they read as thin lines.
These are a 3x5 pixel font drawn with half blocks (▀ ▄ █), three rows tall
like Digits, with a column between glyphs so neighbours never merge.
"""

from __future__ import annotations

from rich.text import Text
from textual.app import RenderResult
from textual.widget import Widget

# 5 rows of pixels per glyph, top first; "#" is ink.
FONT: dict[str, tuple[str, ...]] = {
    "0": ("###", "#.#", "#.#", "#.#", "###"),
    "1": (".#.", "##.", ".#.", ".#.", "###"),
    "2": ("###", "..#", "###", "#..", "###"),
    "3": ("###", "..#", ".##", "..#", "###"),
    "4": ("#.#", "#.#", "###", "..#", "..#"),
    "5": ("###", "#..", "###", "..#", "###"),
    "6": ("###", "#..", "###", "#.#", "###"),
    "7": ("###", "..#", "..#", "..#", "..#"),
    "8": ("###", "#.#", "###", "#.#", "###"),
    "9": ("###", "#.#", "###", "..#", "###"),
    ".": (".", ".", ".", ".", "#"),
    "-": ("...", "...", "###", "...", "..."),
    "+": ("...", ".#.", "###", ".#.", "..."),
    " ": ("...", "...", "...", "...", "..."),
}
HALF = {(True, True): "█", (True, False): "▀", (False, True): "▄", (False, False): " "}


def glyph_rows(char: str) -> list[str]:
    """The glyph as 3 text rows (pixel rows 0-1, 2-3, 4 and a blank)."""
    pixels = [*FONT.get(char, FONT[" "]), "." * len(FONT.get(char, FONT[" "])[0])]
    return [
        "".join(HALF[(top == "#", bottom == "#")] for top, bottom in zip(pixels[r], pixels[r + 1]))
        for r in (0, 2, 4)
    ]


def render_digits(value: str) -> list[str]:
    """Three rows of text drawing value; characters without a glyph draw as a space."""
    glyphs = [glyph_rows(c) for c in value]
    return [" ".join(g[r] for g in glyphs) for r in range(3)]


def digits_width(value: str) -> int:
    return len(render_digits(value)[0]) if value else 0


class BlockDigits(Widget):
    DEFAULT_CSS = """
    BlockDigits { width: auto; height: 3; }
    """

    def __init__(self, value: str = "", *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.value = value

    def update(self, value: str) -> None:
        if value == self.value:
            return
        resized = digits_width(value) != digits_width(self.value)
        self.value = value
        self.refresh(layout=resized)

    def get_content_width(self, container, viewport) -> int:  # type: ignore[no-untyped-def]
        return digits_width(self.value)

    def render(self) -> RenderResult:
        return Text("\n".join(render_digits(self.value)))
