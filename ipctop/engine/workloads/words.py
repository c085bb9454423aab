"""A token word in shared memory: futex, spin and spin-yield (native only)."""

from __future__ import annotations

from ...errors import UsageError
from .base import PairResources, Workload
from .shared import area_pair, native_hook

_NO_FUTEX = "the standard library has no futex() call"
_NO_SPIN = (
    "a Python spinner holds the GIL while it waits, so its peer thread cannot run: "
    "the numbers would measure the GIL"
)


class _Word(Workload):
    """One page per pair: the word at offset 0, set up by the native hook."""

    def create_pair(self, index: int, engine: str) -> PairResources:
        return area_pair(self.name)

    def wake(self, res: PairResources, index: int) -> None:
        if res.shm is not None:
            for role in (0, 1):
                native_hook(self.name, "wake", role, (), res.shm)


class Futex(_Word):
    name = "futex"
    original = "futex"
    summary = (
        "FUTEX_WAIT / FUTEX_WAKE on one token word per pair "
        "(private ops in threads mode, shared ops in processes mode)"
    )
    one_round = "FUTEX_WAIT/WAKE on a shared word"
    timed = True
    options = ()
    python_unavailable = _NO_FUTEX


class Spin(_Word):
    name = "spin"
    original = "ctxbench -L"
    summary = "a flag in shared memory on its own cache line, busy-waited with no syscall"
    one_round = (
        "a flag in shared memory, no syscall (needs cross placement: two spinners on one CPU "
        "progress only at each tick)"
    )
    timed = True
    options = ()
    python_unavailable = _NO_SPIN

    def check(self, placement: str, engine: str) -> None:
        if placement == "same":
            raise UsageError(
                "spin with --placement same is refused: both spinners would share one CPU, so "
                "the waiting one burns its whole time slice and the token moves only when the "
                "scheduler preempts it (about once a tick); use --placement cross, or spin-yield"
            )
        super().check(placement, engine)


class SpinYield(_Word):
    name = "spin-yield"
    original = "ctxbench -Y"
    summary = "as spin, but the waiting end calls sched_yield() between looks at the flag"
    one_round = "a flag in shared memory, `sched_yield` while it waits"
    timed = True
    options = ()
    python_unavailable = _NO_SPIN
