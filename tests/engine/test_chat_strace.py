"""strace from outside: each chat end's system calls per message.

The chat design (native/loops_chat.c) says, per message a user sends: one
write by its client sender, one read by its server receiver, which hands it
to the other 19 members' queues (process-shared locks, no system call unless
a queue makes it wait), one write by each of those 19 server senders, and one
read by each of their client receivers. Here one room runs under strace -ff
(one trace per thread) and every end's trace is held to that: data calls only
on its own connection, one call per message (its own counter says how many),
the 19 forwards accounted for member by member, and in the loop nothing but
those calls and the room's shared futexes (a private futex there would be the
GIL: Python in the loop).
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from collections import Counter

import pytest
from conftest import ROOT, two_cpus

from ipctop.engine.objects import _native

pytestmark = [
    pytest.mark.skipif(shutil.which("strace") is None, reason="strace is not installed"),
    pytest.mark.skipif(_native is None, reason="the native extension is not built"),
]

USERS, SIZE, QUEUE = 20, 100, 32  # loops_chat.c: USERS a room, CHAT_QUEUE a member
DELIVERED = 4000  # messages the client receivers get before the stop (about 210 sent)
SPLITS = 3  # short calls a loaded box may add (as test_hackbench_strace)
MIN_SENT = 100  # fewer read by the servers and the per-member bounds say little

# One room, threads mode, run until DELIVERED; prints each end's role, tid and
# counts as they are once the ends have joined (read before the slots go).
DRIVER = """
import json, sys, time
from ipctop.engine.config import RunConfig
from ipctop.engine.engine import Engine

config = RunConfig(workload="chat", cpus=(0, 1), transport=sys.argv[1], mode="threads")
final = {}
with Engine(config) as engine:
    release = engine.counters.release
    def keep(slot):
        final[slot] = engine.counters.read(slot)
        release(slot)
    engine.counters.release = keep
    engine.start(1)
    ends = [(e.role, e.tid, e.slot) for e in engine.pairs[0].ends]
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if sum(engine.counters.read(s).rounds for _, _, s in ends) >= int(sys.argv[2]):
            break
        time.sleep(0.1)
print(json.dumps([{"role": r, "tid": t, "ops": final[s].ops[0], "rounds": final[s].rounds}
                  for r, t, s in ends]))
"""

CALL = re.compile(r"^(\w+)\((.*)\)\s+= (-?\d+|\?)")


def _trace(path) -> list[tuple[str, str, int | None]]:
    """(call, arguments, result) of every call in one thread's trace."""
    out = []
    for line in path.read_text().splitlines():
        m = CALL.match(line)
        if m:
            result = None if m.group(3) == "?" else int(m.group(3))
            out.append((m.group(1), m.group(2), result))
    return out


def _asked(call: tuple[str, str, int | None]) -> int:
    return int(call[1].rsplit(",", 1)[1])


class End:
    def __init__(self, info: dict, calls: list[tuple[str, str, int | None]]) -> None:
        self.role, self.ops, self.rounds = info["role"], info["ops"], info["rounds"]
        self.kind, self.member = self.role[:2], int(self.role[2:])
        # a message or the rest of one (the thread's start reads a sysfs file first)
        data = [c for c in calls if c[0] in ("read", "write") and _asked(c) <= SIZE]
        self.fds = {c[1].split(",")[0] for c in data}
        self.calls = Counter(c[0] for c in data)
        self.messages = sum(c[2] for c in data if c[2] and c[2] > 0) // SIZE
        self.extra = len(data) - self.messages  # calls beyond one a message
        at = [i for i, c in enumerate(calls) if c[0] in ("read", "write") and _asked(c) <= SIZE]
        first, last = (at[0], at[-1]) if at else (None, -1)
        loop = calls[first : last + 1] if first is not None else []
        self.loop_other = Counter(
            c[0] if c[0] != "futex" else f"futex {c[1].split(',')[1].strip()}"
            for c in loop
            if c[0] not in ("read", "write")
        )


