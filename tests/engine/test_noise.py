"""Noise explained (issue 23, item 8): steal, PSI and the clock per CPU and window.

Steal cannot be produced on demand (only a hypervisor steals), nor can a
cpufreq clock in a VM without one: those readers are tested on fake /proc
and sysfs trees, named so. The sampler, `ipctop run` and the TUI then read
the real box, or carry planted samples through the real code paths.
"""

from __future__ import annotations

import asyncio
import json
import os
import time
from dataclasses import replace
from pathlib import Path

import pytest
from conftest import run_cli
from handmade_records import handmade_sweep

from ipctop.analysis.noise import (
    STEAL_MARK_PCT,
    StepNoise,
    is_stolen,
    noise_words,
    record_noise,
    record_note,
    summary_line,
    window_noise,
)
from ipctop.commands import run as run_cmd
from ipctop.engine import procfs
from ipctop.engine.config import RunConfig
from ipctop.engine.engine import Engine
from ipctop.engine.sample import CpuSample, Sample, ThreadSample
from ipctop.engine.sampler import Sampler
from ipctop.live.fixed_run import INFO, fixed_samples
from ipctop.live.sources import FixedSource
from ipctop.output.records.record import Record
from ipctop.plain import from_plain

CPUS = tuple(sorted(os.sched_getaffinity(0)))


def _fake_proc(root: Path, cpu_lines: list[str], psi_total: int | None = None) -> str:
    """A fake /proc with /proc/stat (and /proc/pressure/cpu when psi_total is given)."""
    root.mkdir(parents=True, exist_ok=True)
    (root / "stat").write_text("cpu  0 0 0 0 0 0 0 0 0 0\n" + "\n".join(cpu_lines) + "\nctxt 1\n")
    if psi_total is not None:
        (root / "pressure").mkdir(exist_ok=True)
        (root / "pressure" / "cpu").write_text(
            f"some avg10=1.00 avg60=0.50 avg300=0.10 total={psi_total}\n"
            "full avg10=0.00 avg60=0.00 avg300=0.00 total=0\n"
        )
    return str(root)


def test_fake_proc_stat_steal_per_cpu(tmp_path: Path) -> None:
    # cpu0: 200 ticks, none stolen; cpu1: 200 ticks, 24 stolen (12 %); cpu2 has no
    # steal column at all (a kernel before 2.6.11): it reads as 0, never as a crash.
    before = _fake_proc(
        tmp_path / "proc_steal_fake_0",
        ["cpu0 100 0 50 800 0 0 0 0 0 0", "cpu1 100 0 50 800 0 0 0 10 0 0", "cpu2 1 1 1 1"],
    )
    after = _fake_proc(
        tmp_path / "proc_steal_fake_1",
        ["cpu0 200 0 100 850 0 0 0 0 0 0", "cpu1 180 0 70 876 0 0 0 34 0 0", "cpu2 2 2 2 2"],
    )
    a, b = procfs.read_cpu_ticks(before), procfs.read_cpu_ticks(after)
    assert (a[1].steal, b[1].steal, b[2].steal) == (10, 34, 0)
    steal = procfs.steal_percent(a, b)
    assert steal[0] == 0.0
    assert steal[1] == pytest.approx(12.0)
    assert steal[2] == 0.0
    # A CPU in one reading only (came online) has nothing to divide by.
    assert 0 not in procfs.steal_percent({}, b)


def test_fake_pressure_total_and_missing(tmp_path: Path) -> None:
    with_psi = _fake_proc(tmp_path / "proc_psi_fake", ["cpu0 1 0 0 1"], psi_total=123456)
    assert procfs.cpu_pressure_total_us(with_psi) == 123456.0
    without = _fake_proc(tmp_path / "proc_no_psi_fake", ["cpu0 1 0 0 1"])
    assert procfs.cpu_pressure_total_us(without) is None


