"""Make screenshots/*.svg from the real app on the real engine of this box.

    python screenshots/make_screenshots.py [--out screenshots] [--sweep-step 4]

main.svg: two pairs after a few seconds of history; scaling.svg: after an
auto-sweep from one pair to one pair per CPU; help.svg: the help screen.
Every figure on them is measured on the machine that runs this script.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
import time
from collections.abc import Callable
from pathlib import Path

from ipctop.cpus import default_cpus, read_topology
from ipctop.engine.config import EngineConfig
from ipctop.live.sources import LiveSource
from ipctop.tui.app import IpctopApp

SIZE = (120, 40)


async def wait_for(pilot, what: Callable[[], bool], why: str, timeout: float) -> None:
    deadline = time.monotonic() + timeout
    while not what():
        if time.monotonic() > deadline:
            raise SystemExit(f"make_screenshots: timed out waiting for {why}")
        await pilot.pause(0.1)


async def shoot(out: Path, name: str, pairs: int, act: Callable, theme: str | None = None) -> None:
    cpus = tuple(default_cpus(read_topology()))
    source = LiveSource(EngineConfig(cpus=cpus), interval=0.5)
    source.open(pairs)
    app = IpctopApp(source, theme=theme)
    try:
        async with app.run_test(size=SIZE) as pilot:
            await act(app, pilot, source)
            app.redraw_now()
            await pilot.pause(0.2)
            app.save_screenshot(filename=name, path=str(out))
            print(f"wrote {out / name}", file=sys.stderr)
    finally:
        source.stop()


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", default=str(Path(__file__).resolve().parent))
    ap.add_argument("--sweep-step", type=float, default=4.0)
    args = ap.parse_args()
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    ncpus = len(default_cpus(read_topology()))

    async def main_view(app, pilot, source) -> None:
        await pilot.pause(8.0)  # sparklines need some history

    async def scaling_view(app, pilot, source) -> None:
        app.sweep_step = args.sweep_step
        await pilot.pause(1.0)
        await pilot.press("s")
        await wait_for(pilot, lambda: not app.sweeping, "the sweep", 60.0 * ncpus)
        await wait_for(
            pilot,
            lambda: len([p for p in app.session.points() if p.settled]) >= min(ncpus, 2),
            "settled points",
            30.0,
        )

    async def help_view(app, pilot, source) -> None:
        await pilot.pause(2.0)
        await pilot.press("question_mark")
        await pilot.pause(0.5)

    async def run() -> None:
        await shoot(out, "main.svg", min(2, max(1, ncpus)), main_view)
        await shoot(out, "scaling.svg", 1, scaling_view)
        await shoot(out, "help.svg", 1, help_view)

    asyncio.run(run())
    return 0


if __name__ == "__main__":
    os.environ.setdefault("TEXTUAL_ANIMATIONS", "none")
    sys.exit(main())
