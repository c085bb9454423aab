"""Comparing records as the kernel threads compared kernels: Diff % and scalability side by side."""

from __future__ import annotations

from pathlib import Path

import pytest

from ipctop.errors import EXIT_USAGE, UsageError
from ipctop.output.compare import compare, format_comparison
from ipctop.output.record import Record, Step, read_record, write_record

Q6600_2622 = [4.79e6, 9.40e6, 13.58e6, 18.10e6]
Q6600_2624 = [4.01e6, 7.58e6, 8.04e6, 5.13e6]


def record(kernel: str, totals: list[float], **config: object) -> Record:
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
        steps=[Step(i + 1, t) for i, t in enumerate(totals)],
    )


@pytest.fixture
def q6600(tmp_path: Path) -> tuple[Record, Record]:
    old = write_record(tmp_path / "old.json", record("2.6.22", Q6600_2622))
    new = write_record(tmp_path / "new.json", record("2.6.24", Q6600_2624))
    return read_record(old), read_record(new)


def test_q6600_diffs_exact(q6600: tuple[Record, Record]) -> None:
    cmp = compare(list(q6600))
    assert cmp.labels == ("2.6.22 (old.json)", "2.6.24 (new.json)")
    assert [r.pairs for r in cmp.rows] == [1, 2, 3, 4]
    assert [r.diffs[0] for r in cmp.rows] == [None] * 4
    assert [r.diffs[1] for r in cmp.rows] == pytest.approx(
        [
            (4.01 - 4.79) / 4.79 * 100,
            (7.58 - 9.40) / 9.40 * 100,
            (8.04 - 13.58) / 13.58 * 100,
            (5.13 - 18.10) / 18.10 * 100,
        ]
    )
    assert cmp.rows[3].diffs[1] == pytest.approx(-71.6575, abs=1e-4)
    assert cmp.worst_regression_pct == pytest.approx(-71.6575, abs=1e-4)
    assert cmp.rows[3].scalability == pytest.approx((377.8706, 127.9302), abs=1e-4)
    assert cmp.rows[0].totals == (4.79e6, 4.01e6)


def test_format_comparison_text(q6600: tuple[Record, Record]) -> None:
    lines = format_comparison(compare(list(q6600))).splitlines()
    assert lines[0].split() == ["2.6.22", "(old.json)", "2.6.24", "(new.json)"]
    assert lines[1].split() == ["pairs", "ops/s", "ops/s", "Diff", "[%]"]
    assert lines[2].split() == ["1", "4,790,000", "4,010,000", "-16.3"]
    assert lines[5].split() == ["4", "18,100,000", "5,130,000", "-71.7"]
    assert lines[6] == ""
    assert lines[7] == "Scalability [%]"
    assert lines[9].split() == ["2", "196.2", "189.0"]
    assert lines[11].split() == ["4", "377.9", "127.9"]
    # Labels sit right-aligned over their own columns.
    assert lines[0].index("(new.json)") + len("(new.json)") == len(lines[2])


def test_seeds_one_cpu_regression_and_improvement() -> None:
    old = record("2.6.18", [948_005.0, 1_768_273.0])
    new = record("2.6.25", [398_435.0])
    better = record("6.9.0", [1_000_000.0, 2_000_000.0])
    cmp = compare([old, new, better])
    assert cmp.rows[0].diffs[1] == pytest.approx(-57.9712, abs=1e-4)
    assert cmp.rows[0].diffs[2] == pytest.approx(100 * (1_000_000 - 948_005) / 948_005)
    assert cmp.rows[1].totals == (1_768_273.0, None, 2_000_000.0)
    assert cmp.rows[1].diffs[1] is None
    assert cmp.rows[1].scalability == pytest.approx((186.5257, None, 200.0), abs=1e-4)
    text = format_comparison(cmp).splitlines()
    assert text[2].split() == ["1", "948,005", "398,435", "-58.0", "1,000,000", "+5.5"]
    assert text[3].split() == ["2", "1,768,273", "-", "-", "2,000,000", "+13.1"]


def test_refuses_unlike_records() -> None:
    a = record("6.1.0", [1.0, 2.0])
    b = record("6.1.0", [1.0, 2.0], workload="pmsg")
    with pytest.raises(UsageError) as e:
        compare([a, b])
    msg = str(e.value)
    assert "psem/spread/threads" in msg and "pmsg/spread/threads" in msg
    assert "--force" in msg and "workload" in msg
    assert e.value.exit_code == EXIT_USAGE
    with pytest.raises(UsageError, match="placement"):
        compare([a, record("6.1.0", [1.0], placement="same-cpu")])
    with pytest.raises(UsageError, match="mode"):
        compare([a, record("6.1.0", [1.0], mode="processes")])


def test_force_compares_anyway_and_says_so() -> None:
    a = record("6.1.0", [100.0])
    b = record("6.1.0", [80.0], workload="pmsg")
    cmp = compare([a, b], force=True)
    assert cmp.forced
    assert cmp.rows[0].diffs[1] == pytest.approx(-20.0)
    assert len(cmp.notes) == 1
    assert format_comparison(cmp).splitlines()[-1].startswith("forced: record is psem")


def test_engine_difference_is_allowed() -> None:
    a = record("6.1.0", [100.0])
    b = record("6.1.0", [110.0], engine="python")
    assert compare([a, b]).rows[0].diffs[1] == pytest.approx(10.0)


def test_needs_two_records() -> None:
    with pytest.raises(UsageError, match="at least two"):
        compare([record("6.1.0", [1.0])])


def test_fail_below_thresholds(q6600: tuple[Record, Record]) -> None:
    cmp = compare(list(q6600))
    # Diffs are -16.3, -19.4, -40.8, -71.7.
    assert [r.pairs for r in cmp.regressions(15.0)] == [1, 2, 3, 4]
    assert [r.pairs for r in cmp.regressions(20.0)] == [3, 4]
    assert [r.pairs for r in cmp.regressions(71.0)] == [4]
    assert cmp.regressions(72.0) == []
    reg = cmp.regressions(50.0)[0]
    assert reg.label == "2.6.24 (new.json)"
    assert reg.diff_pct == pytest.approx(-71.6575, abs=1e-4)


def test_exact_threshold_is_not_a_regression() -> None:
    cmp = compare([record("a", [100.0]), record("b", [90.0])])
    assert cmp.regressions(10.0) == []  # fell by exactly 10 %, not more
    assert len(cmp.regressions(9.99)) == 1


def test_improvement_only_has_positive_worst() -> None:
    # pmsg-shared before/after moving wakeups out of the queue lock: +7.8 %.
    cmp = compare([record("before", [52.4e6]), record("after", [56.5e6])])
    assert cmp.worst_regression_pct == pytest.approx(7.8244, abs=1e-4)
    assert cmp.regressions(0.0) == []
