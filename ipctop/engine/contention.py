"""Another ipctop on the same CPUs: two runs halve each other, and neither said so.

Each engine writes its CPUs into its session file ("PID cpus=0-3"); an engine
looks for other live sessions whose CPUs overlap its own when it starts and
now and then while it runs, and says so once per other session.
"""

from __future__ import annotations

import os
import time

from ..cpus import format_cpu_list, parse_cpu_list
from .reaper import _alive
from .session_dir import read_small, session_dir

CONTENTION = "contention:"  # how every such event starts
FIRST_CHECK = 1.0  # seconds after the engine starts
CHECK_EVERY = 5.0  # seconds between two looks at the other sessions while running


def session_line(pid: int, cpus: list[int]) -> str:
    return f"{pid} cpus={format_cpu_list(cpus)}\n"


def others_on(cpus: list[int], me: int | None = None) -> list[tuple[int, list[int]]]:
    """(pid, shared CPUs) of every other live ipctop session that pins to any of `cpus`."""
    me = os.getpid() if me is None else me
    mine = set(cpus)
    out: list[tuple[int, list[int]]] = []
    try:
        paths = list(session_dir().iterdir())
    except OSError:
        return out  # no session directory: no session to compete with
    for path in paths:
        if len(path.name) != 3:
            continue  # the live-session lock and anything else: only tag files say CPUs
        data = read_small(path, 200)  # None: not a regular file, or released meanwhile
        if data is None:
            continue
        fields = data.decode("ascii", "replace").split()
        if len(fields) < 2 or not fields[0].isdigit() or not fields[1].startswith("cpus="):
            continue  # the lock, or a session of an ipctop that does not say its CPUs
        pid = int(fields[0])
        if pid == me or not _alive(pid):
            continue
        try:
            shared = sorted(mine & set(parse_cpu_list(fields[1][5:])))
        except ValueError:
            continue
        if shared:
            out.append((pid, shared))
    return out


class ContentionWatch:
    """Says once per other session that it shares our CPUs."""

    def __init__(self, cpus: list[int]) -> None:
        self.cpus = list(cpus)
        self._said: set[int] = set()
        # Not at once: a first reading that only primes the rates is thrown away.
        self._next = time.monotonic() + FIRST_CHECK

    def check(self, force: bool = False) -> list[str]:
        now = time.monotonic()
        if not force and now < self._next:
            return []
        self._next = now + CHECK_EVERY
        out = []
        for pid, shared in others_on(self.cpus):
            if pid in self._said:
                continue
            self._said.add(pid)
            out.append(
                f"{CONTENTION} another ipctop (pid {pid}) runs pairs on CPU(s) "
                f"{format_cpu_list(shared)} too; both measure less than either would alone"
            )
        return out