def test_fake_cpufreq_sysfs_gives_mhz(tmp_path: Path) -> None:
    # This VM has no cpufreq: a fake sysfs with it on cpu0 and cpu2, not on cpu1.
    sysfs = tmp_path / "sys_cpufreq_fake"
    for cpu, khz in ((0, "2400000\n"), (2, "800000\n")):
        (sysfs / f"cpu{cpu}" / "cpufreq").mkdir(parents=True)
        (sysfs / f"cpu{cpu}" / "cpufreq" / "scaling_cur_freq").write_text(khz)
    (sysfs / "cpu1").mkdir()
    (sysfs / "cpufreq").mkdir()  # the policy directory is not a CPU
    cpus = procfs.cpufreq_cpus(str(sysfs))
    assert cpus == (0, 2)
    assert procfs.read_cpu_mhz(cpus, str(sysfs)) == {0: 2400.0, 2: 800.0}
    assert procfs.cpufreq_cpus(str(tmp_path / "no_sysfs_fake")) == ()


def test_real_sampler_reads_steal_and_pressure_of_every_cpu() -> None:
    cpus = CPUS[:1]
    with Engine(RunConfig(workload="sysv-sem", cpus=cpus)) as engine:
        engine.start(1)
        sampler = Sampler(engine, interval=0.2)
        time.sleep(0.3)
        s = sampler.sample()
    online = set(procfs.read_cpu_ticks())
    assert {c.cpu for c in s.cpus} <= online and cpus[0] in {c.cpu for c in s.cpus}
    for c in s.cpus:
        # This kernel's /proc/stat has the steal column: known, a share of the window.
        assert c.steal is not None and 0.0 <= c.steal <= 100.0
        assert c.mhz is None or c.mhz > 0
    if procfs.missing_reason("cpu_pressure") is None:
        assert s.cpu_pressure_pct is not None and 0.0 <= s.cpu_pressure_pct <= 100.0
    else:
        assert s.cpu_pressure_pct is None


def _planted(steal: dict[int, float | None], pressure: float | None = 30.0) -> Sample:
    """A sample of one pair bound to CPUs 0 and 1, with the steal given per CPU."""
    threads = tuple(
        ThreadSample(0, role, 100 + i, i, i, 1000, 2000.0) for i, role in enumerate("AB")
    )
    cpus = tuple(CpuSample(c, 20.0, 50.0, 1.0, 29.0, steal=v, mhz=None) for c, v in steal.items())
    return Sample(1.0, 0.5, 1, threads, 4000.0, cpus=cpus, cpu_pressure_pct=pressure)


def test_marking_rule_is_strictly_over_the_stated_share_on_the_worst_run_cpu() -> None:
    assert STEAL_MARK_PCT == 5.0
    assert not is_stolen(None) and not is_stolen(5.0) and is_stolen(5.1)
    # cpu3 hosts no pair: its steal is not the run's, however large.
    n = window_noise(_planted({0: 0.5, 1: 7.0, 3: 40.0}), cpus={0, 1})
    assert (n.steal_pct, n.steal_cpu, n.stolen, n.pressure_pct) == (7.0, 1, True, 30.0)
    quiet = window_noise(_planted({0: 0.5, 1: 5.0, 3: 40.0}), cpus={0, 1})
    assert not quiet.stolen and quiet.steal_pct == 5.0
    old = window_noise(_planted({0: None, 1: None}, pressure=None), cpus={0, 1})
    assert (old.steal_pct, old.stolen, noise_words(old)) == (None, False, [])
    line = summary_line([_planted({0: 0.5, 1: 7.0}), _planted({0: 1.0, 1: 2.0})])
    assert line is not None and line.startswith("steal max 7.0 % (cpu1), 1 of 2 window(s)")


