"""sysv-lifecycle: msgbench's phases over M queues, each phase timed on its own.

msgbench made 32768 queues and timed each call as a phase over all of them:
msgget of every queue, then msgsnd to each, IPC_STAT of each, MSG_STAT of
each, IPC_RMID of each, repeated, with the average, stddev, min and max of each
phase. A unit is one thread doing exactly that in the native loop over its
own M queues; `--prefill P` first makes P idle queues per thread, so the
phases allocate and look up in a fuller id space.

With CAP_SYS_ADMIN each unit's thread moves to an IPC namespace of its own and
makes its queues with IPC_PRIVATE, as msgbench did: whatever a killed ipctop
held there, the kernel frees with the namespace. Without it the queues carry
ipctop's prefix and one of the unit's session tags (a tag per 4096 queues), so
a killed ipctop's queues are found by key by its reaper and by `ipctop
clean`; that key costs msgget about a third of its rate (BENCHMARKS.md), and
every output says which way a run went.
"""

from __future__ import annotations

import mmap
import os
import statistics
import struct
import tempfile
from collections.abc import Mapping
from contextlib import suppress
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ...errors import ResourceError, UsageError
from ..opstats import OpRate, OpStats, spread
from ..reaper import (
    IDS_OFFSET,
    KEY_PREFIX,
    TAG_SHIFT,
    claim_tags,
    release_tags,
    sweep_tag,
)
from ..session_dir import session_dir
from .base import PairResources, Workload
from .limits import PROC, read_int, sysv_sets_in_use
from .option import Option
from .shared import tracker

if TYPE_CHECKING:
    from ..config import RunConfig
    from ..end_launch import Pair

#: the phases, in the order of the native loop's ops[] counters and ring entries
LIFECYCLE_OPS = ("msgget", "msgsnd", "IPC_STAT", "MSG_STAT", "IPC_RMID")
SEED_QUEUES = 32768  # msgbench's, with msgmni raised to match
RING = 64  # repeats the area keeps (MB_RING in loops_sysv_multi.c)
_RING_AT = 64  # offset of the ring: after the repeats word and its padding
_ENTRY = struct.Struct(f"<{len(LIFECYCLE_OPS)}Q")
KEYS_OFFSET = 3072  # the unit's key bases: a count, then one per tag (MB_KEYS_OFFSET)
KEYS_PER_TAG = 1 << TAG_SHIFT
MAX_QUEUES_PER_UNIT = (IDS_OFFSET - KEYS_OFFSET - 4) // 4 * KEYS_PER_TAG


AREA_PREFIX = "msgbench-"  # + pid + "-" + random, in the session folder
_KEYS_AT = 8  # the loop's MB_KEYS_PRIVATE (1) or MB_KEYS_TAGGED (2), after the repeats word
KEYS_PRIVATE, KEYS_TAGGED = "private", "tagged"
_CAP_SYS_ADMIN = 21


def expected_keys(proc: Path = PROC) -> str:
    """How the native loop will key its queues: unshare(CLONE_NEWIPC) needs CAP_SYS_ADMIN."""
    try:
        status = (proc / "self/status").read_text()
    except OSError:
        return KEYS_TAGGED
    for line in status.splitlines():
        if line.startswith("CapEff:"):
            return KEYS_PRIVATE if int(line.split()[1], 16) >> _CAP_SYS_ADMIN & 1 else KEYS_TAGGED
    return KEYS_TAGGED


def keys_text(keys: str) -> str:
    if keys == KEYS_PRIVATE:
        return "IPC_PRIVATE queues in each thread's own IPC namespace, as msgbench"
    return "keyed queues (no CAP_SYS_ADMIN for an own IPC namespace; msgget is slower keyed)"


def phase_table(stats: Mapping[str, OpRate]) -> list[list[str]]:
    """Rows of operation, rate/s (sum over threads), avg, stddev, min, max, repeats."""
    return [
        [name, f"{s.per_s:,.0f}", f"{s.avg:,.0f}", f"{s.stddev:,.0f}",
         f"{s.min:,.0f}", f"{s.max:,.0f}", "" if s.n is None else str(s.n)]
        for name, s in stats.items()
    ]  # fmt: skip


