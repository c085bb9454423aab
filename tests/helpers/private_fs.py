"""Shell snippets for tests that mount their own file systems in a private mount namespace.

A test hides /tmp or /run behind a fresh tmpfs (a session directory of its own,
a read-only or full one), or makes a small disk that fills. The checkout, its
venv and its interpreter may live under the hidden directory (a clone in /tmp):
tmpfs_over binds them back at the same paths, so such tests run wherever the
clone is. Run every snippet inside `unshare -m --propagation private`.
"""

from __future__ import annotations

import os
import shlex
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def _under(path: str, top: str) -> bool:
    return path.startswith(top.rstrip("/") + "/")


def ours_under(top: str) -> list[str]:
    """The checkout, venv and interpreter's prefix that a mount on `top` would hide,
    outermost only (a venv inside the checkout comes back with it)."""
    top = os.path.realpath(top)
    paths = sorted(
        {os.path.realpath(p) for p in (ROOT, sys.prefix, sys.base_prefix)} - {top},
        key=len,
    )
    kept: list[str] = []
    for p in paths:
        if (_under(p, top) or p == top) and not any(p == k or _under(p, k) for k in kept):
            kept.append(p)
    return kept


def tmpfs_over(top: str | Path, options: str = "", source: str = "none") -> str:
    """Shell: mount a fresh tmpfs on `top` with mount `options` ("ro", "size=64k"),
    binding back whatever ours_under(top) finds, so the test's own interpreter
    and checkout stay where they were.

    Each hidden directory is opened before the mount and bound from its file
    descriptor after (`mount -c`: the kernel, not mount(8), follows
    /proc/self/fd/N to the hidden directory); "ro" is applied by a remount once
    the binds are in, which leaves the binds writable."""
    top = str(top)
    opts = [o for o in options.split(",") if o]
    kept = ours_under(top)
    if len(kept) > 7:  # dash has file descriptors 3 to 9
        raise ValueError(f"too many directories to bind back under {top}: {kept}")
    first = [o for o in opts if o != "ro"] if kept else opts
    steps = [f"mount -t tmpfs {'-o ' + ','.join(first) + ' ' if first else ''}{source} "
             f"{shlex.quote(top)}"]  # fmt: skip
    if kept:
        fds = range(3, 3 + len(kept))
        opened = " ".join(f"{fd}<{shlex.quote(p)}" for fd, p in zip(fds, kept))
        steps.insert(0, f"exec {opened}")
        steps.append("mkdir -p " + " ".join(shlex.quote(p) for p in kept))
        steps += [
            f"mount -c --bind /proc/self/fd/{fd} {shlex.quote(p)}" for fd, p in zip(fds, kept)
        ]
        steps.append("exec " + " ".join(f"{fd}<&-" for fd in fds))
        if "ro" in opts:
            steps.append(f"mount -o remount,ro {shlex.quote(top)}")
    return " && ".join(steps)


def fill(path: str | Path) -> str:
    """Shell: write zeros to `path` until its file system is full (the error is the point)."""
    return f"dd if=/dev/zero of={shlex.quote(str(path))} bs=4k 2>/dev/null"
