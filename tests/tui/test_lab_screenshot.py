"""The monitor on the lab's 64-CPU guest, as the README shows it: screenshots/monitor-64cpu-*.svg.

tests/lab/test_guest_monitor.py took them inside a 64-CPU TCG guest (2 sockets x
16 cores x 2 threads, 2 NUMA nodes, Debian's 6.1 kernel; bench/lab_session.py's
monitor-120x40 and monitor-80x24 steps, 2026-12-06); the rates on them are
emulation. Read as any viewer reads them (test_tui_svg_text.read_as_trimmed):
every line whole, the header naming the guest's kernel, and the CPUs panel
listing CPUs from 0 on, in order, with the way to every CPU (c) on its border.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from conftest import ROOT
from test_tui_svg_text import read_as_trimmed

# The CPUs panel's rows ("cpu  0 ● ", right-aligned), not the IPI rows ("cpu0      ").
CPU_ROW = re.compile(r"│cpu( {2}\d| \d{2}|\d{3}) [● ] ")


@pytest.mark.parametrize(("width", "height"), [(120, 40), (80, 24)])
def test_the_64_cpu_screenshot_reads_whole_with_cpus_listed_in_order(
    width: int, height: int
) -> None:
    shot = Path(ROOT) / "screenshots" / f"monitor-64cpu-{width}x{height}.svg"
    lines = read_as_trimmed(shot.read_text())
    assert len(lines) == height and max(len(ln) for ln in lines) <= width, len(lines)
    assert not [ln for ln in lines if "…" in ln], lines
    assert "kernel 6.1.0-" in lines[0], lines[0]  # the guest's kernel, not the host's
    assert "/64 CPUs" in lines[1], lines[1]
    rows = [int(m[1]) for ln in lines if (m := CPU_ROW.search(ln))]
    assert len(rows) >= 4 and rows == list(range(len(rows))), rows
    assert any("all CPUs (c)" in ln for ln in lines), lines  # every CPU, not the run's
    assert "q quit" in lines[-1], lines[-1]
