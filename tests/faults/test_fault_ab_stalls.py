"""ab --metric cpu leaves a stalled window out, as ops/s does: one rule (live.measure.kept).

Every stall here is real: SIGSTOP (psutil's suspend) of one forked end of two
pairs on one CPU, for longer than STALL_S. While it is stopped the other pair
still makes rounds at a cost the sampler reads, so a window then has a figure
for rounds per CPU-second; it is a stalled window all the same and must not
enter a block. ab then says how many windows it left out, on stdout and in
its record, and compare says it again from the record.
"""

from __future__ import annotations

import argparse
import subprocess
import time
from pathlib import Path

import psutil
import pytest
from conftest import wait_for
from ipctop_child import ipctop, read_until

from ipctop.commands.ab import _measure
from ipctop.engine.config import RunConfig
from ipctop.engine.engine import Engine, resolve_engine
from ipctop.engine.stalls import STALL_S
from ipctop.live.measure import kept
from ipctop.output.records.record import Record
from ipctop.output.records.record_io import read_record

native = pytest.mark.skipif(resolve_engine() != "native", reason="needs the native engine")
CONFIG = RunConfig("sysv-sem", "same", "processes", (0,), resolve_engine())


def _running(end: psutil.Process) -> bool:
    # A pair's end blocks once a round: its switches show the pair past the start gate.
    return end.num_ctx_switches().voluntary > 100


def _ends(proc: subprocess.Popen[str]) -> list[psutil.Process]:
    """The forked ends: children running the parent's own command line (not the reaper)."""
    me = psutil.Process(proc.pid)
    return [c for c in me.children() if c.cmdline() == me.cmdline()]


def test_a_window_with_one_pair_stopped_gives_no_cpu_figure() -> None:
    with Engine(CONFIG) as engine:
        engine.start(2)
        end = psutil.Process(engine.pairs[1].ends[0].pid)
        assert wait_for(lambda: _running(end)), "pair 1 made no round"
        end.suspend()
        try:
            assert wait_for(lambda: end.status() == psutil.STATUS_STOPPED), end.status()
            time.sleep(0.5)  # a round in flight at the stop is done by now
            args = argparse.Namespace(metric="cpu", window=STALL_S + 1.0, settle=0.0, profile=False)
            r = _measure(engine, args)
        finally:
            end.resume()  # it stops with the engine, not after a kill
    assert r.stalls is not None and r.stalls.stalled_pairs == (1,), r.events
    # Pair 0 ran throughout: the windows had a cost per round to read, which the
    # old reading took as measured.
    costed = [s for s in r.timeline if s.costs is not None and s.costs.cpu_us_per_round]
    assert costed, [s.costs for s in r.timeline]
    # Pair 1 made no round in the window: every window of it is stalled, none kept.
    assert kept(r.timeline, 0.5, r.stalls) == []
    assert r.windows == () and r.no_rate is not None, (r.windows, r.no_rate)


@pytest.mark.slow
@native
def test_ab_cpu_leaves_stalled_windows_out_and_says_so(tmp_path: Path) -> None:
    log, out_json = tmp_path / "slots", tmp_path / "ab.json"
    # One engine throughout (hooks, one setting): the ends live across slots. A slot
    # is 0.5 s of settle and 3 s measured, a block 14 s (26 s seen at load 1400): 60 s
    # allows two blocks up to 30 s each, at most four on a quiet box.
    with ipctop("ab", "-w", "sysv-sem", "--mode", "processes", "--pairs", "2", "--cpus", "0",
                "--metric", "cpu", "--window", "3", "--settle", "0.5", "--max-seconds", "60",
                "--precision", "0.001", "--a-cmd", f"echo A >> {log}", "--b-cmd",
                f"echo B >> {log}", "--json", str(out_json)) as proc:  # fmt: skip
        head = read_until(proc.stdout, lambda line: line.startswith("ipctop ab"))
        assert head and head[-1].startswith("ipctop ab"), head
        # The first A slot has begun when its hook has run: an end is stopped from
        # then for 3.5 s, so the slot's readings see it make no round for STALL_S
        # (the next slot, B, sees it stopped for less), then resumed.
        assert wait_for(lambda: log.exists() and log.read_text().startswith("A"), 60)
        assert wait_for(lambda: len(_ends(proc)) == 4, 30), "the ends did not start"
        end = _ends(proc)[-1]
        end.suspend()
        try:
            time.sleep(STALL_S + 1.5)  # the stop itself (not an assert): past STALL_S
        finally:
            end.resume()
        out, err = proc.communicate(timeout=120)
    assert proc.returncode == 0, (out, err)
    assert "Traceback" not in err
    assert "stall: pair " in err and "left out of the rates" in err, err
    [said] = [line for line in out.splitlines() if "stalled windows left out" in line]
    assert "A " in said and " window(s) (" in said, said
    rec = read_record(out_json)
    assert rec.ab is not None and rec.ab.metric == "cpu" and rec.ab.stalls is not None
    stalls = rec.ab.stalls
    assert stalls.A is not None and stalls.A.windows_left_out >= 1, stalls
    assert stalls.A.stalled_pairs, stalls
    # A reading the sampler flagged (a pair stalled, or late) is in no block: a side's
    # windows are at most its readings with a figure (not a short sliver) left unflagged.
    # (The old reading put every one with a figure in, flagged or not.)
    for side in "AB":
        mine = [s for s in rec.timeline if s.side == side and s.dt >= 0.25]
        figured = [s for s in mine if s.costs is not None and s.costs.cpu_us_per_round]
        in_blocks = sum(len(getattr(b, side)) for b in rec.ab.blocks)
        assert in_blocks <= sum(s.rate_sample for s in figured), (side, in_blocks, figured)
    # Each reading is in a block, left out as stalled, or has no figure: never two.
    in_blocks = sum(len(b.A) + len(b.B) for b in rec.ab.blocks)
    left_out = sum(s.windows_left_out for s in (stalls.A, stalls.B) if s is not None)
    assert in_blocks + left_out <= len(rec.timeline), (in_blocks, left_out, len(rec.timeline))
    assert Record.from_dict(rec.to_dict()) == rec  # the stalls round trip
    with ipctop("compare", str(out_json)) as proc:
        again, err = proc.communicate(timeout=60)
    assert proc.returncode == 0, err
    assert said in again.splitlines(), again  # the same line, from the record
