"""Records in the monitor: record a live session, replay it, overlay a baseline.

Live parts run the real engine; the baseline test feeds hand-made samples
(FixedSource) so its Diff [%] values can be worked out by hand.
"""

from __future__ import annotations

import asyncio
import os
import threading
import time
from collections.abc import Awaitable, Callable
from pathlib import Path

import psutil
from conftest import made_here
from handmade_records import handmade_sweep

from ipctop.engine.config import RunConfig
from ipctop.engine.sample import Sample, ThreadSample
from ipctop.live.baseline import load_baseline
from ipctop.live.fixed_run import INFO
from ipctop.live.replay_source import ReplaySource
from ipctop.live.sources import FixedSource, LiveSource
from ipctop.output.records.record_io import read_record, write_record
from ipctop.tui.app import IpctopApp
from ipctop.tui.screens.prompts import PathInputScreen
from ipctop.tui.widgets.bands import BaselineBar
from ipctop.tui.widgets.scaling_panel import ScalingPlot
from ipctop.tui.widgets.spark import si
from ipctop.tui.widgets.threads_panel import ThreadsPanel

CPUS = tuple(sorted(os.sched_getaffinity(0))[:2])
TIMEOUT = 20.0


def run(coro: Awaitable[None]) -> None:
    asyncio.run(coro)  # type: ignore[arg-type]


async def wait_for(pilot, what: Callable[[], object], why: str) -> None:
    deadline = time.monotonic() + TIMEOUT
    while not what():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {why}")
        await pilot.pause(0.05)


def live(pairs: int = 1) -> LiveSource:
    source = LiveSource(RunConfig(cpus=CPUS), interval=0.2)
    source.open(pairs)
    return source


def pair_threads() -> list[str]:
    return [t.name for t in threading.enumerate() if t.name.startswith("ipctop-pair")]


def table_text(app: IpctopApp) -> str:
    return app.query_one("#scaling-table").text.plain  # type: ignore[attr-defined]


# -- record, then replay -------------------------------------------------------------


def test_record_then_replay_shows_the_recorded_numbers(tmp_path: Path) -> None:
    path = tmp_path / "session.json"
    source = live(1)
    seen: list[float] = []

    async def record() -> None:
        app = IpctopApp(source, record=str(path))
        async with app.run_test(size=(120, 40)) as pilot:
            rec = app.recording.recorder
            assert rec is not None, "--record starts recording at once"
            await wait_for(pilot, lambda: rec.samples >= 6, "six recorded samples")
            app.redraw_now()
            assert f"REC {path.name} (" in app.run_header.text.plain
            await pilot.press("R")
            await wait_for(pilot, lambda: not app.recording.active, "the recording to stop")
            assert "record saved to" in app.status_line.text.plain
            seen.extend(app.session.totals)

    run(record())
    rec = read_record(path)
    assert rec.kind == "session" and rec.interrupted is False
    assert rec.config.workload == "sysv-msg" and rec.config.cpus == tuple(CPUS)
    assert rec.box.kernel_release == os.uname().release
    n = len(rec.timeline)
    assert n >= 6
    # The recorder took the very samples the screen took in, from the first on.
    assert [s.total_ops_per_s for s in rec.timeline] == seen[:n]
    last = rec.timeline[-1]
    assert last.total_ops_per_s > 0

    replay = ReplaySource(read_record(path), speed=20.0)

    async def play() -> None:
        app = IpctopApp(replay)
        async with app.run_test(size=(120, 40)) as pilot:
            await wait_for(pilot, lambda: app.session.count == n, "every recorded sample")
            await pilot.pause(0.3)
            app.redraw_now()
            await pilot.pause()
            header = app.run_header.text.plain
            assert f"total {si(last.total_ops_per_s)} ops/s" in header, header
            assert "REPLAY session.json" in header and "replay finished" in header
            rows = app.query_one(ThreadsPanel)
            width = rows.text_width
            for i, t in enumerate(sorted(last.threads, key=lambda t: (t.pair, t.role))):
                pieces, _ = rows.row(i, width)
                assert si(t.ops_per_s) in "".join(text for text, _ in pieces)
            assert app.session.count == n, "the replay stays on the last frame"

    run(play())


def test_key_r_names_the_file_itself_and_ctrl_c_marks_it_interrupted(tmp_path: Path) -> None:
    source = live(1)

    async def go() -> None:
        app = IpctopApp(source, screenshot_dir=str(tmp_path))
        async with app.run_test(size=(120, 40)) as pilot:
            await pilot.press("R")
            rec = app.recording.recorder
            assert rec is not None
            await wait_for(pilot, lambda: rec.samples >= 3, "three recorded samples")
            await pilot.press("ctrl+c")
            await wait_for(pilot, lambda: not app.is_running, "the app to exit")

    run(go())
    (path,) = tmp_path.glob("ipctop-sysv-msg-*.json")
    rec = read_record(path)
    assert rec.interrupted is True and len(rec.timeline) >= 3
    assert [p.name for p in tmp_path.iterdir()] == [path.name], "no temporary file left"


def test_q_saves_a_recording_in_progress_not_interrupted(tmp_path: Path) -> None:
    source = live(1)
    path = tmp_path / "q.json"

    async def go() -> None:
        app = IpctopApp(source, record=str(path))
        async with app.run_test(size=(120, 40)) as pilot:
            rec = app.recording.recorder
            assert rec is not None
            await wait_for(pilot, lambda: rec.samples >= 2, "two recorded samples")
            await pilot.press("q")
            await wait_for(pilot, lambda: not app.is_running, "the app to exit")

    run(go())
    rec = read_record(path)
    assert rec.interrupted is False and len(rec.timeline) >= 2


