"""The browser check's own pieces, on fake dumps and a drawn picture (no browser needed)."""

from __future__ import annotations

import io

from PIL import Image, ImageDraw
from xterm_cells import cells, pixel_faults, stable_cells

ANSI = ["#000000", "#cc0000"] + ["#101010"] * 6 + ["#777777", "#ff5555"] + ["#eeeeee"] * 246


def fake_dump(row: list) -> dict:
    return {"cols": len(row), "rows": [row], "fg": "#ffffff", "bg": "#000000", "ansi": ANSI,
            "dpr": 2, "screen": [0, 0, 10 * len(row), 20], "bright": True,
            "minimum_contrast": 1}  # fmt: skip


def cell(ch: str, fg: tuple, bg: tuple, *, inverse: bool = False, bold: bool = False) -> list:
    return [ch, 1, *fg, *bg, inverse, False, bold, False]


def test_fake_dump_resolves_as_xterm_draws_rgb_palette_default_inverse_and_bold() -> None:
    dump = fake_dump([
        cell("a", ("rgb", 0x123456), ("def", 0)),
        cell("b", ("pal", 1), ("pal", 8), bold=True),  # bold red is drawn bright red
        cell("c", ("def", 0), ("rgb", 0xABCDEF), inverse=True),
    ])  # fmt: skip
    (a, _), (b, _), (c, _) = cells(dump)
    assert (a.fg, a.bg) == ((0x12, 0x34, 0x56), (0, 0, 0))
    assert (b.fg, b.bg) == ((0xFF, 0x55, 0x55), (0x77, 0x77, 0x77))
    assert (c.fg, c.bg) == ((0xAB, 0xCD, 0xEF), (255, 255, 255))


def test_fake_picture_faults_a_faint_glyph_and_a_background_not_painted() -> None:
    dump = fake_dump([
        cell("A", ("rgb", 0x787878), ("rgb", 0x6E6E6E)),  # grey on grey, 1.15:1
        cell(" ", ("def", 0), ("rgb", 0x000000)),
        cell("B", ("rgb", 0xFFFFFF), ("rgb", 0x000000)),  # fine
    ])  # fmt: skip
    image = Image.new("RGB", (60, 40), (0, 0, 0))
    draw = ImageDraw.Draw(image)
    draw.rectangle((0, 0, 19, 39), fill=(0x6E, 0x6E, 0x6E))
    draw.rectangle((6, 10, 12, 30), fill=(0x78, 0x78, 0x78))  # A's strokes
    draw.rectangle((20, 0, 39, 39), fill=(255, 255, 255))  # the blank cell drawn white
    draw.rectangle((46, 10, 52, 30), fill=(255, 255, 255))  # B's strokes
    png = io.BytesIO()
    image.save(png, format="PNG")
    faults = pixel_faults(dump, png.getvalue(), {(0, 0), (0, 1), (0, 2)})
    assert len(faults) == 2, faults
    assert "'A'" in faults[0] and "1.15:1" in faults[0]
    assert "background drawn (255, 255, 255)" in faults[1]
    assert pixel_faults(dump, png.getvalue(), {(0, 2)}) == []


def test_a_cell_that_ticks_between_dumps_is_not_stable() -> None:
    one = fake_dump([cell("1", ("def", 0), ("def", 0)), cell("x", ("def", 0), ("def", 0))])
    two = fake_dump([cell("2", ("def", 0), ("def", 0)), cell("x", ("def", 0), ("def", 0))])
    assert stable_cells([one, one]) == {(0, 0), (0, 1)}
    assert stable_cells([one, two, one]) == {(0, 1)}