class _Area:
    """A unit's shared area and the session tags its queues' keys carry."""

    def __init__(self, queues: int) -> None:
        size = IDS_OFFSET + 4 * queues
        # The pid in the name lets `ipctop clean` remove it after a SIGKILL.
        fd, self.path = tempfile.mkstemp(prefix=f"{AREA_PREFIX}{os.getpid()}-", dir=session_dir())
        try:
            os.ftruncate(fd, size)
            self.map = mmap.mmap(fd, size)
        except BaseException:
            os.close(fd)
            os.unlink(self.path)
            raise
        os.close(fd)
        self.tracker = tracker()
        n = -(-queues // KEYS_PER_TAG)
        try:
            # Claimed (and told to the reaper) before the loop makes a queue with them.
            self.tags = self.tracker.claim_tags(n) if self.tracker else claim_tags(n)
        except BaseException:
            self.map.close()
            os.unlink(self.path)
            raise
        struct.pack_into(f"<I{n}I", self.map, KEYS_OFFSET, n,
                         *(KEY_PREFIX | (t << TAG_SHIFT) for t in self.tags))  # fmt: skip

    def repeats(self) -> int:
        done: int = struct.unpack_from("<Q", self.map, 0)[0]
        return done

    def keys(self) -> str | None:
        """How the loop keyed its queues, once it has started; None before."""
        got = struct.unpack_from("<Q", self.map, _KEYS_AT)[0]
        return {1: KEYS_PRIVATE, 2: KEYS_TAGGED}.get(got)

    def entry(self, repeat: int) -> tuple[int, ...]:
        return _ENTRY.unpack_from(self.map, _RING_AT + (repeat % RING) * _ENTRY.size)

    def close(self) -> None:
        """After the loop stopped: whatever still carries the tags goes, then the tags."""
        with suppress(BufferError, ValueError):  # an end that did not stop still maps it
            self.map.close()
        with suppress(FileNotFoundError):
            os.unlink(self.path)
        if not self.tags:
            return
        tags, self.tags = self.tags, []
        sweep_tag(set(tags), os.getuid())  # a loop that failed its IPC_RMID left some
        if self.tracker is not None:
            self.tracker.release_tags(tags)
        else:
            release_tags(tags)


class SysvLifecycle(Workload):
    name = "sysv-lifecycle"
    original = "msgbench"
    summary = (
        "msgbench: phases over M queues (default 32768, capped by kernel.msgmni): msgget of "
        "all, msgsnd, IPC_STAT, MSG_STAT, IPC_RMID of each; each phase timed per repeat"
    )
    one_round = (
        f"phases over M queues (`--queues`, default the seed's {SEED_QUEUES} capped by kernel.msgmni):"
        " msgget of all, then msgsnd, msgctl(IPC_STAT), msgctl(MSG_STAT), msgctl(IPC_RMID) of"
        " each; each phase's rate with its average, stddev, min and max over repeats. As root"
        " each thread makes IPC_PRIVATE queues in an IPC namespace of its own, as the seed; "
        "without CAP_SYS_ADMIN the queues are keyed (msgget slower, and every output says "
        "which)"
    )
    timed = False
    options = (
        Option(
            "--queues", 1, 1 << 24, None, "queues per thread",
            f"msgbench's {SEED_QUEUES}, capped by kernel.msgmni over the CPUs", "M",
        ),
        Option(
            "--prefill", 0, 1 << 24, 0,
            "idle queues each thread makes first, so the phases run in a fuller id space",
            metavar="P",
        ),
    )  # fmt: skip
    python_unavailable = "sysv_ipc has no msgctl(MSG_STAT)"
    ends_per_unit = 1
    ops: tuple[str, ...] = LIFECYCLE_OPS

    def configure(self, config: RunConfig, proc: Path = PROC) -> None:
        super().configure(config)
        self.prefill = config.prefill
        requested = config.queues
        msgmni = read_int(proc / "sys/kernel/msgmni")
        used = len(sysv_sets_in_use("msg", proc))
        self.free = None if msgmni is None else msgmni - used
        self.cap_note = ""
        self.keys = expected_keys(proc)
        n = len(self.cpus)
        if (requested or SEED_QUEUES) + self.prefill > MAX_QUEUES_PER_UNIT:
            raise UsageError(
                f"--queues plus --prefill is at most {MAX_QUEUES_PER_UNIT:,} per thread "
                "(the session tags a unit's keys can carry)"
            )
        if requested is not None:
            self.queues = requested
            if self.free is not None and requested + self.prefill > self.free:
                raise ResourceError(
                    f"--queues {requested}{self._plus()} would pass kernel.msgmni ({msgmni}, "
                    f"{used} in use); raise the sysctl kernel.msgmni or use fewer --queues"
                )
            return
        self.queues = SEED_QUEUES
        if self.free is not None and (SEED_QUEUES + self.prefill) * n > self.free:
            self.queues = self.free // n - self.prefill
            self.cap_note = (
                f"msgbench's {SEED_QUEUES} capped by kernel.msgmni {msgmni} ({used} in use) "
                f"over {n} CPU{'s' if n > 1 else ''}"
            )
            if self.queues < 1:
                raise ResourceError(
                    f"no room for queues{self._plus()} under kernel.msgmni ({msgmni}, {used} "
                    "in use); raise the sysctl kernel.msgmni or use a smaller --prefill"
                )

    def _plus(self) -> str:
        return f" + {self.prefill} prefilled" if self.prefill else ""

    def record_payload(self) -> dict[str, Any]:
        """The queues it made (the request, or the seed's capped), and how they were keyed."""
        return {
            **super().record_payload(),
            "queues": self.queues,
            "queues_note": self.cap_note or None,
            "queue_keys": self.keys,
        }

    def detail_text(self) -> str:
        note = f", {self.cap_note}" if self.cap_note else ""
        fill = f" · {self.prefill} prefilled" if self.prefill else ""
        return f" · {self.queues} queues{note}{fill} · {keys_text(self.keys)}"

    def place_unit(
        self, placement: str, cpus: list[int], index: int, cpu: int | None = None
    ) -> tuple[int | None, ...]:
        if placement == "free":
            return (None,)
        n = len(cpus)
        return (cpu if cpu is not None and cpu in cpus else cpus[index % n],)

    def create_pair(self, index: int, engine: str) -> PairResources:
        per_unit = self.queues + self.prefill
        if self.free is not None and per_unit * (index + 1) > self.free:
            raise ResourceError(
                f"{index + 1} threads of {per_unit} queues would pass kernel.msgmni "
                f"({self.free} free); raise the sysctl kernel.msgmni or use fewer --queues"
            )
        area = _Area(per_unit)
        return PairResources(
            args=((self.queues, self.prefill),), shm=area.map, py=(area,), closers=[area.close]
        )

    def wake(self, res: PairResources, index: int) -> None:
        """Nothing to do: the loop looks at its stop flag every 256 calls, then removes all."""

    def phase_mark(self, pairs: list[Pair]) -> dict[int, int]:
        """Repeats each unit has finished so far; phase_stats(since=) counts the ones after."""
        return {p.index: p.res.py[0].repeats() for p in pairs if p.res.py[0] is not None}

    def phase_stats(self, pairs: list[Pair], since: dict[int, int] | None = None) -> OpStats | None:
        """{phase: OpRate} of per-repeat rates: per_s the sum over threads, n the repeats.

        A phase's rate in one repeat is M calls over that phase's time. With
        `since`, only repeats finished after that mark (at most the ring's 64).
        """
        rates: list[list[float]] = [[] for _ in LIFECYCLE_OPS]
        per_thread: list[list[float]] = [[] for _ in LIFECYCLE_OPS]
        for p in pairs:
            area = p.res.py[0]
            if area is None:
                continue
            done = area.repeats()
            first = max((since or {}).get(p.index, 0), done - RING + 1, 0)
            mine: list[list[float]] = [[] for _ in LIFECYCLE_OPS]
            for r in range(first, done):
                for k, ns in enumerate(area.entry(r)):
                    if ns:
                        mine[k].append(self.queues / (ns / 1e9))
            for k, got in enumerate(mine):
                rates[k].extend(got)
                if got:
                    per_thread[k].append(statistics.fmean(got))
        if not any(rates):
            return None
        return {
            name: spread(rs, sum(means), n=len(rs))
            for name, rs, means in zip(LIFECYCLE_OPS, rates, per_thread)
            if rs
        }
