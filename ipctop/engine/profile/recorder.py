"""`perf record` on the pairs' CPUs, cut into windows, read by `perf script`.

One perf record runs for the whole span: starting one takes about a second
here, too long to pay per window. `--switch-output=Ns` makes it close a file
every N seconds; a reader thread runs `perf script` on each closed file, counts
it (parse.tally) and deletes it, so the disk holds one or two windows at most.
Sample times are CLOCK_MONOTONIC (`-k`), the clock of time.monotonic(), so a
window can be matched to a measured span.
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import tempfile
import threading
import time
from collections import deque
from collections.abc import Callable
from pathlib import Path

from .parse import tally
from .perf import PerfStatus
from .window import Profile, ProfileWindow

FREQUENCY = 997  # Hz per CPU: prime, so sampling does not beat with the tick
FIELDS = "pid,tid,time,ip,sym,dso"
TICK = os.sysconf("SC_CLK_TCK")


def _cpu_seconds(pid: int) -> float | None:
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    fields = stat.rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / TICK


def _reap(proc: subprocess.Popen, timeout: float) -> float | None:
    """Wait for perf (killing it after `timeout`); its CPU seconds from wait4."""
    deadline = time.monotonic() + timeout
    while True:
        pid, status, usage = os.wait4(proc.pid, os.WNOHANG)
        if pid:
            proc.returncode = os.waitstatus_to_exitcode(status)
            return usage.ru_utime + usage.ru_stime
        if time.monotonic() > deadline:
            proc.kill()
            _, status, usage = os.wait4(proc.pid, 0)
            proc.returncode = os.waitstatus_to_exitcode(status)
            return usage.ru_utime + usage.ru_stime
        time.sleep(0.02)


class PerfRecorder:
    """Windows of perf samples of `cpus`; `pair_tids()` says which threads are the pairs.

    Use as a context manager, or start()/stop(); stop() always removes perf's
    process and its files. `on_window` runs on the reader thread.
    """

    def __init__(
        self,
        status: PerfStatus,
        cpus: list[int],
        pair_tids: Callable[[], set[int]],
        window: float = 1.0,
        frequency: int = FREQUENCY,
        on_window: Callable[[ProfileWindow], None] | None = None,
        keep: int = 600,
    ) -> None:
        if not status.ok or status.perf is None:
            raise ValueError("PerfRecorder needs a usable perf (perf_status().ok)")
        self.status = status
        self.cpus = sorted(set(cpus))
        self.pair_tids = pair_tids
        self.window = window
        self.frequency = frequency
        self.on_window = on_window
        self.windows: deque[ProfileWindow] = deque(maxlen=keep)
        self.errors: list[str] = []
        self._seen_tids: set[int] = set()
        self._dir: str | None = None
        self._proc: subprocess.Popen | None = None
        self._perf_pid = -1
        self._final_cpu: float | None = None
        self._script_pids: set[int] = set()  # earlier perf scripts: their samples are perf's
        self._thread: threading.Thread | None = None
        self._stopping = threading.Event()
        self._lock = threading.Lock()

    # -- lifecycle -------------------------------------------------------------
    def start(self) -> PerfRecorder:
        self._dir = tempfile.mkdtemp(prefix="ipctop-perf-")
        cmd = [
            self.status.perf or "perf",
            "record",
            "-e",
            self.status.event,
            "-F",
            str(self.frequency),
            "-C",
            ",".join(str(c) for c in self.cpus),
            "-g",
            "-k",
            "CLOCK_MONOTONIC",
            f"--switch-output={max(1, round(self.window))}s",
            "--no-bpf-event",  # its side-band thread costs ~0.4 s at start here
            "-q",
            "-o",
            os.path.join(self._dir, "perf.data"),
        ]
        self._err = open(os.path.join(self._dir, "stderr"), "w+")  # noqa: SIM115
        self._proc = subprocess.Popen(
            cmd, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=self._err
        )
        self._perf_pid = self._proc.pid
        self._last_cpu = 0.0
        self._last_t = time.monotonic()
        self._thread = threading.Thread(target=self._read_loop, name="ipctop-perf", daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        """Stop perf (it writes its last window on SIGINT), read what is left, clean up."""
        proc, self._proc = self._proc, None
        if proc is not None:
            if proc.poll() is None:
                proc.send_signal(signal.SIGINT)
            self._final_cpu = _reap(proc, timeout=10)
            if proc.returncode not in (0, -signal.SIGINT, 130) and not self.windows:
                self.errors.append(self._stderr_line(proc.returncode))
        self._stopping.set()
        if self._thread is not None:
            self._thread.join(timeout=30)
            self._thread = None
        if self._dir is not None:
            self._err.close()
            shutil.rmtree(self._dir, ignore_errors=True)
            self._dir = None

    def __enter__(self) -> PerfRecorder:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # -- results ---------------------------------------------------------------
    def profile(self, since: float | None = None, until: float | None = None) -> Profile:
        """The windows whose middle lies in [since, until] (all when not given)."""
        with self._lock:
            picked = [
                w
                for w in self.windows
                if (since is None or (w.t0 + w.t1) / 2 >= since)
                and (until is None or (w.t0 + w.t1) / 2 <= until)
            ]
        return Profile(
            event=self.status.event,
            perf_version=self.status.version,
            frequency=self.frequency,
            cpus=tuple(self.cpus),
            windows=tuple(picked),
            notes=tuple(self.status.warnings) + tuple(self.errors),
        )

    # -- the reader thread -------------------------------------------------------
    def _owner(self, perf_pid: int) -> Callable[[int, int], str]:
        me = os.getpid()
        self._seen_tids |= self.pair_tids()
        tids = self._seen_tids
        scripts = self._script_pids

        def owner_of(pid: int, tid: int) -> str:
            if tid in tids:
                return "pairs"
            if pid == 0:
                return "idle"
            if pid == me:
                return "ipctop"
            if pid == perf_pid or pid in scripts:
                return "perf"
            return "other"

        return owner_of

    def _read_loop(self) -> None:
        while True:
            done = self._stopping.is_set()
            for path in self._closed_files():
                self._read_file(path)
            if done:
                return
            self._stopping.wait(0.2)

    def _closed_files(self) -> list[str]:
        if self._dir is None:
            return []
        names = sorted(n for n in os.listdir(self._dir) if n.startswith("perf.data."))
        return [os.path.join(self._dir, n) for n in names]

    def _read_file(self, path: str) -> None:
        perf_pid = self._perf_pid
        script = subprocess.Popen(
            [self.status.perf or "perf", "script", "-i", path, "-F", FIELDS, "-f"],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            text=True,
            errors="replace",
        )
        assert script.stdout is not None
        self._script_pids.add(script.pid)
        with script.stdout:
            counts = tally(script.stdout, self._owner(perf_pid))
        # wait4 gives the script's own CPU time: the profile's cost is perf's, stated.
        _, status, usage = os.wait4(script.pid, 0)
        script.returncode = os.waitstatus_to_exitcode(status)
        os.unlink(path)
        now = time.monotonic()
        rec_cpu = _cpu_seconds(perf_pid) if perf_pid > 0 else None
        if rec_cpu is None:
            rec_cpu = self._final_cpu  # perf has exited: its rusage from wait4
        cost = None
        if rec_cpu is not None:
            spent = rec_cpu - self._last_cpu + usage.ru_utime + usage.ru_stime
            cost = 100.0 * spent / max(now - self._last_t, 1e-3)
            self._last_cpu = rec_cpu
        self._last_t = now
        if script.returncode != 0 or counts.cpu_samples == 0:
            return
        window = ProfileWindow.from_tally(counts, cost)
        with self._lock:
            self.windows.append(window)
        if self.on_window is not None:
            self.on_window(window)

    def _stderr_line(self, code: int | None) -> str:
        try:
            self._err.seek(0)
            lines = [x.strip() for x in self._err.read().splitlines() if x.strip()]
        except (OSError, ValueError):
            lines = []
        return f"profile: perf record stopped (exit {code}): {lines[-1] if lines else 'no message'}"
