"""The profile: real pairs sampled by the real perf, and the paths where perf cannot."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import pytest
from conftest import run_cli, two_cpus

from ipctop.analysis.profile_delta import symbol_deltas
from ipctop.box import read_box
from ipctop.engine.config import RunConfig
from ipctop.engine.engine import Engine
from ipctop.engine.profile import Profile, perf_status
from ipctop.engine.profile.parse import tally
from ipctop.engine.profile.span import SpanProfiler
from ipctop.engine.profile.window import SymbolShare, sides_to_dicts
from ipctop.live.measure import measure_engine
from ipctop.output.records.record import Record, Step
from ipctop.output.records.record_io import read_record, write_record
from ipctop.plain import from_plain, to_plain

CPUS = sorted(os.sched_getaffinity(0))[:2]
STATUS = perf_status(CPUS)
needs_perf = pytest.mark.skipif(not STATUS.ok, reason=f"perf cannot profile here: {STATUS.line}")


def _profiled(workload: str, placement: str = "same", seconds: float = 3.0) -> tuple:
    config = RunConfig(workload=workload, placement=placement, cpus=tuple(CPUS))
    with SpanProfiler(CPUS) as profiler, Engine(config) as engine:
        engine.start(1)
        with profiler.span(engine):
            result = measure_engine(engine, seconds, 0.5, detail=True)
        return profiler.take(), result


def _names(profile: Profile, n: int = 10) -> list[str]:
    return [s.name for s in profile.top(n)]


@needs_perf
@two_cpus
@pytest.mark.timeout(300)  # perf's windows come late on a loaded shared box
def test_sysv_sem_profile_names_a_semop_function_and_spin_does_not():
    sem, _ = _profiled("sysv-sem")
    spin, _ = _profiled("spin", placement="cross")
    assert sem.samples > 100 and spin.samples > 100, (sem.samples, spin.samples)
    assert any("semtimedop" in n or "semop" in n for n in _names(sem)), _names(sem)
    # Only the pairs' own samples count, so another ipctop on a shared box cannot leak in.
    assert not any("sem" in s.name for s in spin.top(50)), _names(spin, 50)
    assert sem.event == STATUS.event and sem.perf_version == STATUS.version


@needs_perf
@two_cpus
@pytest.mark.timeout(300)
def test_ab_sysv_sem_against_sysv_msg_puts_each_syscall_path_at_its_end(tmp_path):
    sem, sem_run = _profiled("sysv-sem")
    msg, msg_run = _profiled("sysv-msg")
    deltas = symbol_deltas(sem, msg)
    assert any("msg" in d.name for d in deltas[:3]), [d.name for d in deltas[:3]]
    assert any("sem" in d.name for d in deltas[-3:]), [d.name for d in deltas[-3:]]
    # The same delta through records and `ipctop compare`.
    box = to_plain(read_box())
    paths = []
    for name, profile, run in (("sem", sem, sem_run), ("msg", msg, msg_run)):
        config = {"workload": f"sysv-{name}", "placement": "same", "mode": "threads"}
        config.update(engine="native", cpus=CPUS, seconds=3.0, warmup=0.5, repeat=1, interval=None)
        rec = Record(kind="sweep", box=box, config=config)
        rec.steps.append(
            Step(
                pairs=1,
                total_ops_per_s=run.total_ops_per_s,
                costs=run.costs,
                profile=profile.to_dict(),
            )
        )
        paths.append(str(write_record(tmp_path / f"{name}.json", rec)))
    assert read_record(paths[0]).steps[0].profile.event == STATUS.event
    done = run_cli("compare", *paths, "--force")
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    start = next(i for i, x in enumerate(lines) if "the delta explained" in x)
    table = lines[
        start + 3 : lines.index(next(x for x in lines[start:] if x.startswith("counters")))
    ]
    assert "msg" in " ".join(table[:3]) and "sem" in " ".join(table[-3:]), "\n".join(table)
    assert any("switches/round" in x for x in lines[start:])


def _delta_symbols(stdout: str) -> list[str]:
    lines = stdout.splitlines()
    start = next(i for i, x in enumerate(lines) if x.startswith("symbols whose share"))
    end = next(i for i in range(start, len(lines)) if lines[i].startswith("counters"))
    return lines[start + 2 : end]


@needs_perf
@two_cpus
@pytest.mark.timeout(300)
def test_ab_profile_puts_sysv_sem_and_sysv_msg_paths_at_the_two_ends(tmp_path):
    out = tmp_path / "ab.json"
    r = run_cli(
        "ab", "--window", "0.3", "--settle", "0.1", "--max-seconds", "20",
        "--precision", "0.001", "--a=-w sysv-sem", "--b=-w sysv-msg", "--profile",
        "--json", str(out), timeout=240,
    )  # fmt: skip
    assert r.returncode == 0, r.stderr
    assert "the delta explained: A = A (-w sysv-sem), B = B (-w sysv-msg)" in r.stdout
    rows = _delta_symbols(r.stdout)
    assert "msg" in " ".join(rows[:3]) and "sem" in " ".join(rows[-3:]), "\n".join(rows)
    # Each slot is a window: the big movers carry an interval.
    assert "±" in rows[0] and "±" in rows[-1], "\n".join(rows)
    assert any("switches/round" in x for x in r.stdout.splitlines())
    c = run_cli("compare", str(out))
    assert c.returncode == 0, c.stderr
    # The record keeps rounded per-window shares: the same symbols, the same order.
    assert [x.split()[-1] for x in _delta_symbols(c.stdout)] == [x.split()[-1] for x in rows]


def test_perf_missing_gives_one_line_and_the_run_goes_on(tmp_path):
    env = {"PATH": str(tmp_path)}  # an empty directory: no perf, and no other binary
    done = run_cli("run", "-w", "sysv-sem", "--seconds", "0.5", "--profile", env=env)
    assert done.returncode == 0, done.stderr
    said = [x for x in done.stderr.splitlines() if "profile" in x]
    assert said == [
        "ipctop: profile n/a: no perf binary on PATH; install it "
        "(Debian/Ubuntu: apt install linux-perf; Fedora: dnf install perf)"
    ]
    assert "# total" in done.stdout and "engine" in done.stdout


@pytest.mark.skipif(os.geteuid() != 0, reason="needs root to start a non-root child")
def test_not_permitted_for_a_non_root_child_when_perf_event_paranoid_is_high():
    knob = Path("/proc/sys/kernel/perf_event_paranoid")
    if not knob.exists():
        pytest.skip("no perf events in this kernel")
    old = knob.read_text().strip()
    raised = int(old) < 1  # CPU-wide sampling without root needs <= 0; 2 refuses it
    read_end, write_end = os.pipe()
    try:
        if raised:
            knob.write_text("2")
        pid = os.fork()
        if pid == 0:  # the child: nobody, asking the same question ipctop asks
            code = 1
            try:
                os.close(read_end)
                os.setgroups([])
                os.setgid(65534)
                os.setuid(65534)
                status = perf_status(CPUS)
                os.write(write_end, json.dumps([status.reason, status.line]).encode())
                code = 0
            finally:
                os._exit(code)
        os.close(write_end)
        with os.fdopen(read_end) as f:
            reason, line = json.loads(f.read() or "[null, null]")
        _, status = os.waitpid(pid, 0)
        assert os.waitstatus_to_exitcode(status) == 0
    finally:
        if raised:
            knob.write_text(old)
    assert knob.read_text().strip() == old
    if reason == "perf missing":
        pytest.skip("no perf binary")
    assert reason == "not permitted", line
    assert line.startswith("profile n/a: not permitted: kernel.perf_event_paranoid is ")
    assert "sysctl -w kernel.perf_event_paranoid=0" in line


def test_perf_script_fields_fixed_text_with_and_without_chains():
    text = [
        "11692/11735   464.000959: \n",
        "\tffffffff82257a39 _raw_spin_unlock_irqrestore ([kernel.kallsyms])\n",
        "\tffffffff81aa41e9 __do_semtimedop ([kernel.kallsyms])\n",
        "\t          10b5da __semtimedop (/usr/lib/x86_64-linux-gnu/libc.so.6)\n",
        "\t               0 [unknown] ([unknown])\n",
        "\n",
        "    0/0   464.001: ffffffff8100 default_idle ([kernel.kallsyms])\n",
        "11692/11736   464.002: 7f00 operator new(unsigned long) (/usr/lib/libstdc++.so.6)\n",
        "999/999   470.0: \n",
        "\tffffffff8100 do_msgrcv ([kernel.kallsyms])\n",
    ]
    pairs = {11735, 11736}
    t = tally(text, lambda pid, tid: "pairs" if tid in pairs else "idle" if pid == 0 else "other")
    assert (t.samples, t.cpu_samples) == (2, 4)
    assert dict(t.owners) == {"pairs": 2, "idle": 1, "other": 1}
    assert t.self_counts[("_raw_spin_unlock_irqrestore", "[kernel.kallsyms]")] == 1
    assert t.self_counts[("operator new(unsigned long)", "libstdc++.so.6")] == 1
    assert t.total_counts[("__semtimedop", "libc.so.6")] == 1
    assert ("[unknown]", "[unknown]") not in t.total_counts
    assert (t.t0, t.t1) == (464.000959, 470.0)
    within = tally(text, lambda pid, tid: "pairs", since=464.0015, until=465.0)
    assert within.cpu_samples == 1


def test_a_step_keeps_its_profile_and_a_step_without_one_writes_no_key():
    step = Step(pairs=1, total_ops_per_s=1.0, profile={"event": "cpu-clock", "na": "perf missing"})
    assert from_plain(Step, step.to_dict()).profile == step.profile
    assert "profile" not in Step(pairs=1, total_ops_per_s=1.0).to_dict()


if __name__ == "__main__":
    sys.exit(pytest.main([__file__, "-q"]))


def _share(name: str, total_pct: float) -> SymbolShare:
    return SymbolShare(
        name, "[kernel.kallsyms]", 1, 1, total_pct, total_pct, (total_pct,), (total_pct,)
    )


def _kept(symbols: tuple[SymbolShare, ...]) -> Profile:
    return Profile(event="cycles", perf_version=None, frequency=1, cpus=(0,), symbols=symbols)


def test_the_delta_ranks_alike_live_and_read_back_from_its_record():
    # Unrounded, y rises 0.003 pp and x falls 0.004 pp, so y ranks first; the
    # record keeps 0.01 pp, where both are flat and the names break the tie.
    # A live table and its record must not disagree on that (CI saw the swap).
    a = _kept((_share("x", 10.004), _share("y", 5.0)))
    b = _kept((_share("x", 10.0), _share("y", 5.003)))
    live = [d.name for d in symbol_deltas(a, b)]
    back = [
        d.name
        for d in symbol_deltas(Profile.from_dict(a.to_dict()), Profile.from_dict(b.to_dict()))
    ]
    assert live == back == ["x", "y"]


def _heavy(names: list[tuple[str, float]]) -> Profile:
    k = "[kernel.kallsyms]"
    return _kept(tuple(SymbolShare(n, k, int(p * 100), int(p * 100), p, p) for n, p in names))


def test_an_ab_record_keeps_each_sides_share_of_the_others_head():
    # z is B's heaviest symbol but 25th on A, past the 20 a record keeps per
    # side: kept only by B, the delta read back would say +30 pp, not +29.
    a = _heavy([(f"a{i}", 30.0 - i) for i in range(24)] + [("z", 1.0)])
    b = _heavy([("z", 30.0)] + [(f"a{i}", 2.0) for i in range(24)])
    assert ("z", "[kernel.kallsyms]") not in a.head()
    live = symbol_deltas(a, b)
    kept = sides_to_dicts({"A": a, "B": b})
    back = symbol_deltas(Profile.from_dict(kept["A"]), Profile.from_dict(kept["B"]))
    assert [(d.name, round(d.change_pp, 2)) for d in live] == [
        (d.name, round(d.change_pp, 2)) for d in back
    ]
    assert (back[0].name, back[0].change_pp) == ("z", 29.0)
    # Without the other side's head, A's z would be lost: the case above is real.
    assert "z" not in [s["name"] for s in a.to_dict()["symbols"]]
