"""The box remembers its session spread (issue 23).

`check --sessions` and `sweep --sessions` measure how much separate sessions
of this box differ beyond their runs. compare needs that figure to judge two
records from separate sessions, and a user should not have to carry it over
by hand (`--session-sd`). So each measurement is kept, per host, kernel,
workload, placement, mode and CPUs, with when it was taken and from how many
sessions, in $XDG_STATE_HOME/ipctop/session-spreads.json (else
~/.local/state/ipctop/): state that outlives a reboot, unlike the session
files under /run/ipctop.

A spread is a property of one box under one kernel and one workload: one
measured elsewhere says nothing here, so `find_spread` uses an entry only
when host, kernel and workload all match, and otherwise says which of them
no entry had.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path

from ipctop.analysis.sessions import session_term
from ipctop.errors import RecordError
from ipctop.output.records.bounded_read import read_bounded_text
from ipctop.output.records.record_io import atomic_write_text
from ipctop.plain import PlainError, from_plain, to_plain

STORE_NAME = "session-spreads.json"
SCHEMA = "ipctop.session-spreads/1"
KEEP = 64  # entries kept: the newest per setting, then the newest settings
MAX_STORE_BYTES = 1 << 20


@dataclass(frozen=True)
class StoredSpread:
    """One measurement of the box's session spread (analysis.sessions.SessionSpread)."""

    host: str
    kernel: str
    workload: str
    placement: str
    mode: str
    cpus: tuple[int, ...]
    sessions: int  # n: separate sessions measured
    runs_per_session: int
    session_sd_pct: float
    run_sd_pct: float
    session_df: float
    measured_by: str  # "check --sessions" or "sweep --sessions"
    when: str  # ISO 8601, UTC

    @property
    def key(self) -> tuple[str, str, str, str, str, tuple[int, ...]]:
        return (self.host, self.kernel, self.workload, self.placement, self.mode, self.cpus)

    @property
    def day(self) -> str:
        return self.when[:10]

    def term(self) -> tuple[float, float]:
        """(s.d. %, df) a comparison of two single sessions adds (analysis.sessions)."""
        return session_term(
            self.session_sd_pct, self.run_sd_pct, self.runs_per_session, self.sessions
        )

    def legend(self) -> str:
        """What compare's legend says of the spread it added."""
        cpus = ",".join(str(c) for c in self.cpus)
        sd, df = self.term()
        return (
            f"session term {sd:.1f} % s.d. of a session's mean, df {df:g} (sessions "
            f"{self.session_sd_pct:.1f} %, runs {self.run_sd_pct:.1f} %), measured by {self.measured_by} "
            f"on {self.day}, n={self.sessions} (stored for {self.host}, {self.kernel}, "
            f"{self.workload} on CPUs {cpus})"
        )


def state_dir() -> Path:
    """ipctop's persistent state: $XDG_STATE_HOME/ipctop, else ~/.local/state/ipctop."""
    base = os.environ.get("XDG_STATE_HOME")
    # The XDG spec: a relative value is invalid and is ignored.
    root = Path(base) if base and os.path.isabs(base) else Path.home() / ".local" / "state"
    return root / "ipctop"


def store_path() -> Path:
    return state_dir() / STORE_NAME


def now_utc() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="seconds")


def read_spreads(path: Path | None = None) -> list[StoredSpread]:
    """Every stored spread; none when the file does not exist, RecordError when it
    does but does not read (the message names the file, so it can be removed)."""
    path = path or store_path()
    if not path.exists():
        return []
    try:
        d = json.loads(read_bounded_text(path, MAX_STORE_BYTES))
    except ValueError as exc:
        raise RecordError(f"{path}: not JSON ({exc}); remove it to start again") from None
    if (
        not isinstance(d, dict)
        or d.get("schema") != SCHEMA
        or not isinstance(d.get("spreads"), list)
    ):
        raise RecordError(f"{path}: not a {SCHEMA} file; remove it to start again")
    try:
        return [from_plain(StoredSpread, e) for e in d["spreads"]]
    except PlainError as exc:
        raise RecordError(f"{path}: {exc}; remove it to start again") from None


def remember(entry: StoredSpread, path: Path | None = None) -> Path:
    """Keep entry as the newest for its setting (an older one of the same key goes)."""
    path = path or store_path()
    path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    try:
        kept = [e for e in read_spreads(path) if e.key != entry.key]
    except RecordError:
        kept = []  # an unreadable store is replaced by the new measurement, not kept broken
    spreads = (kept + [entry])[-KEEP:]
    text = json.dumps({"schema": SCHEMA, "spreads": [to_plain(e) for e in spreads]}, indent=1)
    return atomic_write_text(path, text + "\n")


@dataclass(frozen=True)
class Found:
    """The stored spread compare may use, or why there is none."""

    spread: StoredSpread | None
    why_not: str = ""


def find_spread(
    entries: Sequence[StoredSpread],
    boxes: Iterable[tuple[str | None, str | None]],
    workload: str,
    cpus: Sequence[int] = (),
    placement: str = "same",
    mode: str = "threads",
) -> Found:
    """The spread for records made on `boxes` ((host, kernel) each) running workload.

    Every (host, kernel) the records come from needs its own entry; of several
    the widest is used (as compare takes the widest a record carries). Within
    one host and kernel, an entry of the same CPUs, placement and mode is
    preferred, then the newest."""
    chosen: list[StoredSpread] = []
    for host, kernel in dict.fromkeys(boxes):
        if not host or not kernel:
            return Found(None, "a record does not say its host or kernel")
        on_host = [e for e in entries if e.host == host]
        on_kernel = [e for e in on_host if e.kernel == kernel]
        fits = [e for e in on_kernel if e.workload == workload]
        if not fits:
            if not on_host:
                missing = f"none stored for host {host}"
            elif not on_kernel:
                missing = f"none stored for kernel {kernel} on {host}"
            else:
                have = ", ".join(sorted({e.workload for e in on_kernel}))
                missing = f"none stored for {workload} on {host}, {kernel} (only {have})"
            return Found(None, missing)
        want = tuple(cpus)
        if want:
            # A spread is of the CPUs it was measured on: one CPU's sessions say little
            # of a two-CPU sweep's (12-06: check's 1-CPU spread judged 0-1 sweeps).
            same = [e for e in fits if e.cpus == want]
            if not same:
                have = "; ".join(sorted({",".join(map(str, e.cpus)) for e in fits}))
                cpu_list = ",".join(map(str, want))
                return Found(None, f"none stored for CPUs {cpu_list} (only CPUs {have})")
            fits = same
        chosen.append(max(fits, key=lambda e: ((e.placement, e.mode) == (placement, mode), e.when)))
    if not chosen:
        return Found(None, "no records")
    return Found(max(chosen, key=lambda e: e.session_sd_pct))
