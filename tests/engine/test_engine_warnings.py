"""Issue 15: what the engine warns about reaches a headless user, once, and the record.

The warning is a real one: a second ipctop really runs pairs on CPU 0 (contention).
"""

from __future__ import annotations

import json
import subprocess

import pytest
from conftest import run_cli, wait_for
from ipctop_child import ipctop, stop

from ipctop.engine.config import RunConfig
from ipctop.engine.contention import others_on
from ipctop.engine.engine import Engine
from ipctop.live.engine_warnings import PREFIX, EngineWarnings


@pytest.fixture
def other_ipctop():
    quiet = {"stdout": subprocess.DEVNULL, "stderr": subprocess.DEVNULL}
    with ipctop("run", "--cpus", "0", "--seconds", "120", **quiet) as first:
        try:
            assert wait_for(lambda: first.pid in {pid for pid, _ in others_on([0])}, 30.0)
            yield first.pid
        finally:
            stop(first)  # SIGTERM: it removes its own objects before the next test looks


def _said(stderr: str, line: str) -> int:
    return sum(1 for ln in stderr.splitlines() if ln.startswith(PREFIX + line))


def test_run_sweep_and_check_say_contention_once_and_records_keep_it(other_ipctop, tmp_path):
    want = f"contention: another ipctop (pid {other_ipctop}) runs pairs on CPU(s) 0 too"
    r = run_cli("run", "--cpus", "0", "--seconds", "1.5")
    assert r.returncode == 0, r.stderr
    assert _said(r.stderr, want) == 1, r.stderr

    # Two repeats are two engines that both warn: said once, kept once.
    out = tmp_path / "sweep.json"
    r = run_cli("sweep", "--cpus", "0", "--seconds", "1", "--warmup", "0", "--repeat", "2",
                "--max-pairs", "1", "--json", str(out))  # fmt: skip
    assert r.returncode == 0, r.stderr  # contention is a warning, not a failure
    assert _said(r.stderr, want) == 1, r.stderr
    warnings = json.loads(out.read_text())["warnings"]
    assert sum(w.startswith(want) for w in warnings) == 1, warnings

    rec = tmp_path / "check.json"
    r = run_cli("check", "--quick", "--cpus", "0", "--record", str(rec), timeout=300)
    assert r.returncode in (0, 1), r.stderr  # 1: a verdict failed on the shared box
    assert _said(r.stderr, want) == 1, r.stderr
    assert any(w.startswith(want) for w in json.loads(rec.read_text())["warnings"])


def test_a_record_without_warnings_leaves_the_key_out(tmp_path) -> None:
    out = tmp_path / "quiet.json"
    r = run_cli("sweep", "--cpus", "0", "--seconds", "0.5", "--warmup", "0", "--repeat", "1",
                "--max-pairs", "1", "--json", str(out))  # fmt: skip
    assert r.returncode == 0, r.stderr
    said = [ln for ln in r.stderr.splitlines() if ln.startswith(PREFIX)]
    assert ("warnings" in json.loads(out.read_text())) == bool(said), r.stderr


def test_warnings_of_a_real_engine_are_said_once_with_a_fake_stop_timeout_line(capsys) -> None:
    with Engine(RunConfig("sysv-sem", "same", "threads", (0,))) as engine:
        engine.start(1)
        # FAKE: an end that does not stop in time cannot be made on demand; its line is planted.
        engine.events.append("pair 0 A: thread did not stop in time")
    said = EngineWarnings()
    assert said.take(engine.events) == list(dict.fromkeys(engine.events))
    assert said.take(engine.events) == list(dict.fromkeys(engine.events))  # all, for records
    err = capsys.readouterr().err
    assert err.count(PREFIX + "pair 0 A: thread did not stop in time") == 1, err
    assert said.lines == list(dict.fromkeys(engine.events))
