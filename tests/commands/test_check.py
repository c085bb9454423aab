"""`ipctop check`: verdicts on planted readings, then one live quick check."""

from __future__ import annotations

import json
import os
import re
from dataclasses import replace
from functools import cache
from pathlib import Path

import pytest
from conftest import run_cli, two_cpus

from ipctop.analysis.readings import CheckReadings, RunReading, ThreadReading
from ipctop.analysis.scaling import ScalingPoint
from ipctop.analysis.verdicts import (
    FAIL,
    OK,
    WARN,
    Verdict,
    exit_code,
    fmt_rate,
    judge_balance,
    judge_box,
    judge_check,
    judge_cross,
    judge_integrity,
    judge_scaling,
    judge_stability,
    overall,
)
from ipctop.box import BoxFacts, read_box
from ipctop.output.records.spread_store import read_spreads

Q6600_2624_PSEM = [4.01e6, 7.58e6, 8.04e6, 5.13e6]
Q6600_2622_PSEM = [4.79e6, 9.40e6, 13.58e6, 18.10e6]


@cache
def _this_box() -> BoxFacts:
    return read_box()


def box_facts(**planted: object) -> BoxFacts:
    """This box's real facts with the ones the box verdicts read planted: a box with
    SYSV IPC, no cpufreq governor and no SMT siblings unless a test says otherwise."""
    facts: dict[str, object] = {"sysv_ipc": True, "governor": None, "smt_siblings": []}
    return replace(_this_box(), **{**facts, **planted})


def curve(totals: list[float]) -> list[ScalingPoint]:
    return [ScalingPoint(i + 1, t) for i, t in enumerate(totals)]


def reading(
    workload: str,
    rounds_per_pair: list[int],
    placement: str = "same",
    ncpus: int | None = None,
    **kw: object,
) -> RunReading:
    """A run whose pair i did rounds_per_pair[i] rounds, pinned same-core on CPU i."""
    threads = []
    for pair, rounds in enumerate(rounds_per_pair):
        for role, cpu in (("A", pair), ("B", pair if placement == "same" else pair + 1)):
            threads.append(ThreadReading(pair, role, cpu, (cpu,), rounds))
    seconds = float(kw.pop("seconds", 1.0))  # type: ignore[arg-type]
    fields = {
        "total_ops_per_s": 2 * sum(rounds_per_pair) / seconds,
        "threads": tuple(threads),
        "seconds": seconds,
    }
    fields.update(kw)
    return RunReading(
        workload=workload,
        placement=placement,
        pairs=len(rounds_per_pair),
        ncpus=ncpus or len(rounds_per_pair),
        **fields,  # type: ignore[arg-type]
    )


# --- scaling ----------------------------------------------------------------


def test_q6600_2624_psem_collapses() -> None:
    v = judge_scaling("sysv-sem", curve(Q6600_2624_PSEM))
    assert v is not None and v.status == FAIL
    assert "collapses" in v.reason
    # 5.13 M at 4 CPUs against the 8.04 M peak at 3: 36 % below.
    assert v.line == (
        "sysv-sem collapses: 5.13M ops/s on 4 CPUs, 36 % below 8.04M on 3 (1.28x of 1 CPU): fail"
    )


def test_q6600_2622_psem_near_linear_is_ok() -> None:
    v = judge_scaling("sysv-sem", curve(Q6600_2622_PSEM))
    assert v is not None
    assert (
        v.line
        == "sysv-sem scales 3.78x on 4 CPUs (scalability 378 %, efficiency 94 %; ok 80 to 125 %): ok"
    )


def test_seeds_dual_p3_example_line() -> None:
    # psem on a dual Pentium III: 948,005 then 1,768,273 = 186.5 %, 93 % of linear.
    v = judge_scaling("sysv-sem", curve([948_005.0, 1_768_273.0]))
    assert v is not None
    assert (
        v.line
        == "sysv-sem scales 1.87x on 2 CPUs (scalability 187 %, efficiency 93 %; ok 80 to 125 %): ok"
    )


def test_issue_example_line_193() -> None:
    v = judge_scaling("sysv-sem", curve([1_000_000.0, 1_930_000.0]))
    assert v is not None
    assert (
        v.line
        == "sysv-sem scales 1.93x on 2 CPUs (scalability 193 %, efficiency 96 %; ok 80 to 125 %): ok"
    )


@pytest.mark.parametrize(
    "second, status, words",
    [
        (1.60e6, OK, "efficiency 80 %; ok 80 to 125 %"),
        (1.59e6, WARN, "below 80 % of linear"),
        (1.00e6, WARN, "efficiency 50 %; ok from 80 %, fail below 50 %"),
        (0.99e6, FAIL, "scales only"),
        (0.89e6, FAIL, "collapses"),  # fewer ops on 2 CPUs than on 1, beyond the noise margin
        (2.51e6, WARN, "faster than linear"),
    ],
)
def test_scaling_thresholds(second: float, status: str, words: str) -> None:
    v = judge_scaling("sysv-msg", curve([1.0e6, second]))
    assert v is not None and v.status == status, v
    assert words in v.reason


