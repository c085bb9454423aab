"""One tmux server of a test's own, with one command in its only pane.

CI lost tests here twice (stops 42 and 43): on its box one `capture-pane` did not
answer in 10 s, then in 30 s, and the test failed; on this box no call took 0.5 s
in a whole run of tests/tui, loaded or not (worst 3.5 s beside `stress-ng --cpu 4`).
So the server runs without a config file or a status line (no timer reading the
pane's process for its name), a call's stdin is /dev/null, and a read that does
not answer is asked again (reading twice changes nothing), with what the server and
the client were blocked in kept for the failure or the warning. `kill` does not
trust the server: it kills the server and every process of its pane by pid, and
waits until they are gone.

Stop 44 lost a test a third way: a client that did not answer was sent SIGKILL
and then not reaped for the 280 s left to the test, so no wait here is unbounded.
A client that outlives its SIGKILL is left to be reaped by a later call, each
stall is written to stderr at once (pytest shows it with the failure), and its
account says how much of the call the box's CPUs spent stolen by the host or
waiting on I/O: a stall of the whole box reads differently from one of tmux.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import time
import uuid
import warnings

import psutil

#: seconds for one tmux call; a quiet box answers in milliseconds.
CALL = 20.0
#: tries of a read (capture-pane, display-message) before the test fails.
READ_TRIES = 4
#: seconds a killed client is waited for before it is left to a later call.
KILL_WAIT = 5.0
#: seconds for a text to show, or the app to quit.
WAIT = 40.0
#: pytest-timeout for a test that drives a pane (the ini default is 120 s).
TEST_TIMEOUT = 300


class Pane:
    """`cmd` in a detached session `t` of size `size`; `tmux()` talks to its server."""

    def __init__(self, cmd: str, size: tuple[int, int], term: str = "xterm-256color") -> None:
        self.sock = f"ipctop-test-{uuid.uuid4().hex[:8]}"
        # A size in the environment would win over the pane's (Textual reads
        # COLUMNS and LINES), and TMUX* would make this a nested client.
        self.env = {
            k: v
            for k, v in os.environ.items()
            if not k.startswith("TMUX") and k not in ("COLUMNS", "LINES")
        }
        self.env.setdefault("TERM", term)  # tmux refuses to start without one
        self.server: psutil.Process | None = None
        # No config file, status line or automatic rename: the server's only
        # timer-driven work then is the pane itself.
        quiet = "set-option -g status off ; set-option -g automatic-rename off".split()
        self.tmux("-f", "/dev/null", *quiet, ";", "new-session", "-d", "-s", "t",
                  "-x", str(size[0]), "-y", str(size[1]), cmd)  # fmt: skip
        self.server = psutil.Process(int(self.read("display-message", "-p", "#{pid}")))

    def tmux(self, *args: str) -> str:
        """One call; a call that does not answer in CALL seconds fails the test."""
        out, stuck = self._call(args)
        if stuck is not None:
            raise AssertionError(
                f"tmux {' '.join(args[:2])} did not answer in {CALL:.0f} s\n{stuck}"
            )
        return out

    def read(self, *args: str) -> str:
        """A call that changes nothing, asked again while it does not answer."""
        stuck = []
        for _ in range(READ_TRIES):
            out, why = self._call(args)
            if why is None:
                if stuck:
                    warnings.warn(f"tmux {args[0]} answered at try {len(stuck) + 1}:\n{stuck[0]}",
                                  stacklevel=2)  # fmt: skip
                return out
            stuck.append(why)
        raise AssertionError(
            f"tmux {args[0]} did not answer in {READ_TRIES} tries of {CALL:.0f} s\n" + stuck[0]
        )

    def _call(self, args: tuple[str, ...]) -> tuple[str, str | None]:
        """(stdout, None), or ("", what the client and the server were blocked in).

        The client hands its stdout to the server, so a pipe's end would stay open
        in the server after the client exits: the output goes to a file, and the
        client's exit is what is waited for."""
        _reap_left()
        with tempfile.TemporaryFile("w+") as out, tempfile.TemporaryFile("w+") as err:
            before = _cpu_times()
            client = subprocess.Popen(
                ["tmux", "-L", self.sock, *args],
                stdin=subprocess.DEVNULL,
                stdout=out,
                stderr=err,
                env=self.env,
            )
            try:
                client.wait(timeout=CALL)
            except subprocess.TimeoutExpired:
                server = self.server.pid if self.server else None
                why = _box_during(before) + _blocked(client.pid, "client")
                why += _blocked(server, "server")
                client.kill()
                try:
                    client.wait(timeout=KILL_WAIT)
                except subprocess.TimeoutExpired:
                    why += _blocked(client.pid, f"client {KILL_WAIT:.0f} s after SIGKILL")
                    _LEFT.append(client)
                sys.stderr.write(f"tmux {' '.join(args[:2])} stalled:\n{why}")
                return "", why
            out.seek(0)
            err.seek(0)
            if client.returncode:
                raise subprocess.CalledProcessError(client.returncode, args, out.read(), err.read())
            return out.read(), None

    def text(self, ansi: bool = False) -> str:
        return self.read("capture-pane", "-p", *(["-e"] if ansi else []), "-t", "t")

    def keys(self, *keys: str) -> None:
        self.tmux("send-keys", "-t", "t", *keys)

    def shell(self) -> psutil.Process:
        """The pane's shell: the process `cmd` runs in."""
        return psutil.Process(int(self.read("display-message", "-p", "-t", "t", "#{pane_pid}")))

    def wait_for(self, text: str, timeout: float = WAIT) -> str:
        deadline = time.monotonic() + timeout
        while text not in (shown := self.text()):
            assert time.monotonic() < deadline, f"{text!r} never showed:\n{shown}"
            time.sleep(0.2)
        return shown

    def quit(self, exited: str = "ipctop-exited") -> None:
        """q, and wait for the line the pane's command prints once the app is gone."""
        self.keys("q")
        self.wait_for(exited)

    def kill(self) -> None:
        """The server and everything in its pane gone, whatever state they are in.

        kill-server first: the app gets its SIGHUP and cleans up as a closed
        terminal makes it. Whatever is left a few seconds later is killed."""
        if self.server is None:
            return  # new-session failed: its own error says why
        tree = [self.server, *self._children()]
        # Not subprocess.run: on its timeout it waits for the killed client unbounded.
        client = subprocess.Popen(
            ["tmux", "-L", self.sock, "kill-server"],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        try:
            client.wait(timeout=10)
        except subprocess.TimeoutExpired:
            client.kill()  # a stuck server: killed by pid below, the client reaped later
            _LEFT.append(client)
        _, alive = psutil.wait_procs(tree, timeout=10)
        for p in alive:
            try:
                p.kill()
            except psutil.NoSuchProcess:
                continue  # it went between the wait and the kill
        _, alive = psutil.wait_procs(alive, timeout=10)
        assert not alive, f"tmux pane processes outlived SIGKILL: {[p.pid for p in alive]}"

    def _children(self) -> list[psutil.Process]:
        try:
            return self.server.children(recursive=True) if self.server else []
        except psutil.NoSuchProcess:
            return []


#: killed clients not yet reaped: polled by each later call so none stays a zombie.
_LEFT: list[subprocess.Popen[bytes]] = []


def _reap_left() -> None:
    _LEFT[:] = [c for c in _LEFT if c.poll() is None]


def _cpu_times() -> list[int]:
    """The box's CPU time in ticks: user nice system idle iowait irq softirq steal."""
    with open("/proc/stat") as f:
        return [int(x) for x in f.readline().split()[1:9]]


def _box_during(before: list[int]) -> str:
    """Where the box's CPU time went while the call waited, and its pressure now."""
    spent = [b - a for a, b in zip(before, _cpu_times())]
    total = sum(spent) or 1
    names = ("user", "nice", "system", "idle", "iowait", "irq", "softirq", "steal")
    lines = ["box during the call: " + ", ".join(
        f"{n} {100 * x / total:.0f} %" for n, x in zip(names, spent)
    )]  # fmt: skip
    for what in ("cpu", "io", "memory"):
        try:
            with open(f"/proc/pressure/{what}") as f:
                lines.append(f"  pressure {what}: " + " | ".join(f.read().split("\n")[:2]))
        except OSError as e:
            lines.append(f"  pressure {what}: ({e.strerror})")
    lines.append(f"  uninterruptible (D) now: {_in_d_state() or 'none'}")
    return "\n".join(lines) + "\n"


def _in_d_state(most: int = 10) -> str:
    """Up to `most` processes in uninterruptible sleep, as pid (name) at wait channel."""
    found = []
    for p in psutil.process_iter(["pid", "name", "status"]):
        if p.info["status"] == psutil.STATUS_DISK_SLEEP:
            found.append(f"{p.info['pid']} ({p.info['name']}) at {_proc(p.info['pid'], 'wchan')}")
    return ", ".join(found[:most])


def _proc(pid: int, name: str) -> str:
    """/proc/PID/NAME, or why it could not be read (the process may be gone)."""
    try:
        with open(f"/proc/{pid}/{name}") as f:
            return f.read()
    except OSError as e:
        return f"({e.strerror})"


def _blocked(pid: int | None, who: str) -> str:
    """What a process was doing: its state, wait channel and kernel stack (root reads it)."""
    if pid is None:
        return f"{who}: not started\n"
    lines = [f"{who} {pid}:"]
    for name in ("status", "wchan", "stack", "syscall"):
        text = _proc(pid, name)
        if name == "status":
            text = "".join(
                x for x in text.splitlines(True) if x.startswith(("State", "voluntary", "nonvol"))
            )
        lines.append(f"  {name}: {text.strip()}")
    with open("/proc/loadavg") as f:
        lines.append(f"  load: {f.read().strip()}")
    return "\n".join(lines) + "\n"
