"""Scaling arithmetic against the figures the kernel threads published (see SEEDS.md)."""

from __future__ import annotations

import pytest

from ipctop.analysis.scaling import (
    ScalingCurve,
    ScalingPoint,
    diff_pct,
    efficiency_pct,
    ideal_line,
    scalability_pct,
    spread_pct,
)
from ipctop.output.text.tables import fmt_int, fmt_signed, format_summary, format_table

# Q6600, psem totals for 1..4 cores.
Q6600_2622 = [4.79e6, 9.40e6, 13.58e6, 18.10e6]
Q6600_2624 = [4.01e6, 7.58e6, 8.04e6, 5.13e6]


def curve(totals: list[float]) -> list[ScalingPoint]:
    return [ScalingPoint(i + 1, t) for i, t in enumerate(totals)]


def test_psem_dual_pentium_scalability() -> None:
    pts = [ScalingPoint(1, 948_005), ScalingPoint(2, 1_768_273)]
    assert scalability_pct(pts, 2) == pytest.approx(1_768_273 / 948_005 * 100)
    assert scalability_pct(pts, 2) == pytest.approx(186.5257, abs=1e-4)
    assert efficiency_pct(pts, 2) == pytest.approx(93.2629, abs=1e-4)
    assert scalability_pct(pts, 1) == pytest.approx(100.0)


def test_diff_2618_vs_2625_one_cpu() -> None:
    d = diff_pct(948_005, 398_435)
    assert d == pytest.approx(-57.9712, abs=1e-4)
    assert f"{d:.0f}" == "-58"
    assert fmt_signed(d) == "-58.0"


def test_q6600_collapse_diffs() -> None:
    diffs = [diff_pct(o, n) for o, n in zip(Q6600_2622, Q6600_2624)]
    assert diffs == pytest.approx([-16.2839, -19.3617, -40.7953, -71.6575], abs=1e-4)
    assert f"{diffs[3]:.0f}" == "-72"


def test_q6600_scalability_and_efficiency() -> None:
    good, bad = curve(Q6600_2622), curve(Q6600_2624)
    assert scalability_pct(good, 4) == pytest.approx(18.10 / 4.79 * 100)
    assert efficiency_pct(good, 4) == pytest.approx(18.10 / (4 * 4.79) * 100)
    assert scalability_pct(bad, 2) == pytest.approx(189.0274, abs=1e-4)
    assert scalability_pct(bad, 4) == pytest.approx(127.9302, abs=1e-4)
    assert efficiency_pct(bad, 4) == pytest.approx(31.9825, abs=1e-4)


def test_missing_one_pair_point_gives_none() -> None:
    pts = [ScalingPoint(2, 9.4e6), ScalingPoint(3, 13.58e6)]
    assert scalability_pct(pts, 2) is None
    assert efficiency_pct(pts, 3) is None
    assert ideal_line(pts) is None
    assert scalability_pct(curve(Q6600_2622), 5) is None
    assert diff_pct(0.0, 5.0) is None
    assert diff_pct(None, 5.0) is None


def test_ideal_line_is_n_times_one_pair() -> None:
    pts = [ScalingPoint(3, 1.0), ScalingPoint(1, 4.79e6), ScalingPoint(2, 1.0)]
    assert ideal_line(pts) == [(1, 4.79e6), (2, 9.58e6), (3, 14.37e6)]


def test_point_derives_per_pair_and_spread() -> None:
    p = ScalingPoint.from_repeats(3, [90.0, 120.0, 100.0])
    assert p.total_ops_per_s == 100.0  # median, not mean
    assert p.per_pair == pytest.approx(100.0 / 3)
    assert p.repeats == (90.0, 120.0, 100.0)
    assert p.spread_pct == pytest.approx(30.0)
    single = ScalingPoint(2, 50.0)
    assert single.repeats == (50.0,)
    assert single.spread_pct == 0.0
    assert spread_pct([7.0]) == 0.0
    with pytest.raises(ValueError):
        ScalingPoint.from_repeats(1, [])


