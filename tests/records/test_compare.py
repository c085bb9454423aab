"""Comparing records as the kernel threads compared kernels: Diff % with its interval,
a verdict per point, and scalability side by side."""

from __future__ import annotations

import math
from pathlib import Path

import pytest

from ipctop.analysis.scaling import ScalingPoint
from ipctop.analysis.stats import IMPROVEMENT, NO_DIFFERENCE, REGRESSION
from ipctop.errors import EXIT_USAGE, UsageError
from ipctop.output.records.record import Record, Step
from ipctop.output.records.record_io import read_record, write_record
from ipctop.output.text.compare_records import compare, format_comparison
from ipctop.output.text.compare_rows import NO_INTERVAL, UNSETTLED

Q6600_2622 = [4.79e6, 9.40e6, 13.58e6, 18.10e6]
Q6600_2624 = [4.01e6, 7.58e6, 8.04e6, 5.13e6]
# Planted run-to-run noise (one value per run): mean 0, sample variance 0.00025, median 0.
E = (-0.02, -0.01, 0.0, 0.01, 0.02)
T_975_DF8 = 2.306004


def windows(total: float, scale: float = 1.0) -> list[float]:
    return [total * math.exp(e * scale) for e in E]


def record(kernel: str, totals: list[float], noisy: bool = True, **config: object) -> Record:
    cfg = {
        "workload": "psem",
        "placement": "spread",
        "mode": "threads",
        "engine": "native",
        "cpus": [0, 1, 2, 3],
        "seconds": 5.0,
        "warmup": 1.0,
        "repeat": 1,
        "interval": 1.0,
    }
    cfg.update(config)
    return Record(
        kind="sweep",
        box={"kernel_release": kernel},
        config=cfg,
        steps=[Step(i + 1, t, repeats=windows(t) if noisy else []) for i, t in enumerate(totals)],
    )


@pytest.fixture
def q6600(tmp_path: Path) -> tuple[Record, Record]:
    old = write_record(tmp_path / "old.json", record("2.6.22", Q6600_2622))
    new = write_record(tmp_path / "new.json", record("2.6.24", Q6600_2624))
    return read_record(old), read_record(new)


def test_q6600_diffs_exact_with_intervals(q6600: tuple[Record, Record]) -> None:
    # The planted records have no session level (their noise is all run noise),
    # so a measured session spread of 0 judges them on their runs alone.
    cmp = compare(list(q6600), session_sd_pct=0.0)
    assert cmp.labels == ("2.6.22 (old.json)", "2.6.24 (new.json)")
    assert [r.pairs for r in cmp.rows] == [1, 2, 3, 4]
    assert [r.diffs[0] for r in cmp.rows] == [None] * 4
    expected = [4.01 / 4.79, 7.58 / 9.40, 8.04 / 13.58, 5.13 / 18.10]
    assert [r.diffs[1] for r in cmp.rows] == pytest.approx([100 * (x - 1) for x in expected])
    # Same planted noise both sides: Welch df 8, standard error 0.01 on the log.
    for row, ratio in zip(cmp.rows, expected):
        d = row.intervals[1]
        assert d.low == pytest.approx(ratio * math.exp(-T_975_DF8 * 0.01), rel=1e-6)
        assert d.high == pytest.approx(ratio * math.exp(T_975_DF8 * 0.01), rel=1e-6)
        assert row.verdict(1) == REGRESSION
    assert cmp.worst_regression_pct == pytest.approx(-71.6575, abs=1e-4)
    assert cmp.rows[3].scalability == pytest.approx((377.8706, 127.9302), abs=1e-4)
    assert cmp.rows[0].totals == pytest.approx((4.79e6, 4.01e6))
    assert cmp.rows[0].samples == (5, 5)


def test_format_comparison_text(q6600: tuple[Record, Record]) -> None:
    lines = format_comparison(compare(list(q6600), session_sd_pct=0.0)).splitlines()
    assert lines[0].split() == ["2.6.22", "(old.json)", "2.6.24", "(new.json)"]
    assert lines[1].split() == ["pairs", "ops/s", "ops/s", "Diff", "[%]", "95%", "interval",
                                "verdict"]  # fmt: skip
    # ±2.3 % of noise: no decimals.
    assert lines[2].split() == ["1", "4,790,000", "4,010,000", "-16", "[-18,", "-14]", "regression"]
    assert lines[5].split() == [
        "4",
        "18,100,000",
        "5,130,000",
        "-72",
        "[-72,",
        "-71]",
        "regression",
    ]
    assert lines[7].startswith("test: Welch's t on log rates")
    assert "Scalability [%]" in lines
    assert lines[-1].split() == ["4", "377.9", "127.9"]


