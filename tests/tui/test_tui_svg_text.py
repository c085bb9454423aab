"""Issue 27, finding 23: a screenshot's words read apart in any viewer.

Read as a viewer that trims each <text> element read them (Python's strip()
counts U+00A0 as space): presentation mode said "regressionvs baseline" and
the footer "^ppa lette" at 120 columns. The monitor's screenshots (key S, and
screenshots/*.svg, made by the same call) are read that way here.
"""

from __future__ import annotations

import asyncio
import html
import re
from dataclasses import replace
from pathlib import Path

from conftest import ROOT
from handmade_records import handmade_sweep
from test_tui_snapshots import app, settle

from ipctop.analysis.scaling import ScalingPoint
from ipctop.live.baseline import load_baseline
from ipctop.live.fixed_run import fixed_source
from ipctop.output.records.record_io import write_record
from ipctop.tui.app import IpctopApp
from ipctop.tui.svg_text import tidy_svg

TEXT = re.compile(
    r"<text [^>]*?x=\"([0-9.]+)\" y=\"([0-9.]+)\" textLength=\"([0-9.]+)\"[^>]*>([^<]*)</text>"
)


def read_as_trimmed(svg: str) -> list[str]:
    """The screen's lines as a viewer that trims each element and places it at its x."""
    rows: dict[float, dict[int, str]] = {}
    cell = None
    for x, y, length, raw in TEXT.findall(svg):
        text = html.unescape(raw)
        cell = cell or float(length) / len(text)
        col = round(float(x) / cell)
        for i, ch in enumerate(text.strip()):
            rows.setdefault(float(y), {})[col + i] = " " if ch == "\xa0" else ch
    return [
        "".join(row.get(c, " ") for c in range(max(row) + 1)) for _, row in sorted(rows.items())
    ]


def shot(a: IpctopApp, tmp_path: Path, present: bool = False) -> list[str]:
    async def go() -> None:
        async with a.run_test(size=(120, 40)) as pilot:
            await settle(pilot)
            a.redraw_now()
            await pilot.pause(0.3)
            a.save_screenshot(filename="s.svg", path=str(tmp_path))

    asyncio.run(go())
    return read_as_trimmed((tmp_path / "s.svg").read_text())


def test_the_footer_s_keys_keep_their_spaces_at_120_columns(tmp_path: Path) -> None:
    # The footer shows only keys that fit whole (issue 28); trimmed, they stay apart.
    lines = shot(app(), tmp_path)
    assert " q quit  ? help  + add" in lines[-1], lines[-1]


def test_presentation_mode_s_verdict_keeps_its_space(tmp_path: Path) -> None:
    path = tmp_path / "base.json"
    write_record(path, handmade_sweep())
    wobble = (0.99, 1.01, 1.0, 0.98, 1.02, 1.0)
    # A baseline far above the fixed run at every pair count: a regression at any.
    far = tuple(ScalingPoint.from_repeats(n, [1e9], windows=[1e9 * w for w in wobble])
                for n in range(1, 9))  # fmt: skip
    base = replace(load_baseline(path), points=far)
    a = IpctopApp(fixed_source(), own_cpu=lambda _t: 1.4, baseline=base, present=True)
    lines = shot(a, tmp_path)
    verdict = [ln for ln in lines if "regression" in ln]
    assert verdict and re.search(r"regression\s+against baseline", verdict[0]), verdict


def test_the_committed_screenshots_read_whole() -> None:
    main = read_as_trimmed((Path(ROOT) / "screenshots" / "main.svg").read_text())
    assert not [ln for ln in main if "…" in ln], main
    footer = [ln for ln in main if "q quit" in ln]
    assert footer and footer[-1].rstrip().endswith("story"), main[-1]  # its last key whole
    present = read_as_trimmed((Path(ROOT) / "screenshots" / "present.svg").read_text())
    assert any("regression against baseline" in ln for ln in present), present[:12]
    assert not any("DEMO" in ln for ln in main + present)  # no demo band (issue 28)


def test_tidying_keeps_every_character_in_its_cell() -> None:
    svg = (Path(ROOT) / "screenshots" / "help.svg").read_text()
    tidy = tidy_svg(svg)
    assert "&#160;</text>" not in tidy and ">&#160;" not in tidy.split("<text", 1)[1]

    # Untrimmed, the picture's characters sit where they did.
    def cells(s: str) -> set[tuple[float, int, str]]:
        out = set()
        for x, y, length, raw in TEXT.findall(s):
            text = html.unescape(raw)
            cell = float(length) / len(text)
            out |= {(float(y), round(float(x) / cell) + i, ch)
                    for i, ch in enumerate(text) if ch not in " \xa0"}  # fmt: skip
        return out

    assert cells(tidy) == cells(svg)