# -- replay starts nothing -------------------------------------------------------------


def test_replay_of_a_sweep_starts_no_workers_and_shows_its_curve(tmp_path: Path) -> None:
    path = tmp_path / "sweep.json"
    write_record(path, handmade_sweep())
    threads_before = {t.ident for t in threading.enumerate()}
    # An earlier test killed by its timeout may have left zombies: only what the replay makes.
    children_before = {c.pid for c in psutil.Process().children()}
    source = ReplaySource(read_record(path), speed=1000.0)

    async def go() -> None:
        app = IpctopApp(source)
        async with app.run_test(size=(120, 40)) as pilot:
            await wait_for(pilot, lambda: source.finished, "the end of the replay")
            await wait_for(pilot, lambda: app.session.count == len(source.samples), "every sample")
            await pilot.press("plus")  # after the end: "replay finished" would overwrite its answer
            app.redraw_now()
            await pilot.pause()
            header = app.run_header.text.plain
            assert "REPLAY sweep.json" in header and "replay finished" in header
            assert "kernel 5.10.0-handmade" in header
            points = [(p.pairs, p.total_ops_per_s, p.settled) for p in app.session.points()]
            assert points == [(1, 400_000.0, True), (2, 1_000_000.0, True)]
            assert "cannot add a pair" in app.status_line.text.plain
            # Nothing of a benchmark exists, even mid-app.
            assert not hasattr(source, "engine")
            assert pair_threads() == []
            assert [c for c in psutil.Process().children() if c.pid not in children_before] == []
            # Of this process only: other runs on a shared box make and remove theirs.
            assert made_here() == (set(), set())
            new = {t.name for t in threading.enumerate() if t.ident not in threads_before}
            assert not any(name.startswith("ipctop-pair") for name in new), new

    run(go())


# -- baselines ---------------------------------------------------------------------------


def steady_samples() -> list[Sample]:
    """1 pair at 500k ops/s, then 2 pairs at 900k, each long enough to settle (hand-made)."""
    out = []
    t = 0.0
    for pairs, total in ((1, 500_000.0), (2, 900_000.0)):
        for _ in range(12):
            t += 0.5
            threads = tuple(
                ThreadSample(
                    p, r, 100 + 2 * p + (r == "B"), p, p, int(t * 1000), total / (2 * pairs)
                )
                for p in range(pairs)
                for r in ("A", "B")
            )
            out.append(Sample(t=t, dt=0.5, pairs=pairs, threads=threads, total_ops_per_s=total))
    return out


def test_baseline_overlay_gives_exact_diffs_and_names_its_box(tmp_path: Path) -> None:
    path = tmp_path / "old-kernel.json"
    write_record(path, handmade_sweep(workload="sysv-sem"))
    source = FixedSource(steady_samples(), INFO)

    async def go() -> None:
        app = IpctopApp(source, baseline=load_baseline(path), own_cpu=lambda _t: 1.0)
        async with app.run_test(size=(120, 40)) as pilot:
            await wait_for(pilot, lambda: app.session.count == 24, "every sample")
            app.redraw_now()
            await pilot.pause()
            table = table_text(app)
            rows = {line.split()[0]: line.split() for line in table.splitlines()[1:]}
            # (500k - 400k) / 400k = +25 %; (900k - 1M) / 1M = -10 %.
            assert "diff %" in table.splitlines()[0]
            assert rows["1"][4] == "+25.0" and rows["2"][4] == "-10.0", table
            bar = app.query_one(BaselineBar)
            assert bar.display
            line = bar.text.plain
            assert "kernel 5.10.0-handmade" in line and "Handmade CPU @ 1.00GHz" in line
            assert "differs: workload sysv-sem" in line
            plot = app.query_one(ScalingPlot).plt.build()
            # Named by what differs from this run: its workload, and here its kernel too.
            assert "baseline workload sysv-sem, kernel 5.10.0-handmade" in plot

            # b hides it; b again offers the same file; enter brings it back.
            await pilot.press("b")
            await pilot.pause()
            app.redraw_now()
            assert "diff %" not in table_text(app) and not bar.display
            await pilot.press("b")
            await wait_for(pilot, lambda: isinstance(app.screen, PathInputScreen), "the prompt")
            assert app.screen.query_one("#path").value == str(path)
            await pilot.press("enter")
            await wait_for(pilot, lambda: app.baseline is not None, "the baseline again")
            app.redraw_now()
            assert "+25.0" in table_text(app)

    run(go())


def test_key_b_with_a_bad_file_says_so_and_keeps_running(tmp_path: Path) -> None:
    bad = tmp_path / "cut.json"
    bad.write_text('{"schema": "ipctop.record/1", "kind": "sw')
    source = FixedSource(steady_samples(), INFO)

    async def go() -> None:
        app = IpctopApp(source, own_cpu=lambda _t: 1.0)
        async with app.run_test(size=(120, 40)) as pilot:
            await pilot.press("b")
            await wait_for(pilot, lambda: isinstance(app.screen, PathInputScreen), "the prompt")
            field = app.screen.query_one("#path")
            field.value = str(bad)
            await pilot.press("enter")
            await wait_for(pilot, lambda: "no baseline" in app.status_line.text.plain, "a message")
            assert "cut.json is truncated or not JSON" in app.status_line.text.plain
            assert app.baseline is None and app.is_running

    run(go())
