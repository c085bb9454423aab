"""What the `ipctop serve` page shows, cell by cell: xterm.js's buffer and the screenshot's pixels.

The page draws on a canvas, so the DOM has no colours to read. Instead the
test catches textual-serve's xterm.js Terminal as the page creates it (a
breakpoint in textual.js), reads each cell's colours from its buffer and
resolves them with the palette xterm.js itself draws with (its theme
service: default fg/bg, the 256 colours), as its renderer does: inverse
swapped, bold low colours brightened, dim at half strength. Then the
screenshot shows whether the browser really painted that: a blank cell's
pixels must be its resolved background, and a visible character must have
pixels at 4.5:1 against it. At two device pixels per CSS pixel every glyph
reaches its full colour somewhere, so the pixels' contrast is the colours'.
"""

from __future__ import annotations

import io
import re
import time
import urllib.parse
import urllib.request

from ansi_contrast import AA, RGB, Cell, ratio
from chromium import DevTools
from PIL import Image

FETCH_TIMEOUT = 30.0

#: the statement in textual.js right after the Terminal is made; paused there, `this.terminal` is it
AFTER_NEW_TERMINAL = "this.terminal.loadAddon(this.fitAddon)"

TEXT_JS = """(() => { const t = window.__ipctopTerm, b = t.buffer.active; let s = '';
  for (let y = 0; y < t.rows; y++) s += b.getLine(b.viewportY + y).translateToString(true) + '\\n';
  return s; })()"""

DUMP_JS = """(() => {
  const t = window.__ipctopTerm, b = t.buffer.active, c = t._core._themeService.colors;
  const rows = [];
  for (let y = 0; y < t.rows; y++) {
    const line = b.getLine(b.viewportY + y), out = [];
    for (let x = 0; x < t.cols; x++) {
      const k = line.getCell(x);
      out.push([k.getChars(), k.getWidth(),
        k.isFgRGB() ? 'rgb' : k.isFgPalette() ? 'pal' : 'def', k.getFgColor(),
        k.isBgRGB() ? 'rgb' : k.isBgPalette() ? 'pal' : 'def', k.getBgColor(),
        !!k.isInverse(), !!k.isDim(), !!k.isBold(), !!k.isInvisible()]);
    }
    rows.push(out);
  }
  const r = document.querySelector('.xterm-screen').getBoundingClientRect();
  return {cols: t.cols, rows, fg: c.foreground.css, bg: c.background.css,
          ansi: c.ansi.map(a => a.css), dpr: window.devicePixelRatio,
          screen: [r.left, r.top, r.width, r.height],
          bright: t.options.drawBoldTextInBrightColors,
          minimum_contrast: t.options.minimumContrastRatio};
})()"""

Dump = dict


async def open_terminal(cdp: DevTools, url: str) -> None:
    """Navigate to the served page and keep its xterm.js Terminal as window.__ipctopTerm."""
    html = _fetch(url)
    src = re.search(r'src="([^"]*textual\.js)"', html)
    assert src, "the served page loads no textual.js"
    js = _fetch(urllib.parse.urljoin(url, src.group(1)))
    at = js.find(AFTER_NEW_TERMINAL)
    assert at >= 0, f"textual-serve's textual.js changed: no {AFTER_NEW_TERMINAL!r} to stop at"
    line = js.count("\n", 0, at)
    await cdp.call("Page.enable")
    await cdp.call("Debugger.enable")
    await cdp.call(
        "Debugger.setBreakpointByUrl",
        urlRegex=r"textual\.js",
        lineNumber=line,
        columnNumber=at - (js.rfind("\n", 0, at) + 1),
    )
    await cdp.call("Page.navigate", url=url)
    paused = await cdp.event("Debugger.paused")
    frame = paused["callFrames"][0]["callFrameId"]
    await cdp.call(
        "Debugger.evaluateOnCallFrame",
        callFrameId=frame,
        expression="window.__ipctopTerm = this.terminal",
    )
    await cdp.call("Debugger.disable")  # resumes, and no further pause


