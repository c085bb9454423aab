"""A watchdog process that removes an engine's objects if the engine dies.

Threads die with their process and forked ends get SIGKILL from the kernel
(PR_SET_PDEATHSIG), but SysV objects and POSIX queues outlive everyone. So
each engine starts this small process with a pipe: every object created is
announced on it ("+ msg 32768 469762048"), every object removed is retracted
("- msg 32768"). When the pipe reaches EOF, the engine is gone, normally or
not; whatever is still registered is removed, after checking that the id
still carries the registered key (ids are recycled).

The engine also owns a *tag*: 12 bits of every key it makes, claimed with an
O_EXCL session file naming its pid. The life-cycle workload's queues (made
inside its native loop, tens of thousands a second) are never announced one
by one: each unit claims a tag of its own per 4096 queues ("+ tag 3f1"),
which the reaper sweeps at EOF like the engine's.
"""

from __future__ import annotations

import os
import secrets
import signal
import subprocess
import sys
from pathlib import Path

from . import mq_journal
from .session_dir import read_small, session_dir

KEY_PREFIX = 0x1C000000
KEY_MASK = 0xFF000000
TAG_SHIFT = 12
TAG_MASK = 0xFFF


def tag_of(key: int) -> int | None:
    if (key & KEY_MASK) != KEY_PREFIX:
        return None
    return (key >> TAG_SHIFT) & TAG_MASK


def session_owner(tag: int) -> int | None:
    """The pid that claimed a tag, if its session file exists."""
    data = read_small(session_dir() / f"{tag:03x}")  # never blocks on a FIFO put there
    try:
        return int(data.split()[0]) if data else None
    except (ValueError, IndexError):
        return None


def claim_tag(pid: int, line: str | None = None) -> int:
    d = session_dir()
    for _ in range(256):
        tag = secrets.randbits(12)
        path = d / f"{tag:03x}"
        owner = session_owner(tag)
        if owner is not None and not _alive(owner):
            path.unlink(missing_ok=True)  # a dead session's claim
        try:
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        except FileExistsError:
            continue
        try:
            with os.fdopen(fd, "w") as f:
                f.write(line or f"{pid}\n")
        except BaseException as exc:
            path.unlink(missing_ok=True)  # a full disk must not leave an empty claim
            if isinstance(exc, OSError) and exc.filename is None:
                # The buffered write's error names no file, and the user must learn
                # which directory is full (it read "cannot write the output").
                raise OSError(exc.errno, exc.strerror, str(path)) from exc
            raise
        return tag
    raise OSError("no free ipctop session tag (256 tries)")


def release_tag(tag: int) -> None:
    (session_dir() / f"{tag:03x}").unlink(missing_ok=True)


def claim_tags(n: int) -> list[int]:
    """n tags for this process, all or none."""
    tags: list[int] = []
    try:
        for _ in range(n):
            tags.append(claim_tag(os.getpid()))
    except BaseException:
        release_tags(tags)
        raise
    return tags


def release_tags(tags: list[int]) -> None:
    for t in tags:
        release_tag(t)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def live_objects() -> list[tuple[str, int, int, int]]:
    """(kind, id, key, owner uid) of every SysV object visible here."""
    out = []
    for kind in ("msg", "sem", "shm"):
        try:
            lines = Path(f"/proc/sysvipc/{kind}").read_text().splitlines()
        except OSError:
            continue
        if not lines:
            continue
        head = lines[0].split()
        uid_col = head.index("uid")
        for line in lines[1:]:
            f = line.split()
            out.append((kind, int(f[1]), int(f[0]) & 0xFFFFFFFF, int(f[uid_col])))
    return out


def key_of(kind: str, ident: int) -> int | None:
    for k, i, key, _ in live_objects():
        if k == kind and i == ident:
            return key
    return None


def remove_checked(
    kind: str, ident: int, key: int, current: dict[tuple[str, int], int] | None = None
) -> bool:
    """IPC_RMID only if `ident` still carries `key`; gone already counts as done.

    `current` is one reading of the keys ({(kind, id): key}) for removing many:
    a reading per object is n^2 lines for a life-cycle run's 32768 queues.
    """
    import sysv_ipc

    now = key_of(kind, ident) if current is None else current.get((kind, ident))
    if now != key:
        return False
    remove = {
        "msg": sysv_ipc.remove_message_queue,
        "sem": sysv_ipc.remove_semaphore,
        "shm": sysv_ipc.remove_shared_memory,
    }[kind]
    try:
        remove(ident)
    except sysv_ipc.ExistentialError:
        return False
    return True


IDS_OFFSET = 4096  # where a life-cycle area's int32 ids start (loops_sysv_multi.c)


def unlink_mq(name: str) -> bool:
    import ctypes
    import ctypes.util

    lib = ctypes.CDLL(ctypes.util.find_library("rt") or None, use_errno=True)
    rc: int = lib.mq_unlink(name.encode())
    return rc == 0