def test_samples_and_records_without_the_fields_still_read() -> None:
    s = _planted({0: 6.0, 1: None}, pressure=None)
    d = s.to_dict()
    assert d["cpus"][0]["steal"] == 6.0 and "steal" not in d["cpus"][1]
    assert "mhz" not in d["cpus"][0] and "cpu_pressure_pct" not in d
    assert Sample.from_dict(d) == s
    # A session record written before these fields: its CPUs read as "not said".
    record = Record(kind="session", box={}, config=_config(), timeline=[fixed_samples()[0]])
    old = record.to_dict()
    assert all("steal" not in c for c in old["timeline"][0]["cpus"])
    back = Record.from_dict(old)
    assert back.timeline[0].cpus[0].steal is None and back.timeline[0].cpu_pressure_pct is None
    new = Record(kind="session", box={}, config=_config(), timeline=[s])
    assert Record.from_dict(new.to_dict()).timeline[0] == s


def _config():
    return RunConfig(cpus=(0, 1)).as_run("native", interval=0.5)


def test_run_line_shows_steal_psi_and_marks_a_stolen_window(capsys) -> None:
    run_cmd._line(_planted({0: 0.4, 1: 6.25, 2: 50.0}))
    line = capsys.readouterr().out.strip()
    assert "steal=6.2% psi=30%" in line  # cpu2 hosts no pair: not the run's steal
    assert line.endswith(f"STOLEN(cpu1>{STEAL_MARK_PCT:g}%)")
    run_cmd._line(_planted({0: 0.4, 1: 1.0}))
    line = capsys.readouterr().out.strip()
    assert "steal=1.0%" in line and "STOLEN" not in line


def test_real_run_prints_steal_on_every_line_and_a_noise_summary() -> None:
    r = run_cli("run", "-w", "sysv-sem", "--cpus", str(CPUS[0]), "--seconds", "1")
    assert r.returncode in (0, 1), r.stderr  # 1: the loaded box stalled the pair (said)
    lines = [x for x in r.stdout.splitlines() if x.startswith("t=")]
    assert lines and all(" steal=" in x for x in lines)
    [summary] = [x for x in r.stdout.splitlines() if x.startswith("# noise: ")]
    assert f"over {STEAL_MARK_PCT:g} % marked STOLEN" in summary


def _noisy_source() -> FixedSource:
    """The fixed run with steal and PSI planted: 12 % stolen from cpu1 in the last samples."""
    samples = fixed_samples()
    out = []
    for i, s in enumerate(samples):
        late = i >= len(samples) - 3
        cpus = tuple(
            replace(c, steal=12.0 if (late and c.cpu == 1) else 0.5, mhz=None) for c in s.cpus
        )
        out.append(replace(s, cpus=cpus, cpu_pressure_pct=40.0))
    return FixedSource(out, INFO, monitor_cpu=3)


def test_tui_cpus_and_detail_panels_show_and_mark_steal() -> None:
    from ipctop.tui.app import IpctopApp
    from ipctop.tui.widgets.cpus_panel import CpusPanel
    from ipctop.tui.widgets.detail_panel import DetailPanel

    source = _noisy_source()
    app = IpctopApp(source, own_cpu=lambda _tids: 1.0)

    async def go() -> None:
        async with app.run_test(size=(120, 40)) as pilot:
            for _ in range(400):
                if app.session.count >= len(source.samples):
                    break
                await pilot.pause(0.01)
            app.redraw_now()
            panel = app.query_one(CpusPanel)
            assert "stl" in panel.heading(80) and "MHz" not in panel.heading(80)
            rows = {panel.row(i, 80)[0][0][0].strip(): panel.row(i, 80)[0] for i in range(4)}
            stolen = rows["cpu  1"][-1]
            assert stolen == (" 12.0!", "flag")
            assert rows["cpu  0"][-1] == ("  0.5 ", None)
            # At 80x24 the panel is 30 wide: steal gives way, nothing is cut (lab, 64 CPUs).
            for width in (27, 30, 32, 33):
                text = "".join(t for t, _ in panel.row(1, width)[0])
                assert len(text) <= width and len(panel.heading(width)) <= width, width
                assert ("12.0!" in text) == (width >= 33), width
            assert "PSI 40 %" in str(panel.border_subtitle)
            assert f"steal > {STEAL_MARK_PCT:g} % on cpu1" in str(panel.border_subtitle)
            await pilot.press("d")
            app.redraw_now()
            await pilot.pause(0.1)
            detail = app.query_one(DetailPanel)
            first = detail.row(0, 200)
            assert first[1] == "flag"
            assert first[0][0][0].startswith("! this window: steal max 12.0 % (cpu1)")
            assert "CPU pressure (PSI some) 40 %" in first[0][0][0]
            assert "clock n/a (no cpufreq)" in first[0][0][0]

    asyncio.run(go())


