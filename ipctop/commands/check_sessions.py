"""`ipctop check --sessions K`: K separate sessions of ipctop, for the session level.

Each session is a child `ipctop sweep` (its own process, objects and start),
1 pair of sysv-sem, SESSION_RUNS runs; analysis.sessions splits their log
rates into a run part and a session part. The children are tied to this
process (a parent-death signal) and stopped on every way out. The spread is
then kept as this box's (output.records.spread_store), so compare finds it.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import tempfile
from collections.abc import Callable, Sequence
from pathlib import Path

from ..analysis.sessions import SessionSpread, session_spread
from ..engine.parent_death import tied_to_me
from ..errors import IpctopError, RecordError
from ..output.records.spread_store import StoredSpread, now_utc, remember
from .common import cpu_text

SESSION_RUNS = 3


def _one(
    cpus: list[int], kind: str, seconds: float, warmup: float, out: Path, setting: list[str]
) -> list[float]:
    cmd = [
        sys.executable, "-m", "ipctop", "sweep", *setting, "--cpus", cpu_text(cpus),
        "--max-pairs", "1", "--repeat", str(SESSION_RUNS), "--seconds", f"{seconds:g}",
        "--warmup", f"{warmup:g}", "--engine", kind, "--json", str(out),
    ]  # fmt: skip
    proc = subprocess.Popen(
        cmd,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        preexec_fn=tied_to_me(signal.SIGTERM),  # a killed check takes its session along
    )
    try:
        _, err = proc.communicate()
    finally:
        if proc.poll() is None:  # Ctrl-C or SIGTERM here: the child cleans up on SIGTERM
            proc.terminate()
            proc.wait()
    if proc.returncode != 0:
        last = (err or "").strip().splitlines()[-1:] or [f"exit {proc.returncode}"]
        raise IpctopError(f"--sessions: a session failed: {last[0]}")
    step = json.loads(out.read_text())["steps"][0]
    return [float(x) for x in step["repeats"]]


def measure_sessions(
    k: int,
    cpus: list[int],
    kind: str,
    seconds: float,
    warmup: float,
    say: Callable[[str], None],
    setting: Sequence[str] = ("-w", "sysv-sem"),
) -> SessionSpread:
    """K child sweeps of 1 pair on `cpus` (check: sysv-sem on one CPU; sweep
    --sessions: its own workload, placement and mode), SESSION_RUNS runs each."""
    groups = []
    what = " ".join(setting)
    with tempfile.TemporaryDirectory(prefix="ipctop-sessions-") as tmp:
        for i in range(k):
            say(f"session {i + 1}/{k}: {what}, 1 pair, {SESSION_RUNS} runs of {seconds:g} s")
            path = Path(tmp) / f"s{i}.json"
            groups.append(_one(cpus, kind, seconds, warmup, path, list(setting)))
    return session_spread(groups)


def remember_spread(
    spread: SessionSpread,
    by: str,
    cpus: Sequence[int],
    workload: str = "sysv-sem",
    placement: str = "same",
    mode: str = "threads",
) -> str:
    """Keep the spread as this box's; the line saying where (or why not: a read-only
    home must not fail the measurement it already printed)."""
    uname = os.uname()  # what read_box records as hostname and kernel_release
    entry = StoredSpread(
        host=uname.nodename, kernel=uname.release, workload=workload, placement=placement,
        mode=mode, cpus=tuple(cpus), sessions=spread.sessions,
        runs_per_session=spread.runs_per_session, session_sd_pct=spread.session_sd_pct,
        run_sd_pct=spread.run_sd_pct, session_df=spread.session_df, measured_by=by,
        when=now_utc(),
    )  # fmt: skip
    try:
        path = remember(entry)
    except (OSError, RecordError) as exc:
        return f"session spread not stored: {getattr(exc, 'strerror', None) or exc}"
    return f"session spread stored as this box's in {path} (compare uses it)"
