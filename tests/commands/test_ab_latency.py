"""`ipctop ab` compares latency: p50/p99 per slot, B/A from the ABBA blocks."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from conftest import run_cli

from ipctop.analysis import ab_latency
from ipctop.engine.config import LATENCY_EVERY
from ipctop.engine.objects import _native
from ipctop.output.text.ab_latency_text import format_ab_latency

needs_two = pytest.mark.skipif(len(os.sched_getaffinity(0)) < 2, reason="needs 2 allowed CPUs")
native = pytest.mark.skipif(_native is None, reason="the native extension is not built")
QUICK = ("--window", "0.2", "--settle", "0.05")


def planted(a_ns: float, b_ns: float, drift: list[float]) -> list[dict]:
    """ABBA blocks whose slots read a_ns and b_ns, both times the block's drift."""
    out = []
    for k in drift:
        out.append(
            {
                side: {key: [ns * k, ns * k * 1.01] for key, _ in ab_latency.FIGURES}
                for side, ns in (("A", a_ns), ("B", b_ns))
            }
        )
    return out


def test_planted_blocks_a_slower_b_is_read_through_the_drift() -> None:
    # The box drifts by 3x across the blocks; B is 20 % slower in every block.
    blocks = planted(10_000.0, 12_000.0, [1.0, 1.7, 3.0, 2.2])
    diffs = ab_latency.differences(blocks)
    assert set(diffs) == {k for k, _ in ab_latency.FIGURES}
    for d in diffs.values():
        assert d.ratio == pytest.approx(1.2)
        assert ab_latency.verdict(d) == ab_latency.SLOWER
    text = format_ab_latency(blocks)
    assert text is not None
    *body, note = text.splitlines()[2:]
    rows = {line.split("  ")[0]: line for line in body}
    assert set(rows) == {name for _, name in ab_latency.FIGURES}
    assert note == "verdicts Holm-adjusted over the 4 figure(s), 5 % family-wise"
    assert all("+20" in r and "B slower" in r for r in rows.values())


def test_planted_faster_and_unclear_sides() -> None:
    faster = ab_latency.differences(planted(10_000.0, 8_000.0, [1.0, 1.1, 0.9]))
    assert all(ab_latency.verdict(d) == ab_latency.FASTER for d in faster.values())
    # B/A flips around 1 from block to block: no side wins.
    blocks = planted(10_000.0, 10_000.0, [1.0, 1.0, 1.0])
    for b, k in zip(blocks, (1.1, 0.9, 1.05)):
        b["B"] = {key: [v * k for v in xs] for key, xs in b["B"].items()}
    unclear = ab_latency.differences(blocks)
    assert all(ab_latency.verdict(d) == ab_latency.NO_DIFFERENCE for d in unclear.values())


def test_untimed_slots_give_no_table_and_one_block_no_ratio() -> None:
    none = [{"A": ab_latency.empty_side(), "B": ab_latency.empty_side()}] * 3
    assert format_ab_latency(none) is None
    text = format_ab_latency(planted(10_000.0, 12_000.0, [1.0]))
    assert text is not None and "fewer than 2 blocks timed" in text


@needs_two
@native
def test_a_real_ab_with_a_known_think_time_shows_b_slower_and_compare_reads_it(
    tmp_path: Path,
) -> None:
    # 20 µs of work at each end is most of a round trip on any box: B's is longer.
    out = tmp_path / "ab.json"
    # It stops at ±20 %; the time allowed is for a loaded box, whose slots take seconds.
    r = run_cli(
        "ab", "-w", "sysv-sem", *QUICK, "--max-seconds", "60", "--precision", "20",
        "--a", "--think-ns 0", "--b", "--think-ns 20000", "--json", str(out),
    )  # fmt: skip
    assert r.returncode == 0, r.stderr
    assert "latency (all pairs" in r.stdout
    [rtt] = [x for x in r.stdout.splitlines() if x.startswith("round trip p50")]
    assert "B slower" in rtt
    assert f"1 round in {LATENCY_EVERY} timed" in r.stdout
    rec = json.loads(out.read_text())
    lat = rec["ab"]["latency"]
    assert lat["result"]["rtt_p50"]["verdict"] == "B slower"
    assert lat["result"]["rtt_p50"]["ratio"] > 1.0
    assert len(lat["blocks"]) == len(rec["ab"]["blocks"])
    a_rtt = [v for b in lat["blocks"] for v in b["A"]["rtt_p50"]]
    assert a_rtt and all(v > 0 for v in a_rtt)
    c = run_cli("compare", str(out))
    assert c.returncode == 0, c.stderr
    [again] = [x for x in c.stdout.splitlines() if x.startswith("round trip p50")]
    assert again == rtt  # the same blocks give the same table
    rec["ab"]["latency"]["blocks"] = "nonsense"
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps(rec))
    c = run_cli("compare", str(bad))
    assert c.returncode == 2
    assert "ab.latency.blocks should be a list" in c.stderr.strip().splitlines()[-1]


def test_python_engine_says_latency_is_not_timed() -> None:
    r = run_cli(
        "ab",
        "--engine",
        "python",
        *QUICK,
        "--max-seconds",
        "30",
        "--precision",
        "50",
        "--a",
        "--size 8",
    )
    assert r.returncode == 0, r.stderr
    assert "latency n/a (the Python engine does not time rounds)" in r.stdout


@needs_two
@native
def test_an_untimed_workload_says_latency_n_a_once() -> None:
    # Issue 27 #22: "latency n/a (latency n/a (sysv-sem-multi has no two-end token to time))".
    r = run_cli(
        "ab", "-w", "sysv-sem-multi", *QUICK, "--max-seconds", "30", "--precision", "50",
        "--b", "--placement cross",
    )  # fmt: skip
    assert r.returncode == 0, r.stderr
    lines = [x for x in r.stdout.splitlines() if "latency" in x]
    assert lines == ["latency n/a (sysv-sem-multi has no two-end token to time)"], lines
