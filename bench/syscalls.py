"""What one counted round calls, measured with strace.

Runs one unit of a workload on the native engine in processes mode (each
end is a forked, C-only child, so its trace holds the hot loop and a few
set-up calls, none of the interpreter's), traces every child with
`strace -f -ff`, and divides each end's system calls by the rounds that end
counted. The loop is the same C function in threads mode.

    python bench/syscalls.py [--workloads all] [--seconds 1]

prints one row per workload: the calls per round of each end, and the calls
outside the loop (set-up and teardown, a constant). tests/engine/test_syscalls.py
checks the same figures against each workload's stated sequence.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

#: what one round of one end calls, by workload: syscall name -> calls per round.
#: A range (low, high) where the kernel decides (a futex is only waited on when
#: the word says so). semop is semtimedop on some architectures, sched_yield
#: runs while the token is not ours. "" for spin: no call at all.
SEQUENCES: dict[str, dict[str, tuple[float, float]]] = {
    "sysv-msg": {"msgrcv": (1, 1), "msgsnd": (1, 1)},
    "sysv-sem": {"semop": (2, 2)},
    "sysv-msg-shared": {"msgrcv": (1, 1), "msgsnd": (1, 1)},
    "sysv-sem-multi": {"semop": (2, 2)},
    "pipe": {"read": (1, 1), "write": (1, 1)},
    "socket": {"read": (1, 1), "write": (1, 1)},
    "eventfd": {"read": (1, 1), "write": (1, 1)},
    "posix-sem": {"futex": (0, 2)},
    "posix-mq": {"mq_timedreceive": (1, 1), "mq_timedsend": (1, 1)},
    "futex": {"futex": (1, 2)},
    "signal": {"rt_sigtimedwait": (1, 1), "kill": (1, 1)},
    "spin": {},
    "spin-yield": {"sched_yield": (1, 1e9)},
}
#: msgbench is not a ping-pong: a round is one queue through its five phases
LIFECYCLE = {"msgget": (1, 1), "msgsnd": (1, 1), "msgctl": (3, 3)}
LIFECYCLE_QUEUES = 64
#: calls that are one name to the kernel but two to strace
ALIASES = {"semtimedop": "semop", "tgkill": "kill"}
#: workloads whose ends must sit on two CPUs to make progress
CROSS = {"spin"}

_DRIVER = r"""
import json, sys, time
from ipctop.engine.engine import Engine, RunConfig
w, placement, cpus, seconds, size, queues = sys.argv[1:7]
opt = lambda x: int(x) if x != "-" else None
cfg = RunConfig(w, placement, "processes", tuple(int(c) for c in cpus.split(",")), "native",
                   size=opt(size), queues=opt(queues))
e = Engine(cfg)
e.start(1)
# At least the time asked, then on until every end has 200 rounds (a loaded box is slow
# under strace), for 30 s at most.
time.sleep(float(seconds))
deadline = time.monotonic() + 30
while time.monotonic() < deadline and min(e.counters.rounds(x.slot) for x in e.ends()) < 200:
    time.sleep(0.05)
ends = [(end.pid, end.slot) for end in e.pairs[0].ends]
e.stop()
out = []
for pid, slot in ends:
    r = e.counters.read(slot)
    out.append({"pid": pid, "rounds": r.rounds, "ops": list(r.ops)})
print(json.dumps({"ends": out, "size": e.workload.size}))
"""

_CALL = re.compile(r"^(?:\[pid\s+\d+\]\s+)?([a-z_0-9]+)\(")
#: the byte count a send passes, just after its buffer
_SENT = {
    "msgsnd": re.compile(r"^msgsnd\(\d+, \{.*\}, (\d+), "),
    "mq_timedsend": re.compile(r'^mq_timedsend\(\d+, ".*"(?:\.\.\.)?, (\d+), '),
    "write": re.compile(r'^write\(\d+, ".*"(?:\.\.\.)?, (\d+)\)'),
}


@dataclass
class EndTrace:
    pid: int
    rounds: int
    calls: Counter
    ops: list[int] = field(default_factory=list)
    lines: list[str] = field(default_factory=list)

    def per_round(self, name: str) -> float:
        return self.calls.get(name, 0) / self.rounds if self.rounds else float("nan")

    def sent_sizes(self) -> Counter:
        """How many sends passed each byte count (msgsnd, mq_timedsend, write)."""
        out: Counter = Counter()
        for line in self.lines:
            for rx in _SENT.values():
                m = rx.match(line)
                if m:
                    out[int(m.group(1))] += 1
        return out

    def outside(self, expected: dict) -> int:
        """Calls that are not part of the stated sequence (set-up, teardown, strays)."""
        return sum(n for k, n in self.calls.items() if k not in expected)


@dataclass
class Trace:
    workload: str
    size: int | None
    ends: list[EndTrace]


def have_strace() -> bool:
    return shutil.which("strace") is not None


def trace(
    workload: str,
    seconds: float = 0.5,
    cpus: str = "0",
    size: int | None = None,
    placement: str | None = None,
    queues: int | None = None,
) -> Trace:
    """Run one unit under strace; each end's calls by name, and its rounds."""
    if placement is None:
        placement = "cross" if workload in CROSS else "same"
    if placement == "cross" and "," not in cpus:
        cpus = "0,1"
    with tempfile.TemporaryDirectory(prefix="ipctop-strace-") as tmp:
        prefix = os.path.join(tmp, "t")
        cmd = ["strace", "-f", "-ff", "-qq", "-o", prefix, sys.executable, "-c", _DRIVER,
               workload, placement, cpus, str(seconds), "-" if size is None else str(size),
               "-" if queues is None else str(queues)]  # fmt: skip
        r = subprocess.run(cmd, capture_output=True, text=True, cwd=ROOT, timeout=120)
        if r.returncode != 0:
            raise RuntimeError(f"{workload} under strace failed: {r.stderr.strip()[-400:]}")
        result = json.loads(r.stdout.strip().splitlines()[-1])
        ends = []
        for e in result["ends"]:
            lines = Path(f"{prefix}.{e['pid']}").read_text().splitlines()
            calls: Counter = Counter()
            for line in lines:
                m = _CALL.match(line)
                if m:
                    calls[ALIASES.get(m.group(1), m.group(1))] += 1
            ends.append(EndTrace(e["pid"], e["rounds"], calls, e["ops"], lines))
    return Trace(workload, result["size"], ends)


def main() -> int:
    from ipctop.engine.workloads import WORKLOADS

    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--workloads", default="all")
    p.add_argument("--seconds", type=float, default=1.0)
    args = p.parse_args()
    if not have_strace():
        print("strace is not installed", file=sys.stderr)
        return 4
    names = list(WORKLOADS) if args.workloads == "all" else args.workloads.split(",")
    print("| workload | bytes | end | rounds | calls per round | calls outside the loop |")
    print("|---|---|---|---|---|---|")
    for name in names:
        life = name == "sysv-lifecycle"
        t = trace(name, args.seconds, queues=LIFECYCLE_QUEUES if life else None)
        expected = LIFECYCLE if life else SEQUENCES.get(name, {})
        for i, end in enumerate(t.ends):
            shown = expected or {k: 0 for k, _ in end.calls.most_common(3)}
            per = ", ".join(f"{k} {end.per_round(k):.3f}" for k in shown) or "none"
            size = "-" if t.size is None else str(t.size)
            print(f"| {name} | {size} | {i} | {end.rounds:,} | {per} | {end.outside(expected)} |")
    return 0


if __name__ == "__main__":
    sys.path.insert(0, str(ROOT))
    raise SystemExit(main())
