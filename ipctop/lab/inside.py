"""What runs inside the guest: the facts of its kernel, then the in-guest tests.

    python -m ipctop.lab.inside OUT SOCKETS CORES THREADS ACCEL SCOPE [-- CMD ...]

Everything it makes goes to OUT, the one folder the guest can write that the
host reads: facts/ (lscpu, /proc/interrupts, schedstat, uname), pytest.log and
junit.xml from tests/lab, the records and screenshots the tests leave there.
SCOPE is "full", "short" (check and matrix on a few CPUs that still hold
every class, as an emulated guest on a loaded box is slow) or "smoke" (CI's:
only SMOKE_FILES, the topology and /proc tests, which fit CI's minutes under
TCG where check alone took 9). With a
command after `--` it runs that instead of the tests. The guest's
exit status is the tests' (or the command's).
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

# Files copied as they are, so that a reader on the host sees what the guest's kernel said.
FACTS = {
    "lscpu.txt": ["lscpu"],
    "lscpu-p.csv": ["lscpu", "-p"],
    "uname.txt": ["uname", "-a"],
}
PROC = ("interrupts", "schedstat", "cpuinfo", "cmdline", "sys/kernel/numa_balancing")
SMOKE_FILES = ("test_guest_topology.py", "test_guest_procfs.py")


def tests_dir() -> Path | None:
    """tests/lab of this checkout; None for an installed (non-editable) ipctop."""
    d = Path(__file__).resolve().parent.parent.parent / "tests" / "lab"
    return d if d.is_dir() else None


def _fact_name(proc_name: str) -> str:
    return "proc-" + proc_name.replace("/", "-") + ".txt"


def _facts(out: Path) -> None:
    facts = out / "facts"
    facts.mkdir(parents=True, exist_ok=True)
    for name, argv in FACTS.items():
        with open(facts / name, "wb") as f:
            subprocess.run(argv, stdout=f, stderr=subprocess.STDOUT, check=False)
    for name in PROC:
        try:
            (facts / _fact_name(name)).write_bytes(Path("/proc", name).read_bytes())
        except OSError as e:
            (facts / _fact_name(name)).write_text(f"unreadable: {e}\n")


def _schedstats_on() -> None:
    # schedstat's per-CPU counters move only with this sysctl; the guest is ours to set.
    try:
        Path("/proc/sys/kernel/sched_schedstats").write_text("1\n")
    except OSError as e:
        print(f"lab: kernel.sched_schedstats not set: {e}", file=sys.stderr)


def main(argv: list[str]) -> int:
    if len(argv) < 6:
        print(
            "usage: python -m ipctop.lab.inside OUT SOCKETS CORES THREADS ACCEL SCOPE [-- CMD ...]"
        )
        return 2
    out = Path(argv[0])
    env = dict(os.environ)
    env["IPCTOP_LAB_GUEST"] = "1"
    env["IPCTOP_LAB_OUT"] = str(out)
    env["IPCTOP_LAB_SMP"] = ",".join(argv[1:4])  # sockets,cores,threads QEMU was given
    env["IPCTOP_LAB_ACCEL"] = argv[4]
    env["IPCTOP_LAB_SCOPE"] = argv[5]
    # The root file system is the host's, read-only: no byte code or caches written into it.
    env["PYTHONDONTWRITEBYTECODE"] = "1"
    _facts(out)
    _schedstats_on()
    rest = argv[6:]
    if rest[:1] == ["--"]:
        rest = rest[1:]
    if rest:
        return subprocess.run(rest, env=env, check=False).returncode
    tests = tests_dir()
    if tests is None:
        print("lab: tests/lab not found: run the lab from a checkout (pip install -e .)")
        return 2
    cmd = [
        sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-ra", "-v",
        f"--junitxml={out / 'junit.xml'}", "--rootdir", str(tests.parent.parent),
    ]  # fmt: skip
    cmd += [str(tests / f) for f in SMOKE_FILES] if argv[5] == "smoke" else [str(tests)]
    with open(out / "pytest.log", "wb") as log:
        proc = subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
        stream = proc.stdout
        assert stream is not None
        # os.read returns what is there: the log and the console follow the tests line by line.
        for chunk in iter(lambda: os.read(stream.fileno(), 4096), b""):
            log.write(chunk)
            log.flush()
            sys.stdout.buffer.write(chunk)
            sys.stdout.flush()
        return proc.wait()


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
