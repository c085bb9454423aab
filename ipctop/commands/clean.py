"""`ipctop clean`: the last resort for objects a dead ipctop left behind.

It considers only objects with ipctop's key prefix that belong to the
calling user, and removes one only when the session that made it (found by
the tag in its key) is gone. Anyone else's objects are never touched.
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import stat
import tempfile
import time
from pathlib import Path

from ..engine import mq_journal
from ..engine.profile.perf_record import PERF_DIR_PREFIX
from ..engine.reaper import (
    _alive,
    current_keys,
    live_objects,
    release_tag,
    remove_checked,
    session_owner,
    tag_of,
    unlink_mq,
)
from ..engine.session_dir import is_regular, session_dir
from ..engine.workloads.msgbench import AREA_PREFIX
from ..live.live_lock import LOCK_NAME, remove_if_stale

MQUEUE_DIR = "/dev/mqueue"
TAG_FILE = re.compile(r"[0-9a-f]{3}")
CLAIM_GRACE = 5.0  # seconds an empty session file may be a claim in progress
QUEUE_NAME = re.compile(r"ipctop-(\d+)-\d+-.+")
PERF_DIR = re.compile(re.escape(PERF_DIR_PREFIX) + r"(\d+)-.+")
AREA_FILE = re.compile(re.escape(AREA_PREFIX) + r"(\d+)-.+")


def _clean_files(dry_run: bool) -> tuple[int, int]:
    """Orphan POSIX queues and stale session files: (how many were found, removed)."""
    queues, sessions, perf_dirs = orphan_queues(), stale_sessions(), orphan_perf_dirs()
    journals = mq_journal.dead_journals(session_dir(), _alive)
    # Without /dev/mqueue mounted, a dead engine's journal is the only list of its queues.
    journaled = [n[1:] for j in journals for n in mq_journal.names(j) if n[1:] not in queues]
    removed = 0  # each "removed ..." line printed, for the count at the end
    for name in queues + journaled:
        if dry_run:
            print(f"would remove posix queue /{name}")
        elif unlink_mq("/" + name):
            removed += 1
            print(f"removed posix queue /{name}")
    for path in journals:
        if not dry_run:
            path.unlink(missing_ok=True)
    for path in sessions:
        if dry_run:
            print(f"would remove stale session file {path}")
            continue
        path.unlink(missing_ok=True)
        removed += 1
        print(f"removed stale session file {path}")
    lock = session_dir() / LOCK_NAME  # a SIGKILLed monitor's: no holder, never removed
    stale_lock = remove_if_stale(lock, dry_run)
    if stale_lock:
        removed += 0 if dry_run else 1
        print(f"{'would remove' if dry_run else 'removed'} stale live-session lock {lock}")
    for path in perf_dirs:
        if dry_run:
            print(f"would remove {path}")
            continue
        if path.is_dir():
            shutil.rmtree(path, ignore_errors=True)
        else:
            path.unlink(missing_ok=True)
        removed += 1
        print(f"removed {path}")
    found = len(queues) + len(journals) + len(sessions) + len(perf_dirs) + stale_lock
    return found, removed


def orphan_perf_dirs(uid: int | None = None) -> list[Path]:
    """--profile's temporary folders and sysv-lifecycle's shared areas of this user
    whose ipctop is gone (killed mid-run)."""
    uid = os.getuid() if uid is None else uid
    out = []
    places = [(Path(tempfile.gettempdir()), PERF_DIR_PREFIX, PERF_DIR)]
    places.append((session_dir(), AREA_PREFIX, AREA_FILE))
    found = [(p, pattern) for base, prefix, pattern in places for p in base.glob(prefix + "*")]
    for path, pattern in found:
        m = pattern.fullmatch(path.name)
        try:
            st = path.lstat()
        except FileNotFoundError:
            continue
        # The entry itself, never what a link points at: another user's symlink in
        # /tmp to a file of ours made clean unlink what it may not (a traceback).
        mine = st.st_uid == uid and not stat.S_ISLNK(st.st_mode)
        if m is not None and mine and not _alive(int(m.group(1))):
            out.append(path)
    return sorted(out)


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--dry-run", "-n", action="store_true", help="only list what would go")


# (kind, id, key, pid of the session that made it, if it names one)
Leftover = tuple[str, int, int, int | None]


def leftovers(uid: int | None = None) -> tuple[list[Leftover], list[Leftover]]:
    """(orphans, in use): our ipctop-keyed objects whose session is dead or alive."""
    uid = os.getuid() if uid is None else uid
    orphans: list[Leftover] = []
    in_use: list[Leftover] = []
    for kind, ident, key, owner in live_objects():
        tag = tag_of(key)
        if tag is None or owner != uid:
            continue
        pid = session_owner(tag)
        if pid is not None and _alive(pid):
            in_use.append((kind, ident, key, pid))
        else:
            orphans.append((kind, ident, key, pid))
    return orphans, in_use


def stale_sessions() -> list[Path]:
    """Session files (one per tag) whose owner is gone, or that name no owner at all.

    After SIGKILL of both the engine and its reaper, nothing else removes them;
    a posix-mq, posix-sem or futex session has no SysV object to find them by.
    """
    out = []
    for path in session_dir().iterdir():
        if not TAG_FILE.fullmatch(path.name) or not is_regular(path):
            continue  # the live-session lock, a folder or FIFO: not ours to judge
        owner = session_owner(int(path.name, 16))
        if owner is None and _younger_than(path, CLAIM_GRACE):
            continue  # being claimed: the pid is written just after the O_EXCL create
        if owner is None or not _alive(owner):
            out.append(path)
    return sorted(out)


def _younger_than(path: Path, seconds: float) -> bool:
    try:
        return time.time() - path.stat().st_mtime < seconds
    except FileNotFoundError:
        return True  # gone meanwhile: nothing to remove


def orphan_queues(uid: int | None = None) -> list[str]:
    """POSIX queues /ipctop-<pid>-... of this user whose creating process is gone."""
    uid = os.getuid() if uid is None else uid
    out: list[str] = []
    try:
        names = os.listdir(MQUEUE_DIR)
    except OSError:
        return out  # no mqueue file system mounted: no queue can be left over
    for name in names:
        m = QUEUE_NAME.fullmatch(name)
        if m is None:
            continue
        try:
            if os.stat(os.path.join(MQUEUE_DIR, name)).st_uid != uid:
                continue
        except FileNotFoundError:
            continue
        if not _alive(int(m.group(1))):
            out.append(name)
    return sorted(out)


def run(args: argparse.Namespace) -> int:
    cleaned, removed = _clean_files(args.dry_run)
    orphans, in_use = leftovers()
    for kind, ident, key, pid in in_use:
        print(f"kept    {kind} id {ident} key {key:#010x}: in use by ipctop pid {pid}")
    tags = set()
    current = current_keys()  # one reading for all: a life-cycle run leaves thousands
    for kind, ident, key, _ in orphans:
        if args.dry_run:
            print(f"would remove {kind} id {ident} key {key:#010x}")
            continue
        if remove_checked(kind, ident, key, current):
            removed += 1
            tags.add(tag_of(key))
            print(f"removed {kind} id {ident} key {key:#010x}")
    for tag in tags:
        if tag is not None and session_owner(tag) is not None:
            release_tag(tag)
    if not orphans and not cleaned:
        print("nothing to clean: no ipctop objects whose creator is gone")
    elif not args.dry_run:
        print(f"{removed} object(s) removed")
    return 0