def test_verdicts_regression_improvement_and_no_difference() -> None:
    old = record("a", [1000.0, 2000.0, 3000.0])
    new = record("b", [950.0, 2100.0, 3003.0])
    cmp = compare([old, new], session_sd_pct=0.0)
    assert [r.verdict(1) for r in cmp.rows] == [REGRESSION, IMPROVEMENT, NO_DIFFERENCE]


def test_single_runs_have_no_interval_and_say_so() -> None:
    old = record("2.6.18", [948_005.0, 1_768_273.0], noisy=False)
    new = record("2.6.25", [398_435.0], noisy=False)
    better = record("6.9.0", [1_000_000.0, 2_000_000.0], noisy=False)
    cmp = compare([old, new, better])
    assert cmp.rows[0].diffs[1] == pytest.approx(-57.9712, abs=1e-4)
    assert cmp.rows[0].diffs[2] == pytest.approx(100 * (1_000_000 - 948_005) / 948_005)
    assert cmp.rows[1].totals == (1_768_273.0, None, 2_000_000.0)
    assert cmp.rows[1].diffs[1] is None
    assert cmp.rows[0].verdict(1) == NO_INTERVAL
    assert cmp.decidable == 0
    text = format_comparison(cmp).splitlines()
    assert text[2].split()[:5] == ["1", "948,005", "398,435", "-58.0", "-"]


def test_unsettled_points_are_marked_and_never_decide() -> None:
    old = record("a", [1000.0])
    new = record("b", [800.0])
    new.points = [ScalingPoint(1, 800.0, settled=False, repeats=tuple(windows(800.0)))]
    cmp = compare([old, new])
    row = cmp.rows[0]
    assert row.intervals[1].verdict == REGRESSION  # the figures say so...
    assert row.verdict(1) == UNSETTLED  # ...but an unsettled point is not judged
    assert cmp.regressions(0.0) == [] and cmp.decidable == 0
    text = format_comparison(cmp)
    assert "800 ~" in text and "~ not settled: shown, never judged" in text


def test_several_records_per_side_are_pooled() -> None:
    a1 = record("6.1", [1000.0])
    a2 = record("6.1", [1010.0])
    b1 = record("6.2", [960.0])
    b2 = record("6.2", [970.0])
    cmp = compare([[a1, a2], [b1, b2]])
    row = cmp.rows[0]
    # Two records a side are two sessions: one value each, the geometric mean of its runs.
    assert row.samples == (2, 2) and row.units == ("sessions", "sessions")
    assert row.totals[0] == pytest.approx(math.sqrt(1000.0 * 1010.0))
    assert cmp.labels[0] == "6.1 (record + record)"
    # Welch on [ln 1000, ln 1010] against [ln 960, ln 970], computed by hand.
    la, lb = [math.log(1000.0), math.log(1010.0)], [math.log(960.0), math.log(970.0)]
    va, vb = (la[1] - la[0]) ** 2 / 2 / 2, (lb[1] - lb[0]) ** 2 / 2 / 2  # variance of each mean
    se = math.sqrt(va + vb)
    df = (va + vb) ** 2 / (va**2 + vb**2)  # Welch-Satterthwaite, 1 df a side
    d = (sum(lb) - sum(la)) / 2
    from scipy.stats import t

    assert row.intervals[1].high == pytest.approx(math.exp(d + t.ppf(0.975, df) * se), rel=1e-6)
    assert row.verdict(1) == REGRESSION


def test_windows_of_one_run_are_ar1_corrected_and_said_so() -> None:
    """A single run has only windows: their interval assumes the prior lag-1 r (0.77)
    below 10 windows, far wider than the naive one, and the legend says within-run."""
    from ipctop.analysis.autocorr import R_PRIOR, ar1_factor

    def one_run(kernel: str, total: float) -> Record:
        rec = record(kernel, [total], noisy=False)
        rec.steps[0].windows = windows(total)
        return rec

    cmp = compare([one_run("a", 1000.0), one_run("b", 900.0)])
    row = cmp.rows[0]
    assert row.units == ("windows", "windows")
    naive_half = T_975_DF8 * 0.01
    d = row.intervals[1]
    assert math.log(d.high / d.ratio) > 1.5 * naive_half
    f = ar1_factor(5, R_PRIOR)
    # Each side: s^2 = 0.00025, var of the mean s^2 (n - 1) / (n - f) x f / n.
    assert d.se == pytest.approx(math.sqrt(2 * 0.00025 * 4 / (5 - f) * f / 5), rel=1e-6)
    assert "within-run noise only" in format_comparison(cmp)


