"""WCAG contrast of every visible character in a terminal's real ANSI output.

Reads what `tmux capture-pane -e -p` prints: text with SGR escapes. Each
character's foreground and background are resolved to RGB the way a
terminal would (16-colour indexes through rich's standard palette, the one
Textual downgrades to; 16-255 through the xterm cube and greys). A colour
the program left to the terminal (default fg or bg) is unknown, so it is
judged against both a dark and a light terminal: a character is only
readable if it is readable on both.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from rich._palettes import EIGHT_BIT_PALETTE, STANDARD_PALETTE

RGB = tuple[int, int, int]
#: a colour as the terminal will show it: RGB, or the terminal's own default fg / bg
Colour = RGB | str
FG, BG = "default-fg", "default-bg"
#: the terminal's own colours are unknown: try a dark and a light terminal
DEFAULT_BACKGROUNDS: tuple[RGB, RGB] = ((0, 0, 0), (255, 255, 255))
DEFAULT_FOREGROUNDS: tuple[RGB, RGB] = ((255, 255, 255), (0, 0, 0))
AA = 4.5

_CSI = re.compile(r"\x1b\[([0-9;:]*)([A-Za-z])")


@dataclass(frozen=True)
class Cell:
    row: int
    col: int
    char: str
    fg: Colour
    bg: Colour
    dim: bool = False


def _index(n: int) -> RGB:
    if n < 16:
        return tuple(STANDARD_PALETTE[n])  # type: ignore[return-value]
    return tuple(EIGHT_BIT_PALETTE[n])  # type: ignore[return-value]


def _colour(params: list[int], i: int) -> tuple[RGB | None, int]:
    """An extended colour (38/48;5;n or 38/48;2;r;g;b) at params[i]; returns it and the next index."""
    if i < len(params) and params[i] == 5 and i + 1 < len(params):
        return _index(params[i + 1]), i + 2
    if i < len(params) and params[i] == 2 and i + 3 < len(params):
        return (params[i + 1], params[i + 2], params[i + 3]), i + 4
    return None, len(params)


def parse(screen: str) -> list[Cell]:
    """Every cell of the captured screen with the colours in force at it."""
    cells: list[Cell] = []
    fg: Colour = FG
    bg: Colour = BG
    dim = reverse = False
    for row, line in enumerate(screen.split("\n")):
        col = 0
        pos = 0
        for m in [*_CSI.finditer(line), None]:
            end = m.start() if m else len(line)
            for ch in line[pos:end]:
                f, b = (bg, fg) if reverse else (fg, bg)
                cells.append(Cell(row, col, ch, f, b, dim))
                col += 1
            if m is None:
                break
            pos = m.end()
            if m.group(2) != "m":
                continue
            params = [int(p) if p else 0 for p in re.split("[;:]", m.group(1))] or [0]
            i = 0
            while i < len(params):
                p = params[i]
                i += 1
                if p == 0:
                    fg, bg = FG, BG
                    dim = reverse = False
                elif p == 2:
                    dim = True
                elif p == 22:
                    dim = False
                elif p == 7:
                    reverse = True
                elif p == 27:
                    reverse = False
                elif 30 <= p <= 37:
                    fg = _index(p - 30)
                elif 90 <= p <= 97:
                    fg = _index(p - 90 + 8)
                elif 40 <= p <= 47:
                    bg = _index(p - 40)
                elif 100 <= p <= 107:
                    bg = _index(p - 100 + 8)
                elif p == 39:
                    fg = FG
                elif p == 49:
                    bg = BG
                elif p in (38, 48):
                    colour, i = _colour(params, i)
                    if colour is not None and p == 38:
                        fg = colour
                    elif colour is not None:
                        bg = colour
    return cells


def luminance(rgb: RGB) -> float:
    def channel(c: int) -> float:
        s = c / 255
        return s / 12.92 if s <= 0.03928 else ((s + 0.055) / 1.055) ** 2.4

    r, g, b = rgb
    return 0.2126 * channel(r) + 0.7152 * channel(g) + 0.0722 * channel(b)


def ratio(a: RGB, b: RGB) -> float:
    la, lb = sorted((luminance(a), luminance(b)), reverse=True)
    return (la + 0.05) / (lb + 0.05)


def cell_contrast(cell: Cell) -> float:
    """The worst contrast this character can have on any terminal."""
    if isinstance(cell.fg, str) and isinstance(cell.bg, str) and cell.fg != cell.bg:
        return 21.0  # the terminal's own pair: its choice, readable by design
    own = {FG: DEFAULT_FOREGROUNDS, BG: DEFAULT_BACKGROUNDS}
    pairs = []
    for k in range(2):
        fg = own[cell.fg][k] if isinstance(cell.fg, str) else cell.fg
        bg = own[cell.bg][k] if isinstance(cell.bg, str) else cell.bg
        if cell.dim:  # terminals draw dim text about halfway to the background
            fg = tuple((f + b) // 2 for f, b in zip(fg, bg))  # type: ignore[assignment]
        pairs.append(ratio(fg, bg))
    return min(pairs)


def unreadable(screen: str, minimum: float = AA) -> list[tuple[Cell, float]]:
    """Visible characters under `minimum`:1 against their own background."""
    out = []
    for cell in parse(screen):
        if cell.char.isspace() or cell.char == "\u2800":  # blank, or an empty braille cell
            continue
        c = cell_contrast(cell)
        if c < minimum:
            out.append((cell, c))
    return out


def describe(bad: list[tuple[Cell, float]], screen_plain: str, limit: int = 12) -> str:
    """A report a reader can act on: where, what, which colours, how bad."""
    rows = screen_plain.split("\n")
    lines = [f"{len(bad)} characters under the floor"]
    for cell, c in bad[:limit]:
        text = rows[cell.row] if cell.row < len(rows) else ""
        lines.append(
            f"  row {cell.row} col {cell.col} {cell.char!r} fg={cell.fg} bg={cell.bg}"
            f" dim={cell.dim} {c:.2f}:1 | {text.strip()[:70]}"
        )
    return "\n".join(lines)
