"""Load sweeps as records: written by `sweep --groups/--rooms --json`, read back,
compared by load (groups or rooms, messages/s, hold %), refused against pairs."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from conftest import run_cli, two_cpus

from ipctop.engine.objects import _native
from ipctop.output.records.record_io import read_record

needs_native = pytest.mark.skipif(_native is None, reason="the native extension is not built")

HB = ("sweep", "-w", "hackbench", "--groups", "1,2", "--fds", "2", "--loops", "20",
      "--repeat", "3", "--mode", "threads")  # fmt: skip


@pytest.fixture(scope="module")
def hb_records(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """Two records of the HB sweep, measured once for the tests that read them: each
    test copies what it edits, so none sees another's changes."""
    d = tmp_path_factory.mktemp("hb")
    a, b = d / "a.json", d / "b.json"
    for path in (a, b):
        r = run_cli(*HB, "--json", str(path))
        assert r.returncode == 0, r.stderr
        assert f"record written to {path}" in r.stderr
    return a, b


def hb_record(hb_records: tuple[Path, Path], to: Path) -> Path:
    """The first HB record, copied to `to` for a test to read or edit."""
    shutil.copyfile(hb_records[0], to)
    return to


@needs_native
@two_cpus
def test_a_hackbench_load_sweep_is_a_record_compare_reads_by_groups(
    hb_records: tuple[Path, Path],
) -> None:
    a, b = hb_records
    rec = read_record(a)
    assert rec.config.workload == "hackbench" and rec.config.load_unit == "group"
    assert rec.config.messages_per_group == 2 * 2 * 20
    assert [s.pairs for s in rec.steps] == [1, 2]
    for step in rec.steps:
        assert len(step.windows) == 3  # one rate per fresh run: the run is the replicate
        # a run's time is messages / rate, the figure hackbench prints
        for rate in step.windows:
            seconds = step.pairs * rec.config.messages_per_group / rate
            assert 0 < seconds < 60
    r = run_cli("compare", str(a), str(b))
    assert r.returncode == 0, r.stderr
    head = r.stdout.splitlines()[1].split()
    assert head[:3] == ["groups", "msgs/s", "msgs/s"]
    assert "Hold [%] (messages/s against the lightest load's, 1 group)" in r.stdout
    assert "Scalability" not in r.stdout


@needs_native
@two_cpus
def test_a_load_record_is_not_compared_with_other_fds_or_a_pair_sweep(
    hb_records: tuple[Path, Path], tmp_path: Path
) -> None:
    a, b = hb_record(hb_records, tmp_path / "a.json"), tmp_path / "b.json"
    other = [*HB]
    other[other.index("--fds") + 1] = "3"
    assert run_cli(*other, "--json", str(b)).returncode == 0
    r = run_cli("compare", str(a), str(b))
    assert r.returncode == 2 and "fds 2 vs 3" in r.stderr and r.stderr.count("\n") == 1
    # a pair sweep's record that claims the same workload but no load unit
    d = json.loads(a.read_text())
    del d["config"]["load_unit"]
    b.write_text(json.dumps(d))
    r = run_cli("compare", str(a), str(b))
    assert r.returncode == 0 and "not recorded in both" in r.stdout and "load_unit" in r.stdout


@needs_native
@two_cpus
def test_a_chat_load_sweep_is_a_record_with_its_runs(tmp_path) -> None:
    path = tmp_path / "chat.json"
    r = run_cli(
        "sweep", "-w", "chat", "--rooms", "1", "--repeat", "2", "--seconds", "0.6",
        "--warmup", "0.3", "--transport", "unix", "--json", str(path),
    )  # fmt: skip
    assert r.returncode == 0, r.stderr
    rec = read_record(path)
    assert rec.config.load_unit == "room" and rec.config.transport == "unix"
    assert rec.config.seconds == 0.6 and rec.config.repeat == 2
    (step,) = rec.steps
    assert step.pairs == 1 and len(step.windows) == 2 and all(w > 0 for w in step.windows)


def test_a_load_record_path_that_cannot_be_written_is_refused_before_any_run(tmp_path) -> None:
    r = run_cli(*HB, "--json", str(tmp_path / "no" / "such" / "dir" / "a.json"))
    assert r.returncode == 2 and "--json" in r.stderr and r.stderr.count("\n") == 1
    assert "groups" not in r.stdout  # no table: nothing ran


@needs_native
@two_cpus
def test_a_load_record_replays_as_rate_by_load_against_a_flat_ideal(
    hb_records: tuple[Path, Path], tmp_path: Path
) -> None:
    import asyncio
    import time

    from ipctop.live.replay_source import ReplaySource
    from ipctop.tui.app import IpctopApp
    from ipctop.tui.widgets.scaling_panel import ScalingPanel
    from ipctop.tui.widgets.text_block import TextBlock

    path = hb_record(hb_records, tmp_path / "a.json")
    replay = ReplaySource(read_record(path), speed=1000.0)

    async def play() -> None:
        app = IpctopApp(replay)
        async with app.run_test(size=(120, 40)) as pilot:
            deadline = time.monotonic() + 30
            while sorted(p.pairs for p in app.session.points() if p.settled) != [1, 2]:
                assert time.monotonic() < deadline, "the two loads never settled in the replay"
                await pilot.pause(0.05)
            app.redraw_now()
            await pilot.pause()
            panel = app.query_one(ScalingPanel)
            assert panel.unit == "group"
            table = panel.query_one("#scaling-table", TextBlock)
            text = str(table.render())
            assert text.split("\n")[0].split()[:2] == ["groups", "msgs/s"] and "hold %" in text

    asyncio.run(play())