class ReaperClient:
    """The engine's end: announce and retract objects; close() at a normal stop."""

    def __init__(self, session_line: str | None = None) -> None:
        # session_line: what the session file says ("PID cpus=0-3"); the pid comes first.
        self.tag = claim_tag(os.getpid(), session_line)
        self.mq_journal = mq_journal.journal_path(session_dir(), os.getpid(), self.tag)
        self.warnings: list[str] = []
        try:
            self.proc: subprocess.Popen[str] | None = subprocess.Popen(
                [sys.executable, "-m", "ipctop.engine.reaper", str(os.getpid()), str(self.tag)],
                stdin=subprocess.PIPE,
                stdout=subprocess.DEVNULL,
                close_fds=True,
                start_new_session=True,  # a Ctrl-C to the terminal's group must not reach it
                text=True,
            )
        except OSError as exc:
            # The tag stays claimed until close(): released now, the live run's objects
            # would look orphaned and the user's own `ipctop clean` would remove them.
            self.proc = None
            self.warnings.append(f"no reaper ({exc}): a killed ipctop may leave objects")

    @property
    def key_base(self) -> int:
        return KEY_PREFIX | (self.tag << TAG_SHIFT)

    def new_key(self) -> int:
        return self.key_base | (secrets.randbits(TAG_SHIFT) or 1)

    def announce(self, line: str, flush: bool = True) -> None:
        """Tell the reaper; flush=False for SysV objects, which its tag sweep finds anyway.

        Each flush wakes the reaper, and on a loaded box that wake-up costs the
        engine its time slice: a bulk start of 1,024 pairs paid seconds for it.
        """
        if line.startswith("+ mq "):
            # Noted before the reaper is told: without one, clean still finds the name.
            mq_journal.note(self.mq_journal, line[5:])
        if self.proc is None or self.proc.stdin is None:
            return
        try:
            self.proc.stdin.write(line + "\n")
            if flush:
                self.proc.stdin.flush()
        except (BrokenPipeError, ValueError) as exc:
            self.warnings.append(f"reaper gone ({exc}): a killed ipctop may leave objects")
            self.proc = None

    def claim_tags(self, n: int) -> list[int]:
        """n more tags for keys this engine makes in bulk (the life-cycle queues).

        Their session files name our pid but no CPUs (so they are no other
        session to contend with); the reaper sweeps them at EOF.
        """
        tags = claim_tags(n)
        for t in tags:
            self.announce(f"+ tag {t:03x}", flush=False)
        self.announce("# tags", flush=True)  # one wake-up for all
        return tags

    def release_tags(self, tags: list[int]) -> None:
        """Give back claim_tags' tags once nothing carries them."""
        for t in tags:
            self.announce(f"- tag {t:03x}", flush=False)
        release_tags(tags)

    def close(self) -> None:
        """EOF tells the reaper we are done; it sweeps our tag once and exits."""
        if self.proc is not None:
            try:
                if self.proc.stdin is not None:
                    self.proc.stdin.close()
            except BrokenPipeError:
                self.warnings.append("reaper pipe already closed")
            try:
                self.proc.wait(5)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
            self.proc = None
        # Every queue is unlinked by now (by the workload, or by the reaper at EOF).
        self.mq_journal.unlink(missing_ok=True)
        release_tag(self.tag)


def current_keys() -> dict[tuple[str, int], int]:
    """{(kind, id): key} of every SysV object visible here, from one reading."""
    return {(kind, ident): key for kind, ident, key, _ in live_objects()}


def sweep_tag(tag: int | set[int], uid: int) -> int:
    """Remove every object of ours carrying `tag` (or one of a set); returns how many."""
    tags = {tag} if isinstance(tag, int) else tag
    found = [
        (k, i, key) for k, i, key, owner in live_objects() if owner == uid and tag_of(key) in tags
    ]
    current = {(k, i): key for k, i, key in found}
    return sum(1 for k, i, key in found if remove_checked(k, i, key, current))


def main(argv: list[str]) -> int:
    parent, tag = int(argv[0]), int(argv[1])
    for sig in (signal.SIGINT, signal.SIGHUP, signal.SIGPIPE):
        signal.signal(sig, signal.SIG_IGN)
    registered: dict[tuple[str, str], int] = {}
    for line in sys.stdin:
        parts = line.split()
        if len(parts) < 3:
            continue
        op, kind, name = parts[:3]
        if op == "+":
            registered[(kind, name)] = int(parts[3]) if len(parts) > 3 else 0
        elif op == "-":
            registered.pop((kind, name), None)
    # EOF: the engine stopped or died. Remove what it still held.
    tags = {tag}
    for (kind, name), key in registered.items():
        if kind == "mq":
            unlink_mq(name)
        elif kind == "tag":
            tags.add(int(name, 16))
        else:
            remove_checked(kind, int(name), key)
    sweep_tag(tags, os.getuid())
    mq_journal.journal_path(session_dir(), parent, tag).unlink(missing_ok=True)
    for t in tags:
        if session_owner(t) == parent:
            release_tag(t)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
