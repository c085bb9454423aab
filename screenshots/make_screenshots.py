"""Make screenshots/*.svg from the real app on the real engine of this box.

    unshare -i python screenshots/make_screenshots.py [--out screenshots]

One session tells the story a newcomer needs, a picture per step:
one_pair.svg (1 pair, the first settled reading), main.svg (a pair per CPU:
the curve against the ideal), detail.svg (where the time goes), baseline.svg
(cross placement against the same-core curve, with Diff %), present.svg
(presentation mode) and help.svg. The steps are `ipctop demo`'s, taken with
its keys, without its narration band. Every figure on them is measured on the
machine that runs this.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
import time
from collections.abc import Callable
from pathlib import Path

# Run as a script from a checkout (ipctop need not be installed): the repository is the path.
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from ipctop.cpus import default_cpus, read_topology  # noqa: E402
from ipctop.engine.config import RunConfig  # noqa: E402
from ipctop.live.sources import LiveSource  # noqa: E402
from ipctop.tui.demo_app import DemoApp  # noqa: E402

SIZE = (120, 40)
SETTLE_TIMEOUT = 60.0  # seconds a step may take to settle; then it is shot as it is


async def wait_for(pilot, what: Callable[[], bool], why: str, timeout: float) -> None:
    deadline = time.monotonic() + timeout
    while not what():
        if time.monotonic() > deadline:
            raise SystemExit(f"make_screenshots: timed out waiting for {why}")
        await pilot.pause(0.1)


async def settle_or_go_on(pilot, app: DemoApp, pairs: int) -> None:
    """Wait for a settled reading at `pairs`; on a loaded box, go on with a settling one.

    The picture then says "settling" where a figure is not settled: it never
    shows an unsettled reading as a settled one.
    """
    deadline = time.monotonic() + SETTLE_TIMEOUT
    while not settled_at(app, pairs)():
        if time.monotonic() > deadline:
            print(
                f"make_screenshots: {pairs} pair(s) did not settle; shot as they are",
                file=sys.stderr,
            )
            return
        await pilot.pause(0.1)


def settled_at(app: DemoApp, pairs: int) -> Callable[[], bool]:
    def check() -> bool:
        latest = app.session.latest
        points = [p.pairs for p in app.session.points() if p.settled]
        return latest is not None and latest.pairs == pairs and pairs in points

    return check


async def shoot(app: DemoApp, pilot, out: Path, name: str) -> None:
    # The pictures show the monitor a user gets from `ipctop`: the demo's keys
    # drive the story, but its narration band is not part of that screen.
    for band in app._bands():  # the monitor's, and presentation mode's when it is up
        band.display = False
    await pilot.pause(1.0)  # a second since the last reading: the footer's CPU % covers it
    app.redraw_now()
    await pilot.pause(0.3)
    app.save_screenshot(filename=name, path=str(out))
    print(f"wrote {out / name}", file=sys.stderr)


async def story(out: Path) -> None:
    cpus = tuple(default_cpus(read_topology()))
    source = LiveSource(RunConfig(cpus=cpus), interval=0.5)
    source.open(1)
    app = DemoApp(source, pace=3600.0)  # only the keys below move the story
    try:
        async with app.run_test(size=SIZE) as pilot:
            await settle_or_go_on(pilot, app, 1)
            await pilot.pause(4.0)  # sparklines need some history
            await shoot(app, pilot, out, "one_pair.svg")
            for n in range(2, len(cpus) + 1):
                await pilot.press("n")
                await wait_for(pilot, lambda n=n: source.pair_count() == n, f"pair {n}", 30.0)
                await settle_or_go_on(pilot, app, n)
            await pilot.pause(4.0)
            await shoot(app, pilot, out, "main.svg")
            await pilot.press("d")
            await pilot.pause(4.0)  # the costs need two samples of their own
            await shoot(app, pilot, out, "detail.svg")
            await pilot.press("d")
            await pilot.press("n")  # cross placement, the same-core curve as the baseline
            await wait_for(pilot, lambda: app.info.placement == "cross", "cross", 30.0)
            n = len(cpus)
            await settle_or_go_on(pilot, app, n)
            await shoot(app, pilot, out, "baseline.svg")
            await pilot.press("n")
            await shoot(app, pilot, out, "present.svg")
            await pilot.press("F")
            await pilot.press("question_mark")
            await shoot(app, pilot, out, "help.svg")
    finally:
        source.stop()


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", default=str(Path(__file__).resolve().parent))
    args = ap.parse_args()
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    asyncio.run(story(out))
    return 0


if __name__ == "__main__":
    os.environ.setdefault("TEXTUAL_ANIMATIONS", "none")
    sys.exit(main())