def test_holm_keeps_the_family_wise_rate_and_says_so() -> None:
    """Twelve points each just past p 0.05 alone: none survives Holm's correction."""
    base = [1000.0 * (i + 1) for i in range(12)]
    # A shift of 2.4 s.e. on the log: p about 0.04 per point, unadjusted.
    shift = math.exp(-2.4 * 0.01)
    old = record("a", base)
    new = record("b", [t * shift for t in base])
    cmp = compare([old, new], session_sd_pct=0.0)
    assert all(r.intervals[1].p_value < 0.05 for r in cmp.rows)
    assert all(r.adjusted[1] > 0.05 for r in cmp.rows)
    assert {r.verdict(1) for r in cmp.rows} == {NO_DIFFERENCE}
    assert "Holm-adjusted over the 12 point(s)" in format_comparison(cmp)


@pytest.mark.parametrize(
    ("key", "value"),
    [
        ("workload", "pmsg"),
        ("placement", "same-cpu"),
        ("mode", "processes"),
        ("engine", "python"),
        ("cpus", [0, 1]),
        ("size", 4096),
        ("threads", 8),
        ("sems", 64),
        ("queue_keys", "tagged"),  # msgbench's msgget: keyed is slower than IPC_PRIVATE
    ],
)
def test_refuses_records_that_differ_in_any_setting(key: str, value: object) -> None:
    same = {"size": 16, "threads": 4, "sems": 128, "queue_keys": "private"}
    a = record("6.1.0", [1.0, 2.0], **same)
    b = record("6.1.0", [1.0, 2.0], **{**same, key: value})
    with pytest.raises(UsageError) as e:
        compare([a, b])
    msg = str(e.value)
    assert key in msg and repr(value) in msg and "--force" in msg
    assert "\n" not in msg
    assert e.value.exit_code == EXIT_USAGE


def test_force_prints_every_differing_field_above_the_table() -> None:
    a = record("6.1.0", [100.0])
    b = record("6.1.0", [80.0], workload="pmsg", engine="python")
    cmp = compare([a, b], force=True)
    assert cmp.forced
    assert cmp.rows[0].diffs[1] == pytest.approx(-20.0)
    lines = format_comparison(cmp).splitlines()
    assert lines[0] == "forced: record vs record: workload 'psem' vs 'pmsg'"
    assert lines[1] == "forced: record vs record: engine 'native' vs 'python'"


def test_a_field_only_one_side_recorded_is_noted_not_refused() -> None:
    cmp = compare([record("6.1.0", [100.0]), record("6.1.0", [100.0], think_ns=0)])
    assert cmp.notes == ("not recorded in both record and record: think_ns",)


def test_needs_two_records() -> None:
    with pytest.raises(UsageError, match="at least two"):
        compare([record("6.1.0", [1.0])])


def test_fail_below_is_one_sided_and_holm_adjusted(
    q6600: tuple[Record, Record],
) -> None:
    cmp = compare(list(q6600), session_sd_pct=0.0)
    # Diffs -16.3, -19.4, -40.8, -71.7, s.e. 0.01 on the log, df 8; one-sided against
    # the threshold, Holm over the 4 points: 15 % leaves 1 pair (t -1.5), 14 % takes it
    # (t -2.7, p 0.014, the largest p so not multiplied).
    assert [r.pairs for r in cmp.regressions(15.0)] == [2, 3, 4]
    assert [r.pairs for r in cmp.regressions(14.0)] == [1, 2, 3, 4]
    assert [r.pairs for r in cmp.regressions(70.0)] == [4]
    assert cmp.regressions(71.5) == []  # the point estimate is past it, the interval is not
    reg = cmp.regressions(50.0)[0]
    assert reg.label == "2.6.24 (new.json)"
    assert reg.diff_pct == pytest.approx(-71.6575, abs=1e-4)
    assert reg.high_pct == pytest.approx(100 * (5.13 / 18.10 * math.exp(T_975_DF8 * 0.01) - 1))
