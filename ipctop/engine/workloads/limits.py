"""Hard limits a workload meets before its first pair: each names its sysctl."""

from __future__ import annotations

import errno
import os
import resource
import time
from pathlib import Path

from ...errors import ResourceError
from ..reaper import tag_of

PROC = Path("/proc")


def read_ints(path: Path) -> list[int] | None:
    try:
        return [int(x) for x in path.read_text().split()]
    except (OSError, ValueError):
        return None


def read_int(path: Path) -> int | None:
    vals = read_ints(path)
    return vals[0] if vals else None


_sysctls: dict[Path, tuple[float, int | None]] = {}
SYSCTL_TTL = 1.0  # seconds a sysctl read is reused: a bulk start checks one per pair


def read_sysctl(path: Path) -> int | None:
    now = time.monotonic()
    hit = _sysctls.get(path)
    if hit is not None and now - hit[0] < SYSCTL_TTL:
        return hit[1]
    value = read_int(path)
    _sysctls[path] = (now, value)
    return value


def check_fds(needed: int, what: str) -> None:
    """Refuse a pair whose descriptors would not fit under RLIMIT_NOFILE."""
    soft, _ = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft == resource.RLIM_INFINITY:
        return
    in_use = len(os.listdir("/proc/self/fd"))
    if in_use + needed > soft:
        raise ResourceError(
            f"{what} needs {needed} more file descriptors but {in_use} of {soft} are in use; "
            "raise the limit with `ulimit -n` (RLIMIT_NOFILE)"
        )


def fd_error(exc: OSError, what: str) -> Exception:
    """A descriptor-limit OSError as the ResourceError naming the limit to raise."""
    if exc.errno == errno.EMFILE:
        return ResourceError(
            f"{what}: {os.strerror(exc.errno)}; raise `ulimit -n` (RLIMIT_NOFILE) or remove pairs"
        )
    if exc.errno == errno.ENFILE:
        return ResourceError(f"{what}: {os.strerror(exc.errno)}; raise the sysctl fs.file-max")
    return exc


def check_mqueue(maxmsg: int, msgsize: int, proc: Path = PROC) -> None:
    """Queues of `maxmsg` messages of `msgsize` bytes must be allowed at all."""
    base = proc / "sys/fs/mqueue"
    msg_max = read_int(base / "msg_max")
    msgsize_max = read_int(base / "msgsize_max")
    queues_max = read_int(base / "queues_max")
    if msg_max is None or queues_max is None:
        raise ResourceError(
            f"cannot read {base}/msg_max and queues_max: this kernel may lack POSIX "
            "message queues (CONFIG_POSIX_MQUEUE)"
        )
    if msg_max < maxmsg:
        raise ResourceError(
            f"posix-mq needs queues of {maxmsg} messages but fs.mqueue.msg_max is {msg_max}; "
            f"raise the sysctl fs.mqueue.msg_max to at least {maxmsg}"
        )
    if msgsize_max is not None and msgsize_max < msgsize:
        raise ResourceError(
            f"posix-mq needs {msgsize}-byte messages but fs.mqueue.msgsize_max is "
            f"{msgsize_max}; raise the sysctl fs.mqueue.msgsize_max"
        )
    if queues_max < 2:
        raise ResourceError(
            f"posix-mq needs 2 queues per pair but fs.mqueue.queues_max is {queues_max}; "
            "raise the sysctl fs.mqueue.queues_max"
        )


def check_mq_count(ours: int, needed: int, proc: Path = PROC) -> None:
    """queues_max binds users without CAP_SYS_RESOURCE; root may go past it."""
    if os.geteuid() == 0:
        return
    queues_max = read_int(proc / "sys/fs/mqueue/queues_max")
    if queues_max is not None and ours + needed > queues_max:
        raise ResourceError(
            f"posix-mq would hold {ours + needed} queues but fs.mqueue.queues_max is "
            f"{queues_max}; raise the sysctl fs.mqueue.queues_max or remove pairs"
        )


