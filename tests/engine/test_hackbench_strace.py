"""strace from outside: each hackbench task's system calls per message.

rt-tests' hackbench has each sender write one message per receiver per loop
and each receiver read its F x L messages; ipctop's fixed run must do just
that and nothing more in its loop: a sender's writes are F x L data writes
plus its one "ready" byte, a receiver's reads F x L data reads, its one
write the "ready" byte.
"""

from __future__ import annotations

import re
import shutil
import subprocess
import sys

import pytest
from conftest import ROOT, two_cpus

from ipctop.engine.objects import _native

pytestmark = [
    pytest.mark.skipif(shutil.which("strace") is None, reason="strace is not installed"),
    pytest.mark.skipif(_native is None, reason="the native extension is not built"),
]

CALL = re.compile(r"^(read|write)\((\d+), .*, (\d+)\)\s+= (-?\d+)")
FDS, LOOPS, SIZE = 3, 40, 100
SHORT_READS = 3  # reads a split message may add on a loaded box


def _calls(text: str) -> list[tuple[str, int, int]]:
    """(call, bytes asked, bytes done) of every read and write in one task's trace."""
    out = []
    for line in text.splitlines():
        m = CALL.match(line)
        if m:
            out.append((m.group(1), int(m.group(3)), int(m.group(4))))
    return out


@two_cpus
@pytest.mark.parametrize("transport", ["socket", "pipe"])
def test_one_write_per_message_per_receiver_and_one_read_per_message(tmp_path, transport) -> None:
    cmd = [
        "strace", "-f", "-ff", "-qq", "-e", "trace=read,write", "-o", str(tmp_path / "t"),
        sys.executable, "-m", "ipctop", "hackbench", "--groups", "1", "--fds", str(FDS),
        "--loops", str(LOOPS), "--size", str(SIZE), "--transport", transport,
        "--mode", "process",
    ]  # fmt: skip
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=120, cwd=ROOT)
    if r.returncode != 0 and "ptrace" in r.stderr:
        pytest.skip(f"strace cannot trace here: {r.stderr.strip()}")
    assert r.returncode == 0, r.stderr
    traces = [_calls(p.read_text()) for p in tmp_path.glob("t.*")]
    data = [[c for c in t if c[1] == SIZE] for t in traces]
    senders = [t for t, d in zip(traces, data) if d and all(c[0] == "write" for c in d)]
    receivers = [t for t, d in zip(traces, data) if d and all(c[0] == "read" for c in d)]
    assert len(senders) == FDS and len(receivers) == FDS, [len(d) for d in data]
    for t in senders:
        writes = [c for c in t if c[0] == "write"]
        assert [c for c in writes if c[1] == SIZE] == [("write", SIZE, SIZE)] * (FDS * LOOPS)
        assert [c for c in writes if c[1] != SIZE] == [("write", 1, 1)]  # "ready"
        assert not [c for c in t if c[0] == "read"]
    for t in receivers:
        reads = [c for c in t if c[0] == "read"]
        # One read a message; a short read (the kernel may split a stream) is
        # finished by one more read for the rest, never by a poll loop.
        assert sum(c[2] for c in reads) == FDS * LOOPS * SIZE
        assert FDS * LOOPS <= len(reads) <= FDS * LOOPS + SHORT_READS, len(reads)
        assert [c for c in t if c[0] == "write"] == [("write", 1, 1)]