def test_small_dip_within_noise_is_not_a_collapse() -> None:
    v = judge_scaling("sysv-msg", curve([1.0e6, 2.0e6, 1.85e6]))
    assert v is not None and "collapses" not in v.reason
    # 7.5 % below the 2-CPU peak is inside the margin; 1.85x on 3 CPUs is 62 % of linear.
    assert v.status == WARN
    assert v.reason.startswith(
        "sysv-msg scales 1.85x on 3 CPUs (scalability 185 %, efficiency 62 %"
    )


def test_scaling_needs_a_one_pair_point() -> None:
    assert judge_scaling("sysv-msg", [ScalingPoint(2, 1.0), ScalingPoint(4, 2.0)]) is None
    assert judge_scaling("sysv-msg", curve([1.0e6])) is None


# --- balance ----------------------------------------------------------------


def test_imbalanced_pair_names_it_and_fails() -> None:
    # Four pairs; pair 3 did 48 % fewer rounds than the others.
    run = reading("sysv-sem", [10_000, 10_000, 10_000, 5_200], ncpus=4)
    v = judge_balance(run)
    assert v is not None and v.status == FAIL
    assert v.line == (
        "sysv-sem same-core 4 pairs: pair 3 did 48 % fewer rounds than its peers"
        " (1.92x; 1.25x warns, 1.5x fails): its CPU may be an SMT sibling of another pair's,"
        " busy with other work, or losing time to the hypervisor (steal); the integrity lines"
        " say whether it left its CPU: fail"
    )


def test_seeds_one_pair_doing_twice_the_others() -> None:
    # 24,666 against a median peer of 12,300: 2.005x.
    run = reading("sysv-msg", [12_300, 24_666, 12_250, 12_400])
    v = judge_balance(run)
    assert v is not None and v.status == FAIL
    assert "pair 1 did 101 % more rounds than its peers" in v.reason


def test_mild_imbalance_warns_and_two_pairs_name_the_slow_one() -> None:
    v = judge_balance(reading("sysv-msg", [10_000, 7_800]))
    assert v is not None and v.status == WARN
    assert "pair 1 did 22 % fewer rounds" in v.reason


def test_balanced_pairs_ok_and_one_pair_has_no_balance() -> None:
    v = judge_balance(reading("sysv-msg", [10_000, 9_500, 10_200]))
    assert v is not None and v.status == OK and "within" in v.reason
    assert judge_balance(reading("sysv-msg", [10_000])) is None


# --- integrity ----------------------------------------------------------------


def test_wrong_messages_on_the_shared_queue_fail() -> None:
    run = reading("sysv-msg-shared", [1000, 1000])
    threads = list(run.threads)
    threads[2] = ThreadReading(1, "A", 1, (1,), 1000, errors=3)
    run = RunReading(**{**run.__dict__, "threads": tuple(threads)})
    [v] = judge_integrity(run)
    assert v.status == FAIL
    assert "3 wrong message(s) received by pair(s) 1" in v.reason


def test_thread_off_its_binding_fails() -> None:
    run = reading("sysv-sem", [1000, 1000])
    threads = list(run.threads)
    threads[1] = ThreadReading(0, "B", 0, (0, 1), 1000)
    run = RunReading(**{**run.__dict__, "threads": tuple(threads)})
    [v] = judge_integrity(run)
    assert v.status == FAIL
    assert v.reason == "sysv-sem same-core 2 pairs: pair 0 B ran on CPU 1 but is bound to CPU 0"


def test_unpinned_threads_may_run_anywhere() -> None:
    t = ThreadReading(0, "A", None, (0, 1), 1000)
    run = RunReading("sysv-sem", "free", 1, 2, 2000.0, threads=(t, t))
    assert judge_integrity(run) == []


def test_failed_pair_error_and_no_rounds_fail() -> None:
    failed = reading("sysv-msg", [1000], events=("pair 0 failed: B: Identifier removed",))
    assert [v.status for v in judge_integrity(failed)] == [FAIL]
    broken = RunReading("sysv-sem", "same", 1, 2, 0.0, error="no more semaphore arrays")
    assert judge_integrity(broken)[0].reason == (
        "sysv-sem same-core 1 pair could not run: no more semaphore arrays"
    )
    idle = reading("sysv-sem", [0])
    assert judge_integrity(idle)[0].reason == "sysv-sem same-core 1 pair did no rounds"