def mq_error(exc: OSError, name: str) -> Exception:
    if exc.errno == errno.ENOSPC:
        return ResourceError(
            f"mq_open {name}: {os.strerror(exc.errno)}; raise the sysctl fs.mqueue.queues_max"
        )
    if exc.errno == errno.EMFILE:
        return ResourceError(
            f"mq_open {name}: {os.strerror(exc.errno)}; raise `ulimit -n` or the message queue "
            "byte limit (`ulimit -q`, RLIMIT_MSGQUEUE)"
        )
    if exc.errno == errno.EINVAL:
        return ResourceError(
            f"mq_open {name}: {os.strerror(exc.errno)}; raise the sysctls fs.mqueue.msg_max "
            "and fs.mqueue.msgsize_max"
        )
    if exc.errno == errno.ENOSYS:
        return ResourceError("this kernel has no POSIX message queues (CONFIG_POSIX_MQUEUE)")
    return exc


def sysv_sets_in_use(kind: str, proc: Path = PROC) -> list[list[str]]:
    try:
        return [line.split() for line in (proc / "sysvipc" / kind).read_text().splitlines()[1:]]
    except OSError:
        return []


def check_sem_array(nsems: int, proc: Path = PROC) -> None:
    """One array of `nsems`: within semmsl, and semmns/semmni not yet used up."""
    vals = read_ints(proc / "sys/kernel/sem")
    if not vals or len(vals) < 4:
        return  # unreadable (a container): semget's own error will name the limit
    semmsl, semmns, _semopm, semmni = vals[:4]
    if nsems > semmsl:
        raise ResourceError(
            f"an array of {nsems} semaphores is more than semmsl {semmsl} allows; "
            "raise the first field of the sysctl kernel.sem or use fewer --sems"
        )
    sets = sysv_sets_in_use("sem", proc)
    used = sum(int(f[3]) for f in sets if len(f) > 3 and f[3].isdigit())
    if used + nsems > semmns:
        raise ResourceError(
            f"{used} semaphores are in use and semmns is {semmns}: no room for {nsems} more; "
            "raise the second field of the sysctl kernel.sem or use fewer --sems"
        )
    if len(sets) + 1 > semmni:
        raise ResourceError(
            f"all {semmni} semaphore sets (semmni) are in use; "
            "raise the fourth field of the sysctl kernel.sem"
        )


_budget: dict[Path, int] = {}  # queues known to fit under msgmni at the last count


def check_msg_queues(needed: int, proc: Path = PROC, skip_tag: int | None = None) -> None:
    """`needed` more queues must fit under msgmni.

    skip_tag leaves out queues carrying that session tag: a life-cycle run
    reserves one queue per thread up front rather than counting the ones its
    threads happen to hold at this instant.

    Counting reads every queue on the box, so a bulk start of n pairs read n^2
    lines; the headroom found is spent first and counted again only when it
    runs out (msgget's own ENOSPC still names msgmni if others took it meanwhile).
    """
    if skip_tag is None and _budget.get(proc, 0) >= needed:
        _budget[proc] -= needed
        return
    msgmni = read_int(proc / "sys/kernel/msgmni")
    if msgmni is None:
        return  # unreadable (a container): msgget's own error will name the limit
    sets = sysv_sets_in_use("msg", proc)
    if skip_tag is not None:
        sets = [f for f in sets if tag_of(int(f[0]) & 0xFFFFFFFF) != skip_tag]
    used = len(sets)
    if used + needed > msgmni:
        raise ResourceError(
            f"{used} message queues exist and {needed} more would pass kernel.msgmni "
            f"({msgmni}); raise the sysctl kernel.msgmni or use fewer threads"
        )
    if skip_tag is None:
        # Half the headroom: other programs on the box may be making queues too.
        _budget[proc] = (msgmni - used - needed) // 2


def check_msgmnb(needed_bytes: int, proc: Path = PROC) -> None:
    """A queue must hold the bytes in flight, or msgsnd blocks for ever."""
    _within(
        read_sysctl(proc / "sys/kernel/msgmnb"),
        needed_bytes,
        f"a queue must hold {needed_bytes} bytes in flight but kernel.msgmnb is {{limit}}; "
        f"raise the sysctl kernel.msgmnb to at least {needed_bytes}",
    )


def _within(limit: int | None, needed: int, message: str) -> None:
    """Raise ResourceError(message with {limit} filled in) when a limit that could
    be read is below what is needed; an unreadable one (None) lets the kernel say."""
    if limit is not None and needed > limit:
        raise ResourceError(message.format(limit=limit))


