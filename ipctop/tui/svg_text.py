"""Screenshots whose text reads right in any SVG viewer, not only in a browser.

Rich draws each run of a line as a <text> element at its cell's x, spaces as
&#160;. Where a run begins or ends with spaces (a style change, or one of
Textual's cuts at a widget edge), a viewer or text extractor that trims each
element (Python's str.strip() counts U+00A0 as space) puts the words of two
runs together: "regression  vs baseline" read "regressionvs baseline" and the
footer's "^p palette" read "^ppa lette" (issue 27, finding 23). Moving the
spaces out of the element, into its x, draws the same picture; the
backgrounds are <rect>s of their own and stay.
"""

from __future__ import annotations

import html
import re

_TEXT = re.compile(r"<text ([^>]*)>([^<]*)</text>")
_EDGES = re.compile(r"^((?:&#160;| )*)(.*?)((?:&#160;| )*)$", re.S)
_X = re.compile(r'\bx="([0-9.]+)"')
_LENGTH = re.compile(r'\btextLength="([0-9.]+)"')


def _fmt(v: float) -> str:
    return f"{v:.1f}".rstrip("0").rstrip(".")


def _tidy(m: re.Match[str]) -> str:
    attrs, raw = m.group(1), m.group(2)
    x, length = _X.search(attrs), _LENGTH.search(attrs)
    lead, middle, trail = _EDGES.match(raw).groups()  # type: ignore[union-attr]
    if x is None or length is None or not (lead or trail):
        return m.group(0)
    if not middle:
        return ""  # spaces only: the background rect draws them
    chars = len(html.unescape(raw))
    cell = float(length.group(1)) / chars
    before, after = len(html.unescape(lead)), len(html.unescape(trail))
    new_x = float(x.group(1)) + before * cell
    new_length = float(length.group(1)) - (before + after) * cell
    attrs = _X.sub(f'x="{_fmt(new_x)}"', attrs, count=1)
    attrs = _LENGTH.sub(f'textLength="{_fmt(new_length)}"', attrs, count=1)
    return f"<text {attrs}>{middle}</text>"


def tidy_svg(svg: str) -> str:
    """The same picture with no <text> element beginning or ending in spaces."""
    return _TEXT.sub(_tidy, svg)
