"""A child that dies with its parent: PR_SET_PDEATHSIG, and the race it leaves open.

The kernel sends the signal when the *thread* that forked the child exits, not
the process (engine.forker keeps one long-lived thread for that). A parent
that died between the fork and the prctl is caught by comparing the child's
parent with the one it was forked by.
"""

from __future__ import annotations

import ctypes
import functools
import os
from collections.abc import Callable

PR_SET_PDEATHSIG = 1
_LIBC = ctypes.CDLL(None, use_errno=True)  # loaded before any fork: the child imports nothing


def die_with(parent: int, sig: int) -> None:
    """In a forked child: receive `sig` when `parent` dies; exit 127 now if it already has."""
    _LIBC.prctl(PR_SET_PDEATHSIG, sig)
    if os.getppid() != parent:
        os._exit(127)


def tied_to_me(sig: int) -> Callable[[], None]:
    """A Popen preexec_fn: the child receives `sig` when the calling process dies."""
    return functools.partial(die_with, os.getpid(), sig)
