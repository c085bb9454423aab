"""A last line filter: every segment leaves with a background and readable text.

Themes are designed in truecolor; a 256- or 16-colour terminal gets the
nearest colours, and two nearby colours can land on the same index (text
drawn in the colour of its band). A segment without a background shows the
terminal's own, which the theme never saw (dark text on a dark terminal).
This filter runs after Textual's own, on every rendered line: it gives each
segment the widget's background and, judged in the colours the terminal
will really show, moves any text under WCAG AA (4.5:1) towards black or
white until it passes (7:1 in presentation mode). Results are cached per style: a frame costs a dict
lookup per segment.
"""

from __future__ import annotations

from functools import lru_cache

from rich._palettes import EIGHT_BIT_PALETTE, STANDARD_PALETTE
from rich.color import Color as RichColor
from rich.color import ColorSystem, ColorType
from rich.segment import Segment
from rich.style import Style
from textual.color import Color
from textual.filter import LineFilter

AA = 4.5
SYSTEMS = {
    "truecolor": ColorSystem.TRUECOLOR,
    "256": ColorSystem.EIGHT_BIT,
    "standard": ColorSystem.STANDARD,
    "windows": ColorSystem.WINDOWS,
}
_BLACK = RichColor.from_rgb(0, 0, 0)
_WHITE = RichColor.from_rgb(255, 255, 255)
MEMO_MAX = 4096
_STEPS = (0.2, 0.4, 0.6, 0.8, 1.0)  # how far towards black or white to try


def luminance(rgb: tuple[int, int, int]) -> float:
    def channel(c: int) -> float:
        s = c / 255
        return s / 12.92 if s <= 0.03928 else ((s + 0.055) / 1.055) ** 2.4

    r, g, b = rgb
    return 0.2126 * channel(r) + 0.7152 * channel(g) + 0.0722 * channel(b)


def contrast(a: tuple[int, int, int], b: tuple[int, int, int]) -> float:
    """WCAG contrast ratio of two colours, 1 to 21."""
    la, lb = sorted((luminance(a), luminance(b)), reverse=True)
    return (la + 0.05) / (lb + 0.05)


class ContrastFloor(LineFilter):
    def __init__(self, color_system: str | None, enabled: bool = True) -> None:
        super().__init__(enabled=enabled)
        self.system = SYSTEMS.get(color_system or "truecolor", ColorSystem.TRUECOLOR)
        self.minimum = AA
        # (style, background) -> the fixed style, read before lru_cache's wrapper:
        # a plain dict lookup per segment, on every line of every frame.
        self._memo: dict[tuple[Style | None, RichColor], Style] = {}

    def set_minimum(self, ratio: float) -> None:
        """Raise (presentation: 7:1, AAA) or restore the floor; styles are judged again."""
        if ratio != self.minimum:
            self.minimum = ratio
            self.fixed.cache_clear()
            self._memo.clear()

    def shown(self, color: RichColor) -> tuple[int, int, int]:
        """The RGB the terminal will show for a colour, after rich's downgrade.

        An index is judged in the palette rich matched it in (xterm's), not
        rich's default terminal theme, whose 16 colours are another set.
        """
        down = color.downgrade(self.system)
        if down.number is not None and down.type == ColorType.STANDARD:
            return tuple(STANDARD_PALETTE[down.number])  # type: ignore[return-value]
        if down.number is not None and down.type == ColorType.EIGHT_BIT:
            return tuple(EIGHT_BIT_PALETTE[down.number])  # type: ignore[return-value]
        return tuple(down.get_truecolor())  # type: ignore[return-value]

    def apply(self, segments: list[Segment], background: Color) -> list[Segment]:
        bg = background.rich_color
        memo = self._memo
        out = []
        for seg in segments:
            text, style, control = seg
            if control or style is None and not text:
                out.append(seg)
                continue
            fixed = memo.get((style, bg))
            if fixed is None:
                if len(memo) >= MEMO_MAX:
                    memo.clear()  # styles are few; this only bounds a pathological run
                fixed = memo[style, bg] = self.fixed(style or Style(), bg)
            out.append(Segment(text, fixed))
        return out

    @lru_cache(maxsize=4096)  # noqa: B019 - one filter per app, styles are few and immutable
    def fixed(self, style: Style, background: RichColor) -> Style:
        fg, bg = style.color, style.bgcolor
        if bg is None or bg.is_default:
            bg = background
        if fg is None or fg.is_default:
            fg = _WHITE if luminance(self.shown(bg)) < 0.18 else _BLACK
        if style.reverse:
            fg, bg = bg, fg
        if style.dim:
            blended = Color.from_rich_color(bg).blend(Color.from_rich_color(fg), 0.66)
            fg = RichColor.from_rgb(*blended.rgb)  # the triplet blended.rich_color carries
        fg = self._readable(fg, bg)
        if contrast(self.shown(fg), self.shown(bg)) < self.minimum:
            # Not even black or white passes on this background (white on grey 59 is 6.4:1,
            # a toast in presentation mode at 256 colours): move the background instead.
            bg = self._readable(bg, fg)
        return style + Style(color=fg, bgcolor=bg, reverse=False, dim=False)

    def _readable(self, fg: RichColor, bg: RichColor) -> RichColor:
        """fg itself if it passes on bg; else the least change towards black or white that does."""
        shown_bg = self.shown(bg)
        if contrast(self.shown(fg), shown_bg) >= self.minimum:
            return fg
        ends = sorted((_BLACK, _WHITE), key=lambda end: -contrast(end.get_truecolor(), shown_bg))
        base = Color.from_rich_color(fg)
        for end in ends:
            target = Color.from_rich_color(end)
            for step in _STEPS:
                moved = base.blend(target, step).rich_color
                if contrast(self.shown(moved), shown_bg) >= self.minimum:
                    return moved
        return ends[0]