def _fetch(url: str) -> str:
    """The server is a Python process on a box that may be loaded: 5 s was not enough."""
    t0 = time.monotonic()
    try:
        return urllib.request.urlopen(url, timeout=FETCH_TIMEOUT).read().decode()
    except OSError as e:
        raise AssertionError(f"GET {url}: {e} after {time.monotonic() - t0:.1f} s") from None


def _hex(css: str) -> RGB:
    s = css.lstrip("#")
    return (int(s[0:2], 16), int(s[2:4], 16), int(s[4:6], 16))


def cells(dump: Dump) -> list[tuple[Cell, int]]:
    """Every drawn cell with its colours resolved as xterm.js draws them, and its width."""
    assert dump["minimum_contrast"] == 1, "xterm.js would adjust colours (minimumContrastRatio)"
    ansi = [_hex(a) for a in dump["ansi"]]
    default_fg, default_bg = _hex(dump["fg"]), _hex(dump["bg"])

    def colour(mode: str, value: int, default: RGB) -> RGB:
        if mode == "rgb":
            return ((value >> 16) & 255, (value >> 8) & 255, value & 255)
        return ansi[value] if mode == "pal" else default

    out = []
    for y, row in enumerate(dump["rows"]):
        for x, (ch, width, fm, fv, bm, bv, inverse, dim, bold, invisible) in enumerate(row):
            if width == 0 or invisible:  # the right half of a wide character; hidden text
                continue
            if fm == "pal" and bold and dump["bright"] and fv < 8:
                fv += 8
            fg, bg = colour(fm, fv, default_fg), colour(bm, bv, default_bg)
            if inverse:
                fg, bg = bg, fg
            out.append((Cell(y, x, ch or " ", fg, bg, dim), width))
    return out


def blank(ch: str) -> bool:
    return ch.isspace() or ch == "\u2800"  # a blank, or an empty braille cell


def stable_cells(dumps: list[Dump]) -> set[tuple[int, int]]:
    """Cells the same in every dump: taken either side of a screenshot, the picture shows them."""
    first = dumps[0]["rows"]
    return {
        (y, x)
        for y, row in enumerate(first)
        for x, c in enumerate(row)
        if all(d["rows"][y][x] == c for d in dumps[1:])
    }


def pixel_faults(
    dump: Dump, png: bytes, only: set[tuple[int, int]], minimum: float = AA
) -> list[str]:
    """Cells (of only) the screenshot does not show as the buffer says, or shows under minimum:1."""
    image = Image.open(io.BytesIO(png)).convert("RGB")
    left, top, width, height = dump["screen"]
    dpr = dump["dpr"]
    cw, ch = width / dump["cols"], height / len(dump["rows"])
    faults = []
    for cell, w in cells(dump):
        if (cell.row, cell.col) not in only:
            continue
        # one device pixel in from each edge: a neighbour's background may bleed into it
        box = (
            round((left + cell.col * cw) * dpr) + 1,
            round((top + cell.row * ch) * dpr) + 1,
            round((left + (cell.col + w) * cw) * dpr) - 1,
            round((top + (cell.row + 1) * ch) * dpr) - 1,
        )
        counts = image.crop(box).getcolors((box[2] - box[0]) * (box[3] - box[1])) or []
        bg = cell.bg
        assert isinstance(bg, tuple)
        where = f"row {cell.row} col {cell.col} {cell.char!r}"
        if blank(cell.char):
            drawn = max(counts)[1]
            if max(abs(a - b) for a, b in zip(drawn, bg)) > 3:
                faults.append(f"{where}: background drawn {drawn}, the buffer says {bg}")
            continue
        ink = max((c for _, c in counts), key=lambda c: ratio(c, bg))
        if ratio(ink, bg) < minimum:
            faults.append(f"{where}: darkest/lightest pixel {ink} on {bg}: {ratio(ink, bg):.2f}:1")
    return faults
