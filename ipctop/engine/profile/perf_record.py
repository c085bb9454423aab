"""`perf record` on the pairs' CPUs, cut into windows, read by `perf script`.

One perf record runs for the whole span: starting one takes a second or two
on a loaded box, too long to pay per window. With `--switch-output=signal` it
closes a file on each SIGUSR2, which the reader thread sends once a window;
the thread runs `perf script` on each closed file, counts it (parse.tally)
and deletes it, so the disk holds one or two windows at most.
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
from dataclasses import dataclass, field
from pathlib import Path

from .parse import tally
from .perf import PerfStatus
from .spawn import spawn_tied
from .window import Profile, ProfileWindow

PERF_DIR_PREFIX = "ipctop-perf-"  # + pid + "-" + random: see commands/clean.py
FREQUENCY = 997  # Hz per CPU: prime, so sampling does not beat with the tick
# The reader thread (and the perf script it starts, which inherits it) runs at
# this nice, below the pairs: at the monitor's -20 it preempted them (the
# figures: BENCHMARKS.md, "Cost of profiling").
READER_NICE = 10
FIELDS = "pid,tid,time,ip,sym,dso"
TICK = os.sysconf("SC_CLK_TCK")


def _cpu_seconds(pid: int) -> float | None:
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    fields = stat.rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / TICK


def _raise(pid: int) -> None:
    """perf as high as the monitor goes: at the pairs' nice it starts late (or not
    within a short span) when they saturate the CPUs. Its CPU is the stated cost."""
    try:
        os.setpriority(os.PRIO_PROCESS, pid, -20)
    except OSError:
        pass  # no CAP_SYS_NICE: perf runs at our nice, and starts later under load


def _reap(proc: subprocess.Popen[bytes], timeout: float) -> float | None:
    """Wait for perf (killing it after `timeout`); its CPU seconds from wait4."""
    deadline = time.monotonic() + timeout
    while True:
        try:
            pid, status, usage = os.wait4(proc.pid, os.WNOHANG)
        except ChildProcessError:
            return None  # reaped already; its CPU time is lost, not guessed
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
        self._proc: subprocess.Popen[bytes] | None = None
        self._perf_pid = -1
        self._final_cpu: float | None = None
        self._until: float | None = None  # samples after stop() was called are not counted
        self._since: float | None = None
        self._script_pids: set[int] = set()
        self._spans: list[Span] = []  # earlier perf scripts: their samples are perf's
        self._thread: threading.Thread | None = None
        self._stopping = threading.Event()
        self._lock = threading.Lock()

    # -- lifecycle -------------------------------------------------------------
    def start(self) -> PerfRecorder:
        self._since = time.monotonic()
        # The pid in the name lets `ipctop clean` remove it after a SIGKILL.
        self._dir = tempfile.mkdtemp(prefix=f"{PERF_DIR_PREFIX}{os.getpid()}-")
        self._kallsyms = _copy_kallsyms(self._dir)
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
            # Switched by our SIGUSR2, not perf's own timer: that timer is armed once
            # at start, and an alarm that fires while perf is still starting up (a
            # second or more on a loaded box) is dropped, and no file ever closes.
            "--switch-output=signal",
            "--no-bpf-event",  # its side-band thread (BPF symbols, unread here) slows the start
            "-q",
            "-o",
            os.path.join(self._dir, "perf.data"),
        ]
        self._err = open(os.path.join(self._dir, "stderr"), "w+")  # noqa: SIM115
        self._proc = spawn_tied(cmd, stderr=self._err)
        self._perf_pid = self._proc.pid
        _raise(self._perf_pid)
        self._last_cpu = 0.0
        self._last_t = time.monotonic()
        self._thread = threading.Thread(target=self._read_loop, name="ipctop-perf", daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        """Stop perf (it writes its last window on SIGINT), read what is left, clean up."""
        self._until = time.monotonic()
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

    # -- spans -----------------------------------------------------------------
    def open_span(self, pair_tids: Callable[[], set[int]]) -> Span:
        """Count the samples of these threads from now until close_span()."""
        span = Span(time.monotonic(), pair_tids)
        with self._lock:
            self._spans.append(span)
        return span

    def close_span(self, span: Span) -> None:
        """Ends the span now; its threads are read now, while they still exist."""
        span.tids |= span.pair_tids()
        span.until = time.monotonic()

    def wait_span(self, span: Span, timeout: float = 30.0) -> Profile:
        """The span's windows, once perf's files have caught up with its end."""
        span.done.wait(timeout)
        with self._lock:
            if span in self._spans:
                self._spans.remove(span)
            windows = tuple(span.windows)
        if not span.done.is_set():
            self.errors.append("profile: perf fell behind; the last window of a span is missing")
        return self._profile(windows)

    # -- results ---------------------------------------------------------------
    def profile(self) -> Profile:
        """Every window kept so far (those outside spans)."""
        with self._lock:
            windows = tuple(self.windows)
        return self._profile(windows)

    def _profile(self, windows: tuple[ProfileWindow, ...]) -> Profile:
        return Profile(
            event=self.status.event,
            perf_version=self.status.version,
            frequency=self.frequency,
            cpus=tuple(self.cpus),
            windows=windows,
            notes=tuple(self.status.warnings) + tuple(self.errors),
        )

    # -- the reader thread -------------------------------------------------------
    def _owner(self, tids: set[int]) -> Callable[[int, int], str]:
        me, perf_pid, scripts = os.getpid(), self._perf_pid, self._script_pids

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
        try:  # this thread only: raising a nice value needs no privilege
            os.setpriority(os.PRIO_PROCESS, threading.get_native_id(), READER_NICE)
        except OSError as exc:
            self.errors.append(f"profile: reader left at the monitor's priority ({exc})")
        due = time.monotonic() + self.window
        while True:
            done = self._stopping.is_set()
            if not done and time.monotonic() >= due:
                due += self.window
                # os.kill, not Popen.send_signal: that polls, and could reap perf
                # under stop()'s wait4. _proc is None once stop() has begun.
                if self._proc is not None:
                    try:
                        os.kill(self._perf_pid, signal.SIGUSR2)
                    except ProcessLookupError:
                        pass  # perf has exited; stop() reports why
            for path in self._closed_files():
                self._read_file(path)
            if done:
                with self._lock:
                    for span in self._spans:
                        span.done.set()  # perf has stopped: nothing more will come
                return
            self._stopping.wait(0.2)

    def _closed_files(self) -> list[str]:
        if self._dir is None:
            return []
        names = sorted(n for n in os.listdir(self._dir) if n.startswith("perf.data."))
        return [os.path.join(self._dir, n) for n in names]

    def _script(self, path: str) -> tuple[list[str], int, float]:
        """perf script's lines, its exit code and its CPU seconds (from wait4)."""
        script = subprocess.Popen(
            [self.status.perf or "perf", "script", *self._kallsyms, "-i", path, "-F", FIELDS, "-f"],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            text=True,
            errors="replace",
        )
        assert script.stdout is not None
        self._script_pids.add(script.pid)
        # It inherits the reader's nice (READER_NICE): a window read late costs
        # nothing but waiting (wait_span); a script above the pairs preempts them.
        with script.stdout:
            lines = script.stdout.readlines()
        _, status, usage = os.wait4(script.pid, 0)
        script.returncode = os.waitstatus_to_exitcode(status)
        return lines, script.returncode, usage.ru_utime + usage.ru_stime

    def _read_file(self, path: str) -> None:
        lines, code, script_cpu = self._script(path)
        try:
            os.unlink(path)
        except FileNotFoundError:
            return  # stop() gave up waiting for this thread and removed the folder
        now = time.monotonic()
        rec_cpu = _cpu_seconds(self._perf_pid) if self._perf_pid > 0 else None
        if rec_cpu is None:
            rec_cpu = self._final_cpu  # perf has exited: its rusage from wait4
        cost = None
        if rec_cpu is not None:
            # The profile's cost is perf's own CPU (record and script), stated, not guessed.
            cost = 100.0 * (rec_cpu - self._last_cpu + script_cpu) / max(now - self._last_t, 1e-3)
            self._last_cpu = rec_cpu
        self._last_t = now
        if code != 0:
            return
        with self._lock:
            registered = list(self._spans)
        # A span perf has read past cannot gain a sample: not tallied again (ab's
        # many short slots would each tally every later file until taken).
        spans = [x for x in registered if not x.done.is_set()]
        if not registered:
            self._seen_tids |= self.pair_tids()
            counts = tally(lines, self._owner(self._seen_tids), self._since, self._until)
            if counts.cpu_samples:
                window = ProfileWindow.from_tally(counts, cost)
                with self._lock:
                    self.windows.append(window)
                if self.on_window is not None:
                    self.on_window(window)
            return
        last = None
        for span in spans:
            if span.until is None:
                span.tids |= span.pair_tids()
            counts = tally(lines, self._owner(span.tids), span.since, span.until)
            if counts.cpu_samples:
                span.windows.append(ProfileWindow.from_tally(counts, cost))
            if last is None:
                last = _last_time(lines)
            if span.until is not None and last is not None and last >= span.until:
                span.done.set()

    def _stderr_line(self, code: int | None) -> str:
        try:
            self._err.seek(0)
            lines = [x.strip() for x in self._err.read().splitlines() if x.strip()]
        except (OSError, ValueError):
            lines = []
        return f"profile: perf record stopped (exit {code}): {lines[-1] if lines else 'no message'}"


def _copy_kallsyms(folder: str) -> list[str]:
    """perf script's --kallsyms option with a copy made once: the kernel writes
    /proc/kallsyms (120k lines here) anew for every reader, 0.05 s of system time
    per window's perf script, a third of its cost. A module loaded later is
    missed; [] (perf reads /proc itself) when the copy cannot be made."""
    path = os.path.join(folder, "kallsyms")
    try:
        shutil.copyfile("/proc/kallsyms", path)
    except OSError:
        return []
    return [f"--kallsyms={path}"]


def _last_time(lines: list[str]) -> float | None:
    """The time of the last sample header ("PID/TID TIME:") in perf script's lines."""
    for line in reversed(lines):
        if line and line[0] not in "\t\n":
            words = line.partition(":")[0].split()
            if len(words) >= 2 and "/" in words[0]:
                try:
                    return float(words[1])
                except ValueError:
                    continue
    return None


@dataclass
class Span:
    """A measured span of one set of pairs, inside a longer perf record."""

    since: float
    pair_tids: Callable[[], set[int]]
    until: float | None = None
    tids: set[int] = field(default_factory=set)
    windows: list[ProfileWindow] = field(default_factory=list)
    done: threading.Event = field(default_factory=threading.Event)