def test_oversubscription_is_noted_as_warn() -> None:
    run = reading("sysv-msg", [1000, 1000, 1000], ncpus=2, oversubscribed=True)
    [v] = judge_integrity(run)
    assert v.status == WARN and "oversubscribed" in v.reason


def test_stability_warns_on_windows_far_apart() -> None:
    noisy = reading("sysv-msg", [1000], window_totals=(100e3, 200e3, 210e3))
    v = judge_stability(noisy)
    assert v is not None and v.status == WARN and "55 %" in v.reason
    steady = reading("sysv-msg", [1000], window_totals=(100e3, 110e3, 105e3))
    assert judge_stability(steady) is None


# --- cross-core, box ----------------------------------------------------------------


def test_cross_core_ten_times_slower_warns() -> None:
    same = reading("sysv-sem", [300_000])
    cross = reading("sysv-sem", [30_000], placement="cross", ncpus=2)
    v = judge_cross(same, cross)
    assert v is not None and v.status == WARN
    assert v.reason.startswith("sysv-sem cross-core round trip 10.0x slower than same-core")
    near = judge_cross(same, reading("sysv-sem", [150_000], placement="cross", ncpus=2))
    assert near is not None and near.status == OK and "2.0x slower" in near.reason
    faster = judge_cross(same, reading("sysv-sem", [600_000], placement="cross", ncpus=2))
    assert faster is not None and faster.status == OK and "2.0x faster" in faster.reason


def test_box_verdicts_fake_powersave_smt_box() -> None:
    box = box_facts(governor="powersave", smt_siblings=[[0, 4], [1, 5]])
    reasons = [v.reason for v in judge_box(box, [0, 1, 4])]
    assert any("powersave" in r for r in reasons)
    assert any("CPUs 0,4 are SMT siblings" in r for r in reasons)
    assert judge_box(box_facts(governor="performance", smt_siblings=[[0], [1]]), [0, 1]) == []
    assert judge_box(box_facts(sysv_ipc=False), [0])[0].status == FAIL
    # This box's own facts, as check reads them, judged without a planted one.
    real = read_box()
    lines = [v.reason for v in judge_box(real, real.online)]
    assert any("no /proc/sysvipc" in r for r in lines) == (not real.sysv_ipc)


# --- the whole check ----------------------------------------------------------------


def healthy() -> CheckReadings:
    r = CheckReadings()
    for w in ("sysv-msg", "sysv-sem"):
        r.one[w] = reading(w, [100_000])
        r.all[w] = reading(w, [97_000, 96_000])
        r.cross[w] = reading(w, [40_000], placement="cross", ncpus=2)
    r.shared = reading("sysv-msg-shared", [80_000, 79_000])
    return r


def test_healthy_check_is_all_ok_and_exits_0() -> None:
    verdicts = judge_check(box_facts(smt_siblings=[[0], [1]]), [0, 1], healthy())
    assert {v.status for v in verdicts} == {OK}
    assert exit_code(verdicts) == 0 and overall(verdicts) == OK
    lines = [v.line for v in verdicts]
    assert (
        "sysv-sem scales 1.93x on 2 CPUs (scalability 193 %, efficiency 96 %; ok 80 to 125 %): ok"
        in lines
    )
    assert (
        "sysv-msg cross-core round trip 2.5x slower than same-core"
        " (80k vs 200k ops/s; ok up to 5x, never a failure): ok"
    ) in lines
    assert any(
        line.startswith("sysv-msg-shared same-core 2 pairs: 318k ops/s, 82 %") for line in lines
    )


def test_one_imbalanced_pair_makes_the_check_exit_1() -> None:
    r = healthy()
    r.all["sysv-sem"] = reading("sysv-sem", [97_000, 40_000])
    verdicts = judge_check(box_facts(), [0, 1], r)
    assert exit_code(verdicts) == 1
    failed = [v for v in verdicts if v.status == FAIL]
    assert any("pair 1 did 59 % fewer rounds" in v.reason for v in failed)


def test_warnings_alone_exit_0() -> None:
    verdicts = [Verdict(OK, "a", "x"), Verdict(WARN, "b", "y")]
    assert exit_code(verdicts) == 0 and overall(verdicts) == WARN
    assert exit_code([*verdicts, Verdict(FAIL, "c", "z")]) == 1
    with pytest.raises(ValueError):
        Verdict("maybe", "d", "w")


def test_fmt_rate() -> None:
    assert [fmt_rate(x) for x in (4.01e6, 26_071.0, 950.0, 1.2e9)] == [
        "4.01M",
        "26.1k",
        "950",
        "1.2G",
    ]


# --- live ----------------------------------------------------------------