def _run(tmp_path, transport: str) -> dict[str, End]:
    cmd = [
        "strace", "-f", "-ff", "-qq", "-o", str(tmp_path / "t"),
        sys.executable, "-c", DRIVER, transport, str(DELIVERED),
    ]  # fmt: skip
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=180, cwd=ROOT)
    if r.returncode != 0 and "ptrace" in r.stderr:
        pytest.skip(f"strace cannot trace here: {r.stderr.strip()}")
    assert r.returncode == 0, r.stderr
    ends = {}
    for info in json.loads(r.stdout.splitlines()[-1]):
        ends[info["role"]] = End(info, _trace(tmp_path / f"t.{info['tid']}"))
    assert len(ends) == 4 * USERS
    return ends


@two_cpus
@pytest.mark.parametrize("transport", ["tcp", "unix"])
def test_one_send_nineteen_forwards_and_their_reads_per_message(tmp_path, transport) -> None:
    ends = _run(tmp_path, transport)

    def side(kind: str) -> list[End]:
        return [ends[f"{kind}{u}"] for u in range(USERS)]

    cs, cr, sr, ss = side("CS"), side("CR"), side("SR"), side("SS")
    for u in range(USERS):
        # A user's client ends share its client socket, its server ends the server's.
        assert len(cs[u].fds) == 1 and cs[u].fds == cr[u].fds, (cs[u].fds, cr[u].fds)
        assert len(sr[u].fds) == 1 and sr[u].fds == ss[u].fds, (sr[u].fds, ss[u].fds)
        assert cs[u].fds != sr[u].fds
    for e in cs + ss:
        assert set(e.calls) <= {"write"}, (e.role, e.calls)
    for e in cr + sr:
        assert set(e.calls) <= {"read"}, (e.role, e.calls)
    for e in ends.values():
        # One call a message, as the end's own counter has it; the stop may end
        # one call (EOF, EPIPE) and a stream may split a message (short calls).
        counted = e.rounds if e.kind == "CR" else e.ops
        # a receiver may have read one message the stop kept it from counting
        assert e.messages - counted in ((0, 1) if e.kind in ("CR", "SR") else (0,)), (
            e.role, e.messages, counted,
        )  # fmt: skip
        # One call a message; the stop may end one more (EOF, EPIPE) and a
        # stream may split a message in two (SPLITS at most).
        assert 0 <= e.extra <= 1 + SPLITS, (e.role, e.extra)
        # In the loop: nothing but the data calls and the room's shared futexes
        # (a _PRIVATE futex there would be the GIL, i.e. Python).
        other = set(e.loop_other)
        assert not [x for x in other if not x.startswith("futex") or "PRIVATE" in x], (
            e.role, e.loop_other,
        )  # fmt: skip
        if e.kind in ("CS", "CR"):
            assert not other, (e.role, e.loop_other)  # the client sides share no queue
    read = [e.messages for e in sr]  # messages the server took in, per user
    sent = sum(read)
    assert sent >= MIN_SENT, f"only {sent} messages reached the server under strace"
    for v in range(USERS):
        # Each server sender writes what the other 19 members' receivers read, one
        # write a message: never more, and short of it by at most the member's
        # queue and the one message each receiver may hold when the stop came.
        others = sent - read[v]
        assert others - QUEUE - (USERS - 1) <= ss[v].messages <= others, (v, ss[v].messages, others)
        # what the server sent a member, its client receiver read (minus what
        # the stop left in the socket); what a client wrote, its server read
        assert cr[v].messages <= ss[v].messages and cs[v].messages >= sr[v].messages
    forwards = sum(e.messages for e in ss)
    assert (USERS - 1) * sent - USERS * (QUEUE + USERS - 1) <= forwards <= (USERS - 1) * sent
