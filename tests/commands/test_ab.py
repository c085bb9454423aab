"""`ipctop ab` on the real engine: ABBA order, its record, hooks, restore on every exit."""

from __future__ import annotations

import math
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from conftest import ROOT, run_cli

from ipctop.live.replay_source import replay_samples
from ipctop.output.records.record_io import read_record

needs_two = pytest.mark.skipif(len(os.sched_getaffinity(0)) < 2, reason="needs 2 allowed CPUs")
QUICK = ("--window", "0.2", "--settle", "0.05")


@needs_two
def test_hooks_run_in_abba_order_and_the_record_reads_back(tmp_path: Path) -> None:
    log = tmp_path / "order"
    out = tmp_path / "ab.json"
    r = run_cli(
        "ab", *QUICK, "--max-seconds", "3", "--precision", "0.001",
        "--a-cmd", f"echo A >> {log}", "--b-cmd", f"echo B >> {log}",
        "--restore-cmd", f"echo R >> {log}", "--json", str(out),
    )  # fmt: skip
    assert r.returncode == 0, r.stderr
    order = "".join(log.read_text().split())
    blocks = (len(order) - 1) // 4
    assert blocks >= 2 and order == "ABBA" * blocks + "R"
    assert "one engine, hooks between slots" in r.stdout
    assert "B/A: " in r.stdout and "t on ABBA blocks' log ratios" in r.stdout
    rec = read_record(out)
    assert rec.kind == "ab" and rec.ab is not None and len(rec.ab.blocks) == blocks
    assert [s.side for s in rec.timeline][:4] == ["A", "B", "B", "A"]
    assert len(replay_samples(rec)) == len(rec.timeline)
    c = run_cli("compare", str(out))
    assert c.returncode == 0, c.stderr
    assert "A: echo A" in c.stdout and "B/A: " in c.stdout


@needs_two
def test_option_sets_a_known_think_time_is_a_regression(tmp_path: Path) -> None:
    # 20 µs per round at each end is most of a round on any box: B must lose. Judged
    # per CPU-second, which a shared box's other load does not move (ops/s is not
    # judged on a busy box: tests/commands/test_ab_busy.py; live/ab_busy.py).
    r = run_cli(
        "ab", *QUICK, "--max-seconds", "60", "--precision", "20", "--metric", "cpu",
        "--a", "--think-ns 0", "--b", "--think-ns 20000",
    )  # fmt: skip
    assert r.returncode == 0, r.stderr
    assert "A: --think-ns 0 · B: --think-ns 20000" in r.stdout
    assert "an engine per side, pairs per slot" in r.stdout
    [result] = [line for line in r.stdout.splitlines() if line.startswith("B/A: ")]
    assert "· regression ·" in result


@needs_two
def test_sigterm_restores_cleans_up_and_exits_143(tmp_path: Path) -> None:
    marker = tmp_path / "restored"
    p = subprocess.Popen(
        [sys.executable, "-m", "ipctop", "ab", *QUICK, "--max-seconds", "60",
         "--precision", "0.001", "--restore-cmd", f"touch {marker}"],
        cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    try:
        assert p.stdout is not None
        first = p.stdout.readline()
        assert first.startswith("ipctop ab"), first
        p.stdout.readline()  # the first block: the pairs are up and measured
        time.sleep(0.3)
        p.send_signal(signal.SIGTERM)
        _, err = p.communicate(timeout=60)
    finally:
        if p.poll() is None:
            p.kill()
            p.wait()
    assert p.returncode == 143, err
    assert marker.exists()
    assert "interrupted by SIGTERM" in err


def test_a_failing_hook_restores_shows_its_stderr_and_exits_1(tmp_path: Path) -> None:
    marker = tmp_path / "restored"
    r = run_cli(
        "ab", *QUICK, "--b-cmd", "echo knob is stuck >&2; exit 3",
        "--restore-cmd", f"touch {marker}",
    )  # fmt: skip
    assert r.returncode == 1
    assert marker.exists()
    [line] = r.stderr.strip().splitlines()[-1:]
    assert "--b-cmd" in line and "exit 3" in line and "knob is stuck" in line
    assert "Traceback" not in r.stderr


@pytest.mark.parametrize(
    ("args", "words"),
    [
        (("--precision", "0"), "--precision must be above 0 %"),
        (("--precision", "-1"), "--precision must be above 0 %"),
        (("--a", "--placement sideways"), "invalid choice"),
        (("--b", "--think-ns 'x"), "No closing quotation"),
    ],
)
def test_bad_input_is_one_line_and_exit_2(args: tuple[str, ...], words: str) -> None:
    r = run_cli("ab", *args)
    assert r.returncode == 2, r
    # (A note about objects an earlier killed ipctop left may come first.)
    [line] = [x for x in r.stderr.strip().splitlines() if not x.startswith("ipctop: note:")]
    assert words in line


@needs_two
def test_too_short_for_two_blocks_is_exit_2(tmp_path: Path) -> None:
    marker = tmp_path / "restored"
    r = run_cli("ab", *QUICK, "--max-seconds", "0.1", "--restore-cmd", f"touch {marker}")
    assert r.returncode == 2
    assert "an interval needs at least 2" in r.stderr.strip().splitlines()[-1]
    assert marker.exists()


def test_no_difference_says_what_change_the_run_could_not_have_seen() -> None:
    import argparse

    from ipctop.analysis.stats import NO_DIFFERENCE, paired_difference
    from ipctop.analysis.stopping import SteinStop
    from ipctop.commands.ab import _result_line

    # Planted: B/A of +1 %, -1 %, +2 %, -2 % over four blocks, centred on 1.
    blocks = [([100.0], [101.0]), ([100.0], [99.0]), ([100.0], [102.0]), ([100.0], [98.0])]
    d = paired_difference(blocks)
    assert d.verdict == NO_DIFFERENCE
    stop = SteinStop(1.0)
    assert not stop.done(blocks)  # 4 blocks: still in the pilot, so "time up"
    text = _result_line(d, 4, 12.0, argparse.Namespace(precision=1.0), stop)
    assert f"could not tell a change under about ±{d.half_width_pct:.1f} %" in text
    assert "time up" in text and "n=4 blocks" in text
    assert "stop rule: Stein two-stage: stopped before its 6 pilot blocks" in text
    assert d.half_width_pct > 2  # four blocks this spread cannot rule out a few per cent
    # A calm pilot, then two wild blocks (a real A/A on this VM): the plan's count is
    # reached, its precision is not, and the line says why the run went to its time.
    wild = [([100.0], [100.0 * math.exp(x)]) for x in
            (-0.0100, -0.0115, -0.0020, -0.0018, 0.0003, 0.0191, -0.2105, -0.1935)]  # fmt: skip
    stop = SteinStop(1.0)
    assert not any(stop.done(wild[:k]) for k in range(1, 9)) and not stop.reached
    text = _result_line(stop.difference(wild), 8, 24.0, argparse.Namespace(precision=1.0), stop)
    assert "time up: all blocks spread more than the pilot's" in text
    assert "no difference shown" in text