@two_cpus
def test_live_quick_check_json_is_consistent() -> None:
    r = run_cli("check", "--quick", "--json", timeout=120)
    assert "Traceback" not in r.stderr, r.stderr
    d = json.loads(r.stdout)
    assert d["schema"] == "ipctop.check/1" and d["quick"] is True
    assert d["cpus"] == sorted(d["cpus"]) and len(d["cpus"]) >= 2
    for key in ("kernel_release", "cpu_model", "smt_siblings", "allowed", "isolated", "limits"):
        assert key in d["box"]
    labels = [run["label"] for run in d["runs"]]
    n = len(d["cpus"])
    for w in ("sysv-msg", "sysv-sem"):
        assert f"{w} same-core 1 pair" in labels
        assert f"{w} same-core {n} pairs" in labels
        assert f"{w} cross-core 1 pair" in labels
    assert f"sysv-msg-shared same-core {n} pairs" in labels
    for run in d["runs"]:
        if run["error"] is None:
            assert len(run["threads"]) == 2 * run["pairs"]
            assert len(run["window_totals"]) == 3
    # Every pair of the median window as one (pair -1), and how its rounds were timed.
    timed = [run["latency"] for run in d["runs"] if run["latency"] is not None]
    assert bool(timed) == (d["engine"] == "native"), d["engine"]
    for lat in timed:
        assert list(lat) == ["pair", "rtt", "oneway", "note"] and lat["pair"] == -1
        assert lat["rtt"]["n"] > 0 and lat["note"]
    statuses = [v["status"] for v in d["verdicts"]]
    assert statuses and set(statuses) <= {"ok", "warn", "fail"}
    assert all(v["reason"] for v in d["verdicts"])
    # A noisy VM may warn or fail; what must hold is that the exit code says so.
    assert r.returncode == (1 if "fail" in statuses else 0), (r.returncode, statuses)
    assert d["exit_code"] == r.returncode
    assert d["status"] == ("fail" if "fail" in statuses else "warn" if "warn" in statuses else "ok")


def test_check_bad_cpus_is_one_line_and_exit_2() -> None:
    r = run_cli("check", "--quick", "--cpus", "4096")
    assert r.returncode == 2
    assert "Traceback" not in r.stderr
    assert len(r.stderr.strip().splitlines()) == 1 and "allowed" in r.stderr


def test_above_linear_is_named_with_its_interval_even_when_ok() -> None:
    # 2.2x on 2 CPUs: 110 % efficiency, inside the ok band, but never an unexplained "ok".
    one = ScalingPoint.from_repeats(
        1, [1.0e6], windows=[1.0e6 * (1 + 0.01 * (-1) ** i) for i in range(12)]
    )
    two = ScalingPoint.from_repeats(
        2, [2.2e6], windows=[2.2e6 * (1 + 0.01 * (-1) ** i) for i in range(12)]
    )
    v = judge_scaling("sysv-msg", [one, two])
    assert v is not None and v.status == OK
    assert "scalability 220 %, efficiency 110 %" in v.reason
    assert re.search(r"above linear 200 % \(\[\d+, \d+\] % beyond linear\)", v.reason), v.reason
    assert "a low 1-CPU reading or a cache/clock effect" in v.reason


@two_cpus
@pytest.mark.timeout(900)  # a whole check --quick plus two child sessions, on a loaded box
def test_sessions_are_separate_processes_and_their_spread_is_recorded(
    tmp_path: Path, private_state: Path
) -> None:
    """check --sessions 2 starts two real child sessions; the spread reaches the JSON and
    the record, and compare takes it from the record without --session-sd."""
    rec = tmp_path / "box.json"
    r = run_cli("check", "--quick", "--sessions", "2", "--json", "--record", str(rec), timeout=900)
    assert r.returncode in (0, 1), r.stderr
    sp = json.loads(r.stdout)["sessions"]
    assert (sp["sessions"], sp["runs_per_session"]) == (2, 3)
    assert sp["session_sd_pct"] >= 0 and sp["run_sd_pct"] > 0
    saved = json.loads(rec.read_text())
    assert saved["schema"] == "ipctop.record/3" and saved["sessions"] == sp
    r = run_cli("compare", str(rec), str(rec))
    assert r.returncode == 0, r.stderr
    assert "measured by --sessions in box.json, n=2: added to every interval" in r.stdout
    # ... and the box keeps it for compares of records that carry none (in the test's
    # own XDG_STATE_HOME: conftest.private_state).
    [kept] = read_spreads(private_state / "ipctop" / "session-spreads.json")
    assert (kept.measured_by, kept.workload, kept.sessions) == ("check --sessions", "sysv-sem", 2)
    assert kept.session_sd_pct == pytest.approx(sp["session_sd_pct"])
    assert (kept.host, kept.kernel) == (os.uname().nodename, os.uname().release)