def user_tasks(uid: int, proc: Path = PROC) -> int:
    """Threads of every process whose real uid is `uid`: what RLIMIT_NPROC counts."""
    n = 0
    for d in proc.iterdir():
        if not d.name.isdigit():
            continue
        try:
            status = (d / "status").read_text()
        except OSError:
            continue  # exited meanwhile
        fields = dict(line.split(":", 1) for line in status.splitlines() if ":" in line)
        if int(fields.get("Uid", "-1 0").split()[0]) == uid:
            n += int(fields.get("Threads", "1").strip())
    return n


def _all_tasks(proc: Path) -> int:
    """Every thread on the box, from the 4th field of /proc/loadavg ("running/total")."""
    try:
        return int((proc / "loadavg").read_text().split()[3].split("/")[1])
    except (OSError, ValueError, IndexError):
        return 1 << 62  # unknown: count ours instead


def check_tasks(needed: int, proc: Path = PROC) -> None:
    """`needed` more threads or processes must fit under RLIMIT_NPROC (`ulimit -u`)."""
    soft, _ = resource.getrlimit(resource.RLIMIT_NPROC)
    # The kernel exempts root (and CAP_SYS_RESOURCE / CAP_SYS_ADMIN) from the limit.
    if soft == resource.RLIM_INFINITY or os.getuid() == 0:
        return
    if _all_tasks(proc) + needed <= soft:
        return  # even every task on the box would fit: no need to count ours
    used = user_tasks(os.getuid(), proc)
    if used + needed > soft:
        raise ResourceError(
            f"{needed} more threads or processes would make {used + needed} for this user "
            f"but `ulimit -u` (RLIMIT_NPROC) is {soft}; raise it or use fewer pairs"
        )


def task_error(exc: BaseException, what: str) -> BaseException:
    """A thread or fork that the kernel refused (EAGAIN) as the ResourceError naming NPROC."""
    eagain = isinstance(exc, OSError) and exc.errno == errno.EAGAIN
    if eagain or (isinstance(exc, RuntimeError) and "can't start new thread" in str(exc)):
        return ResourceError(
            f"{what}: the kernel refused a new thread or process; raise `ulimit -u` "
            "(RLIMIT_NPROC) or the sysctl kernel.threads-max, or use fewer pairs"
        )
    return exc


def check_msg_size(size: int, in_flight: int, proc: Path = PROC) -> None:
    """A SysV message of `size` bytes within kernel.msgmax, `in_flight` of them within msgmnb."""
    _within(
        read_int(proc / "sys/kernel/msgmax"),
        size,
        f"--size {size} is more than kernel.msgmax ({{limit}}) allows in one SysV message; "
        f"raise the sysctl kernel.msgmax to at least {size} or use a smaller --size",
    )
    check_msgmnb(size * in_flight, proc)


def check_mq_size(size: int, proc: Path = PROC) -> None:
    """A POSIX message of `size` bytes within fs.mqueue.msgsize_max."""
    _within(
        read_int(proc / "sys/fs/mqueue/msgsize_max"),
        size,
        f"--size {size} is more than fs.mqueue.msgsize_max ({{limit}}) allows; raise the "
        f"sysctl fs.mqueue.msgsize_max to at least {size} or use a smaller --size",
    )


PIPE_DEFAULT_BYTES = 65536  # a new pipe's buffer (16 pages)


def check_pipe_size(size: int, proc: Path = PROC) -> None:
    """A message and a one-byte stop kick must fit one pipe's buffer, or a write blocks."""
    if size + 1 <= PIPE_DEFAULT_BYTES:
        return
    _within(
        read_int(proc / "sys/fs/pipe-max-size"),
        size + 1,
        f"--size {size} needs a pipe buffer of {size + 1} bytes but fs.pipe-max-size is "
        "{limit}; raise the sysctl fs.pipe-max-size or use a smaller --size",
    )


def check_socket_size(size: int, proc: Path = PROC) -> None:
    """A message must fit a unix socket's send buffer with room for the kernel's overhead."""
    limit = read_int(proc / "sys/net/core/wmem_default")
    if limit is not None and size > limit // 2:
        raise ResourceError(
            f"--size {size} is more than half of net.core.wmem_default ({limit}), a unix "
            "socket's send buffer; raise the sysctl net.core.wmem_default or use a smaller --size"
        )
