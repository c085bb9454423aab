"""What the non-SysV workloads share: a pair's mapping, native hooks, the reaper."""

from __future__ import annotations

import mmap
import os
from typing import TYPE_CHECKING, Any

from .. import objects
from ..objects import _native

if TYPE_CHECKING:  # base.py imports this module
    from .base import PairResources

AREA_SIZE = mmap.PAGESIZE


def new_area() -> mmap.mmap:
    """A page of anonymous MAP_SHARED memory for one pair's words and semaphores.

    Made before any end starts, so forked ends (processes mode) share it; one
    page per pair keeps each pair's words off every other pair's cache lines.
    """
    return mmap.mmap(-1, AREA_SIZE)


def close_area(area: mmap.mmap) -> None:
    try:
        area.close()
    except BufferError:
        # An end that did not stop in time still holds it (the engine has said so);
        # the mapping goes away when that end releases it.
        return


def native_hook(workload: str, hook: str, role: int, args: tuple[int, ...], area: Any) -> None:
    """Run a native setup/wake hook; a failure is the OSError of its errno."""
    err = _native.pair_hook(workload, hook, role, args, area)
    if err:
        raise OSError(err, f"{workload} {hook}: {os.strerror(err)}")


def area_pair(workload: str, setup: bool = True) -> PairResources:
    """PairResources over a fresh area, set up by the workload's native hook."""
    from .base import PairResources

    area = new_area()
    if setup:
        try:
            native_hook(workload, "setup", -1, (), area)
        except BaseException:
            area.close()
            raise
    return PairResources(args=((), ()), shm=area, closers=[lambda: close_area(area)])


def tracker() -> Any:
    """The reaper of the engine creating objects right now, if any.

    objects.py keeps it while the engine creates pairs; POSIX queues are
    announced to it by name so that a killed ipctop still has them unlinked.
    """
    return objects.current_tracker()