def test_curve_live_session_revisits_pair_counts() -> None:
    c = ScalingCurve()
    c.add(1, 100.0)
    c.add(2, 150.0, settled=False)  # still moving: stands in for now
    assert [(p.pairs, p.total_ops_per_s, p.settled) for p in c.points()] == [
        (1, 100.0, True),
        (2, 150.0, False),
    ]
    c.add(2, 180.0)
    c.add(3, 240.0)
    c.add(2, 200.0)  # back to 2 pairs: a second settled visit
    c.add(2, 10.0, settled=False)  # an unsettled reading never hides settled ones
    c.add(3, 270.0)
    pts = {p.pairs: p for p in c.points()}
    assert pts[2].repeats == (180.0, 200.0)
    assert pts[2].total_ops_per_s == 190.0
    assert pts[2].settled
    assert pts[2].spread_pct == pytest.approx(100 * 20 / 190)
    assert pts[3].total_ops_per_s == 255.0
    rows = c.as_rows()
    assert [r["pairs"] for r in rows] == [1, 2, 3]
    assert rows[1]["scalability_pct"] == pytest.approx(190.0)
    assert rows[2]["efficiency_pct"] == pytest.approx(85.0)
    assert rows[0]["per_pair"] == 100.0
    c.reset()
    assert c.points() == []
    with pytest.raises(ValueError):
        c.add(0, 1.0)


def test_format_table_aligns_and_checks_shape() -> None:
    out = format_table(["a", "num"], [["x", "1"], ["long", "1,000"]], "lr")
    assert out.splitlines() == ["a" + " " * 8 + "num", "x" + " " * 10 + "1", "long   1,000"]
    with pytest.raises(ValueError):
        format_table(["a", "b"], [["only one"]])
    with pytest.raises(ValueError):
        format_table(["a", "b"], [["1", "2"]], "lx")


def test_format_table_group_titles_widen_columns() -> None:
    out = format_table(["n", "v"], [["1", "2"]], "lr", group_titles=[("", 1), ("a long title", 1)])
    lines = out.splitlines()
    assert lines[0] == "    a long title"
    assert lines[2] == "1" + " " * 14 + "2"


def test_format_summary_seeds_figures() -> None:
    pts = [
        ScalingPoint(1, 948_005),
        ScalingPoint.from_repeats(2, [1_700_000.0, 1_768_273.0, 1_800_000.0]),
        ScalingPoint(3, 2_000_000.0, settled=False),
    ]
    out = format_summary(pts).splitlines()
    assert out[0].split() == [
        "pairs", "total", "ops/s", "ops/s", "per", "pair",
        "scalability", "[%]", "efficiency", "[%]", "spread", "[%]", "n", "±95%", "[%]",
    ]  # fmt: skip
    assert out[1].split() == ["1", "948,005", "948,005", "100.0", "100.0", "-", "1", "-"]
    # spread = 100 * (1.8M - 1.7M) / 1,768,273; three runs: t (4.302653 at 2 df) on
    # the log rates, h = t x s.e., and the half-width around the geometric mean
    # is 100 sinh(h) = 7.27 %
    assert out[2].split() == ["2", "1,768,273", "884,137", "186.5", "93.3", "5.7", "3", "±7.3"]
    assert out[3].split() == ["3", "2,000,000", "~", "666,667", "211.0", "70.3", "-", "1", "-"]
    assert out[-1].startswith("~ not settled")
    assert out[-2].startswith("n: runs")


def test_fmt_int_rounds_and_separates() -> None:
    assert fmt_int(948_005.4) == "948,005"
    assert fmt_int(None) == "-"
    assert fmt_int(18_100_000) == "18,100,000"


def test_a_settled_point_is_built_once_per_visit_and_anew_after_the_next():
    """The screen asks for the curve at every redraw: a settled point's interval is
    made once, and a new visit (or a provisional reading elsewhere) makes it again."""
    curve = ScalingCurve()
    curve.add(1, 100.0, settled=True, windows=[99.0, 100.0, 101.0, 100.0, 99.5, 100.5])
    first = curve.points()[0]
    curve.add(2, 150.0, settled=False)  # another pair count's provisional reading
    assert curve.points()[0] is first
    curve.add(1, 100.5, settled=True, windows=[100.0, 99.0, 101.0, 100.5, 100.0, 99.5])
    again = curve.points()[0]
    assert again is not first and again.repeats == (100.0, 100.5)
    assert len(again.windows) == 12
