"""`ipctop check --sessions K`: K separate sessions of ipctop, for the session level.

Each session is a child `ipctop sweep` (its own process, objects and start),
1 pair of sysv-sem, SESSION_RUNS runs; analysis.sessions splits their log
rates into a run part and a session part. The children are tied to this
process (a parent-death signal) and stopped on every way out.
"""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import tempfile
from collections.abc import Callable, Sequence
from pathlib import Path

from ..analysis.sessions import SessionSpread, session_spread
from ..engine.parent_death import tied_to_me
from ..errors import IpctopError
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
