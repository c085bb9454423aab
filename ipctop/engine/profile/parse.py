"""Read `perf script -F pid,tid,time,ip,sym,dso` output, and nothing more.

Those fields are perf's stable output option: a header line per sample
("PID/TID TIME:", the pid right-aligned in five columns), then one line per
call-chain frame, starting with a tab
("ADDR SYM (DSO)"), leaf first, then a blank line. A sample recorded without
a chain has its one frame on the header line. Counting happens while
reading, so a window never holds its samples, only their tallies.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

CHAIN_DEPTH = 8  # callers kept per chain: enough to see the syscall it came from
KERNEL_DSOS = ("[kernel.kallsyms]", "[kernel.vmlinux]")


def frame_key(sym: str, dso: str) -> tuple[str, str]:
    """(name, dso) with the dso cut to its file name; unknown code keeps its dso."""
    base = dso.rsplit("/", 1)[-1] if dso.startswith("/") else dso
    return sym, base


def is_kernel(dso: str) -> bool:
    return dso in KERNEL_DSOS or dso.startswith("[kernel")


@dataclass
class Tally:
    """What one window's samples add up to."""

    t0: float | None = None
    t1: float | None = None
    cpu_samples: int = 0  # every sample on the profiled CPUs
    samples: int = 0  # those of the pairs' threads
    owners: Counter[str] = field(default_factory=Counter)  # pairs / ipctop / perf / idle / other
    self_counts: Counter[tuple[str, str]] = field(default_factory=Counter)  # leaf (name, dso)
    total_counts: Counter[tuple[str, str]] = field(
        default_factory=Counter
    )  # anywhere in the chain, once
    chains: dict[tuple[str, str], Counter[tuple[str, ...]]] = field(
        default_factory=dict
    )  # leaf -> callers


def _frame(text: str) -> tuple[str, str] | None:
    # "ffffffff81aa41e9 __do_semtimedop ([kernel.kallsyms])"; a symbol may hold spaces.
    text = text.strip()
    if not text or not text.endswith(")") or " (" not in text:
        return None
    head, dso = text[:-1].rsplit(" (", 1)
    parts = head.split(None, 1)
    sym = parts[1] if len(parts) == 2 else "[unknown]"
    return frame_key(sym, dso)


def tally(
    lines: Iterable[str],
    owner_of: Callable[[int, int], str],
    since: float | None = None,
    until: float | None = None,
) -> Tally:
    """Count the samples; owner_of(pid, tid) names who ran ("pairs" is profiled)."""
    out = Tally()
    frames: list[tuple[str, str]] = []
    owner: str | None = None

    def close() -> None:
        if owner is None:
            return
        out.cpu_samples += 1
        out.owners[owner] += 1
        if owner != "pairs" or not frames:
            return
        out.samples += 1
        leaf = frames[0]
        out.self_counts[leaf] += 1
        for key in set(frames):
            # An unwinder's "[unknown]" frame is not a caller anyone can name.
            if key[0] != "[unknown]" or key == leaf:
                out.total_counts[key] += 1
        callers = tuple(name for name, _ in frames[1 : 1 + CHAIN_DEPTH])
        out.chains.setdefault(leaf, Counter())[callers] += 1

    for line in lines:
        if not line.strip():
            close()
            owner, frames = None, []
            continue
        # Frames start with a tab; a header may start with spaces (pids are padded to 5).
        if line[0] == "\t":
            if owner is not None:
                f = _frame(line)
                if f is not None:
                    frames.append(f)
            continue
        close()
        owner, frames = None, []
        # "PID/TID TIME: [ADDR SYM (DSO)]"
        head, _, rest = line.partition(":")
        words = head.split()
        if len(words) < 2 or "/" not in words[0]:
            continue
        try:
            pid, tid = (int(x) for x in words[0].split("/", 1))
            t = float(words[1])
        except ValueError:
            continue
        if (since is not None and t < since) or (until is not None and t > until):
            continue
        out.t0 = t if out.t0 is None else min(out.t0, t)
        out.t1 = t if out.t1 is None else max(out.t1, t)
        owner = owner_of(pid, tid)
        f = _frame(rest)
        if f is not None:
            frames.append(f)
    close()
    return out
