"""`ipctop report --format html`: one self-contained page, curves drawn as inline SVG.

No script, no font, no stylesheet from the network: the file can be mailed or
pasted into a wiki as it is. Each group gets its table and one chart per
mechanism: every box's curve in grey, the outliers in red and named, the
group's median curve in blue.
"""

from __future__ import annotations

import html
import statistics
from collections.abc import Callable, Sequence

from ...analysis.fleet import Group
from ...analysis.verdicts import fmt_rate
from .report_tables import _title, _why, group_rows, note_lines

W, H, PAD_L, PAD_B, PAD_T, PAD_R = 460, 260, 56, 30, 24, 110

STYLE = """
body { font: 14px/1.4 system-ui, sans-serif; margin: 1.5em; color: #1b1b1b; background: #fff; }
table { border-collapse: collapse; margin: 0.5em 0 1em; }
th, td { border: 1px solid #ccc; padding: 2px 8px; text-align: right; white-space: nowrap; }
th:first-child, td:first-child, td:nth-child(2), td:last-child { text-align: left; }
tr.median td { font-weight: 600; background: #eef3fb; }
tr.flagged td { background: #fdecec; }
.charts { display: flex; flex-wrap: wrap; gap: 1em; }
figure { margin: 0; } figcaption { font-weight: 600; }
.why { color: #a40000; } .note { color: #555; }
"""


def _esc(text: object) -> str:
    return html.escape(str(text), quote=True)


def render_html(groups: Sequence[Group], skipped: Sequence[str]) -> str:
    parts = [
        "<!DOCTYPE html>",
        '<html lang="en"><head><meta charset="utf-8"><title>ipctop report</title>',
        f"<style>{STYLE}</style></head><body>",
        "<h1>ipctop report</h1>",
    ]
    for g in groups:
        parts.append(f"<h2>{_esc(_title(g))}</h2>")
        parts.append(_table(g))
        why = _why(g)
        if why:
            parts.append('<ul class="why">' + "".join(f"<li>{_esc(w)}</li>" for w in why) + "</ul>")
        charts = [_chart(g, c) for c in _curve_names(g)]
        parts.append('<div class="charts">' + "".join(c for c in charts if c) + "</div>")
    parts += [f'<p class="note">{_esc(n)}</p>' for n in note_lines(groups, skipped)]
    parts.append("</body></html>")
    return "\n".join(parts) + "\n"


def _table(g: Group) -> str:
    headers, rows = group_rows(g)
    out = ["<table>", "<tr>" + "".join(f"<th>{_esc(h)}</th>" for h in headers) + "</tr>"]
    for i, r in enumerate(rows):
        cls = "median" if i == 0 else ("flagged" if g.boxes[i - 1].flags else "")
        out.append(f'<tr class="{cls}">' + "".join(f"<td>{_esc(c)}</td>" for c in r) + "</tr>")
    out.append("</table>")
    return "\n".join(out)


def _curve_names(g: Group) -> list[str]:
    return sorted({c for b in g.boxes for c in b.run.curves})


def _chart(g: Group, curve: str) -> str:
    lines = [(b, b.run.curves[curve]) for b in g.boxes if len(b.run.curves.get(curve, ())) >= 1]
    if not lines:
        return ""
    xs = sorted({x for _, pts in lines for x, _ in pts})
    top = max(y for _, pts in lines for _, y in pts) or 1.0
    x0, x1 = xs[0], xs[-1]

    def px(x: float) -> float:
        span = (x1 - x0) or 1
        return PAD_L + (x - x0) / span * (W - PAD_L - PAD_R) if x1 > x0 else (W - PAD_R + PAD_L) / 2

    def py(y: float) -> float:
        return H - PAD_B - y / (top * 1.1) * (H - PAD_B - PAD_T)

    svg = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{W}" height="{H}" '
        f'viewBox="0 0 {W} {H}" role="img" aria-label="{_esc(curve)} ops/s by pairs">',
        f'<line x1="{PAD_L}" y1="{H - PAD_B}" x2="{W - PAD_R}" y2="{H - PAD_B}" stroke="#444"/>',
        f'<line x1="{PAD_L}" y1="{PAD_T}" x2="{PAD_L}" y2="{H - PAD_B}" stroke="#444"/>',
    ]
    for i in range(5):
        y = top * 1.1 * i / 4
        svg.append(
            f'<text x="{PAD_L - 4}" y="{py(y) + 4:.1f}" font-size="11" text-anchor="end">'
            f"{_esc(fmt_rate(y))}</text>"
        )
    for x in xs:
        svg.append(
            f'<text x="{px(x):.1f}" y="{H - PAD_B + 14}" font-size="11" '
            f'text-anchor="middle">{x}</text>'
        )
    svg.append(
        f'<text x="{(PAD_L + W - PAD_R) / 2}" y="{H - 2}" font-size="11" '
        'text-anchor="middle">pairs</text>'
    )
    for b, pts in sorted(lines, key=lambda bp: bool(bp[0].flags)):  # outliers drawn on top
        colour, width = ("#c00000", 2) if b.flags else ("#9a9a9a", 1)
        svg.append(_polyline(pts, px, py, colour, width, f"{b.run.host} ({b.run.source})"))
        if b.flags:
            lx, ly = pts[-1]
            svg.append(
                f'<text x="{px(lx) + 6:.1f}" y="{py(ly) + 4:.1f}" font-size="11" '
                f'fill="#c00000">{_esc(b.run.host)}</text>'
            )
    median = [
        (x, statistics.median(y for _, pts in lines for px_, y in pts if px_ == x)) for x in xs
    ]
    svg.append(_polyline(median, px, py, "#1f5fbf", 3, "group median"))
    svg.append("</svg>")
    return f"<figure><figcaption>{_esc(curve)}: total ops/s</figcaption>{''.join(svg)}</figure>"


def _polyline(
    pts: Sequence[tuple[float, float]],
    px: Callable[[float], float],
    py: Callable[[float], float],
    colour: str,
    width: int,
    title: str,
) -> str:
    coords = " ".join(f"{px(x):.1f},{py(y):.1f}" for x, y in pts)
    dots = "".join(
        f'<circle cx="{px(x):.1f}" cy="{py(y):.1f}" r="{width + 1}" fill="{colour}"/>'
        for x, y in pts
    )
    return (
        f'<g><title>{_esc(title)}</title><polyline points="{coords}" fill="none" '
        f'stroke="{colour}" stroke-width="{width}"/>{dots}</g>'
    )