# -- replay shows a load record's groups and rooms, one row each, as the monitor does ---


def _replayed_rows(path) -> tuple[str, list[str], str]:
    """Play a record to its end; the threads panel's subtitle, rows and heading."""
    import asyncio
    import time

    from ipctop.live.replay_source import ReplaySource
    from ipctop.tui.app import IpctopApp
    from ipctop.tui.widgets.threads_panel import ThreadsPanel

    replay = ReplaySource(read_record(path), speed=1000.0)
    out: list = []

    async def play() -> None:
        app = IpctopApp(replay)
        async with app.run_test(size=(120, 40)) as pilot:
            deadline = time.monotonic() + 30
            while not replay.finished:
                assert time.monotonic() < deadline, "the replay never finished"
                await pilot.pause(0.05)
            await pilot.pause(0.2)
            app.redraw_now()
            await pilot.pause()
            panel = app.query_one(ThreadsPanel)
            width = panel.text_width
            rows = [
                "".join(text for text, _ in panel.row(i, width)[0])
                for i in range(panel.row_count())
            ]
            out.extend([str(panel.border_subtitle), rows, panel.heading(width)])

    try:
        asyncio.run(play())
    finally:
        replay.stop()
    return out[0], out[1], out[2]


@needs_native
@two_cpus
def test_a_hackbench_sweep_record_replays_with_one_row_per_group(tmp_path) -> None:
    path = tmp_path / "hb.json"
    r = run_cli(*HB[:4], "1,3", *HB[5:], "--json", str(path))
    assert r.returncode == 0, r.stderr
    rec = read_record(path)
    assert [len(s.units) for s in rec.steps] == [1, 3]
    for step in rec.steps:
        # the median run's groups: each its 2F ends, its messages over its own time
        assert [u.unit for u in step.units] == list(range(step.pairs))
        assert all(u.ends == 4 and u.ops_per_s > 0 and u.cpus for u in step.units)
    subtitle, rows, heading = _replayed_rows(path)
    assert heading.split()[:2] == ["group", "cpus"]
    assert subtitle.startswith("3 groups, 12 threads")
    assert [row.split()[0] for row in rows] == ["0", "1", "2"]
    last = rec.steps[-1]
    shares = [u.ops_per_s / sum(v.ops_per_s for v in last.units) for u in last.units]
    for row, unit, share in zip(rows, last.units, shares, strict=True):
        assert row.split()[1] == ",".join(map(str, unit.cpus)).replace("0,1", "0-1")
        assert row.rstrip().endswith(f"{100 * share:5.1f}%")


@needs_native
@two_cpus
def test_a_chat_sweep_record_replays_with_one_row_per_room(tmp_path) -> None:
    path = tmp_path / "chat.json"
    r = run_cli(
        "sweep", "-w", "chat", "--rooms", "2", "--repeat", "1", "--seconds", "0.5",
        "--warmup", "0.2", "--transport", "unix", "--json", str(path),
    )  # fmt: skip
    assert r.returncode == 0, r.stderr
    (step,) = read_record(path).steps
    assert [(u.unit, u.ends) for u in step.units] == [(0, 80), (1, 80)]
    # a run's rooms are its ends summed by room: together the run's total
    assert sum(u.ops_per_s for u in step.units) == pytest.approx(step.total_ops_per_s, rel=1e-6)
    subtitle, rows, heading = _replayed_rows(path)
    assert heading.split()[:2] == ["room", "cpus"]
    assert subtitle.startswith("2 rooms, 160 threads")
    assert [row.split()[0] for row in rows] == ["0", "1"]


@needs_native
@two_cpus
def test_a_load_record_from_before_units_still_reads_and_replays(
    hb_records: tuple[Path, Path], tmp_path: Path
) -> None:
    path = hb_record(hb_records, tmp_path / "old.json")
    d = json.loads(path.read_text())
    for step in d["steps"]:
        del step["units"]
    path.write_text(json.dumps(d))
    rec = read_record(path)
    assert all(s.units == [] for s in rec.steps)
    subtitle, rows, _ = _replayed_rows(path)
    assert rows == [] and subtitle.startswith("0 groups")  # nothing kept, nothing invented


@needs_native
@two_cpus
def test_a_recorded_live_hackbench_session_replays_its_groups(tmp_path) -> None:
    import asyncio
    import os
    import time

    from ipctop.engine.config import RunConfig
    from ipctop.live.sources import LiveSource
    from ipctop.tui.app import IpctopApp

    path = tmp_path / "session.json"
    cpus = tuple(sorted(os.sched_getaffinity(0))[:2])
    source = LiveSource(RunConfig(workload="hackbench", cpus=cpus, fds=2), interval=0.2)
    source.open(2)

    async def record() -> None:
        app = IpctopApp(source, record=str(path))
        async with app.run_test(size=(120, 40)) as pilot:
            rec = app.recording.recorder
            assert rec is not None
            deadline = time.monotonic() + 30
            while rec.samples < 4:
                assert time.monotonic() < deadline, "four samples never came"
                await pilot.pause(0.05)
            await pilot.press("R")
            while app.recording.active:
                assert time.monotonic() < deadline, "the recording never stopped"
                await pilot.pause(0.05)

    asyncio.run(record())
    rec = read_record(path)
    assert rec.kind == "session" and rec.config.workload == "hackbench"
    subtitle, rows, heading = _replayed_rows(path)
    assert heading.split()[0] == "group" and subtitle.startswith("2 groups, 8 threads")
    assert [row.split()[0] for row in rows] == ["0", "1"]