def test_record_noise_is_aligned_with_the_windows_and_absent_when_unsaid() -> None:
    windows = [
        window_noise(_planted({0: 0.5, 1: 7.0}), {0, 1}),
        window_noise(_planted({0: 0.1, 1: 0.2}, pressure=None), {0, 1}),
    ]
    d = record_noise(windows)
    assert d is not None and d.to_dict() == {
        "mark_pct": STEAL_MARK_PCT,
        "stolen_windows": 1,
        "steal_pct": [7.0, 0.2],
        "pressure_pct": [30.0, None],
    }
    assert from_plain(StepNoise, d.to_dict()) == d
    note = record_note(d)
    assert note is not None and note.startswith("noise: 1 of 2 window(s) had over 5 %")
    assert record_note(replace(d, stolen_windows=0)) is None
    unsaid = window_noise(_planted({0: None, 1: None}, pressure=None), {0, 1})
    assert record_noise([unsaid]) is None


def test_real_sweep_records_each_windows_steal(tmp_path: Path) -> None:
    out = tmp_path / "sweep.json"
    r = run_cli(
        "sweep", "-w", "sysv-sem", "--cpus", str(CPUS[0]), "--max-pairs", "1",
        "--seconds", "0.5", "--warmup", "0", "--repeat", "2", "--json", str(out),
    )  # fmt: skip
    assert r.returncode == 0, r.stderr
    rec = Record.from_dict(json.loads(out.read_text()))
    [step] = rec.steps
    assert step.noise is not None and step.noise.mark_pct == STEAL_MARK_PCT
    assert len(step.noise.steal_pct) == len(step.windows) > 0
    assert all(v is not None and 0.0 <= v <= 100.0 for v in step.noise.steal_pct)
    marked = sum(is_stolen(v) for v in step.noise.steal_pct)
    assert step.noise.stolen_windows == marked
    assert ("had over 5 % of a CPU stolen" in r.stdout) == (marked > 0)
    # The record written before this field still reads: the key is optional.
    old = rec.to_dict()
    del old["steps"][0]["noise"]
    assert Record.from_dict(old).steps[0].noise is None


@pytest.mark.parametrize(
    "bad",
    [
        {"steal_pct": [float("nan")]},
        {"pressure_pct": [1e308]},
        {"mhz": [-1.0]},
        {"stolen_windows": 5},
    ],  # fmt: skip
)
def test_a_hand_edited_noise_is_refused_in_one_line(bad: dict, tmp_path: Path) -> None:
    noise = {"mark_pct": 5.0, "stolen_windows": 0, "steal_pct": [0.1], "pressure_pct": [2.0]}
    step = {"pairs": 1, "total_ops_per_s": 1000.0, "windows": [1000.0], "noise": noise | bad}
    doc = handmade_sweep().to_dict() | {"steps": [step]}
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(doc))
    r = run_cli("compare", str(path), str(path))
    assert r.returncode == 2 and r.stderr.count("\n") == 1, r.stderr
    assert "noise" in r.stderr and "Traceback" not in r.stderr
