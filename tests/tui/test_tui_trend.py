"""A rate that keeps climbing or falling is shown as such: "rising" or "falling" in
the header and in the scaling table's row of the point, never "settling" (issue 23).

The samples are planted (FixedSource, as the snapshot tests): a real run on a
2-CPU box shared with other tests cannot be made to climb steadily on purpose,
its trend is whatever the box's load does. The series is the settle tests'
steady climb (tests/stats/test_settle.py: 3 % a second, 0.3 % noise) and its
mirror image, 30 s of 0.5 s samples at 1 pair.
"""

from __future__ import annotations

import asyncio
import math
import random

import pytest
from test_tui_records import table_text, wait_for

from ipctop.analysis.settle import FALLING, RISING
from ipctop.engine.sample import Sample, ThreadSample
from ipctop.live.fixed_run import INFO
from ipctop.live.sources import FixedSource
from ipctop.tui.app import IpctopApp

SAMPLES = 60


def planted(sign: int) -> list[Sample]:
    """1 pair at 400k ops/s, times 1.03 a second (sign 1) or divided by it (sign -1)."""
    rng = random.Random(1)
    out = []
    for i in range(SAMPLES):
        t = (i + 1) * 0.5
        total = 400_000.0 * 1.03 ** (sign * t) * math.exp(rng.gauss(0, 0.003))
        threads = tuple(
            ThreadSample(0, r, 100 + (r == "B"), 0, 0, int(t * 1000), total / 2) for r in "AB"
        )
        out.append(Sample(t=t, dt=0.5, pairs=1, threads=threads, total_ops_per_s=total))
    return out


@pytest.mark.parametrize(("sign", "word"), [(1, RISING), (-1, FALLING)])
def test_a_steady_climb_or_fall_is_named_in_the_header_and_the_table(sign: int, word: str) -> None:
    source = FixedSource(planted(sign), INFO)

    async def go() -> None:
        app = IpctopApp(source, own_cpu=lambda _t: 1.0)
        async with app.run_test(size=(160, 40)) as pilot:
            await wait_for(pilot, lambda: app.session.count == SAMPLES, "every sample")
            app.redraw_now()
            await pilot.pause()
            # The model's word first: the screen is then asked to say it.
            assert app.session.settle_state == word
            (point,) = app.session.points()
            assert not point.settled  # a trend never settles: no settled figure hides the word
            header = app.run_header.text.plain
            assert f"· {word}" in header and "settling" not in header, header
            row = table_text(app).splitlines()[1].split()
            assert row[0] == "1" and row[-1] == word, table_text(app)

    asyncio.run(go())
