"""`python -m ipctop.lab`: say what is missing, or boot a guest and run the in-guest tests.

    python -m ipctop.lab --needs
    python -m ipctop.lab [--cpus 8|32|64] [--accel auto|kvm|tcg] [--out DIR]
                         [--numa-balancing off|on] [--short | --smoke] [-- CMD ...]

Exit codes: 0 the guest's tests (or command) passed; 1 they failed, or the
guest timed out or never ran its command; 2 usage; 4 the lab's needs are
missing (each named with its install command); 128+N a signal, after the
guest's whole process group is killed.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from collections.abc import Sequence

from ..errors import EXIT_FAILED, EXIT_OK, EXIT_UNSUPPORTED, EXIT_USAGE
from ..signals import Interrupted, interruptible
from . import accel as accel_mod
from . import guest
from .needs import find_kernels, missing, missing_line
from .topology import PRESETS, LabTopology

# QEMU warns once per CPUID bit TCG cannot emulate; the log keeps them, the screen does not.
NOISE = "TCG doesn't support requested feature"
TIMEOUT = 3600.0  # seconds: a command, the smoke and short scopes, any 8-CPU guest
# The full scope on a big emulated guest: its check took more than 32 min to reach
# 63 pairs at 64 CPUs, where each step's 128 ends share 2 host CPUs.
FULL_TIMEOUT = 10800.0


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> None:  # type: ignore[override]
        self.exit(EXIT_USAGE, f"ipctop.lab: {message}\n")


def build_parser() -> argparse.ArgumentParser:
    p = _Parser(
        prog="python -m ipctop.lab",
        description="boot a guest kernel with many CPUs, NUMA nodes and SMT siblings "
        "(QEMU via virtme-ng) and run ipctop's in-guest tests in it",
    )
    p.add_argument("--needs", action="store_true", help="only say what is missing, then exit")
    p.add_argument(
        "--cpus", type=int, choices=sorted(PRESETS), default=64, help="guest preset (default 64)"
    )
    p.add_argument("--accel", choices=("auto", "kvm", "tcg"), default="auto")
    p.add_argument(
        "--kernel", help="guest kernel image (default: the newest /boot/vmlinuz-*-amd64)"
    )
    p.add_argument("--out", help="folder for records, logs, screenshots (default lab-out-CPUS)")
    p.add_argument(
        "--timeout",
        type=float,
        help=f"seconds before the guest is killed ({TIMEOUT:.0f}; {FULL_TIMEOUT:.0f} for the "
        "full scope above 8 CPUs, whose check alone can take 2 h emulated)",
    )
    p.add_argument(
        "--boot-timeout",
        type=float,
        default=900.0,
        help="seconds for the guest to reach its command; a guest that does not is killed "
        "and booted once more, within --timeout (900)",
    )
    p.add_argument(
        "--numa-balancing",
        choices=("off", "on"),
        default="off",
        help="the guest kernel's automatic NUMA balancing (default off: under emulation "
        "its TLB shootdowns wait on every vCPU and crawl a big guest; on is the kernel's "
        "own default on a NUMA box)",
    )
    scope = p.add_mutually_exclusive_group()
    scope.add_argument(
        "--short",
        action="store_true",
        help="check and matrix on 4 CPUs that hold every class, not all",
    )
    scope.add_argument(
        "--smoke",
        action="store_true",
        help="CI's scope: only the topology and /proc tests (no check, matrix or monitor)",
    )
    p.add_argument("command", nargs=argparse.REMAINDER, help="-- CMD ...: run CMD in the guest")
    return p


def _guest_argv(out: str, cpus: int, accel_name: str, scope: str, command: list[str]) -> list[str]:
    topo = PRESETS[cpus]
    argv = [sys.executable, "-m", "ipctop.lab.inside", out]
    argv += [str(topo.sockets), str(topo.cores), str(topo.threads), accel_name, scope]
    return argv + (["--", *command] if command else [])


def _say_log(log: str, lines: int = 40) -> None:
    shown = [ln for ln in log.splitlines() if NOISE not in ln]
    for ln in shown[-lines:]:
        print(f"  | {ln}", file=sys.stderr)


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    command = list(args.command)
    if command[:1] == ["--"]:
        command = command[1:]
    gaps = missing()
    if args.kernel is not None:
        gaps = [m for m in gaps if "kernel" not in m.what]
        if not os.path.isfile(args.kernel):
            print(f"ipctop.lab: --kernel {args.kernel}: no such file", file=sys.stderr)
            return EXIT_USAGE
    if gaps:
        print(missing_line(gaps), file=sys.stderr)
        return EXIT_UNSUPPORTED
    if args.needs:
        print(f"lab: everything is here (kernel {find_kernels()[-1]})")
        return EXIT_OK
    kernel = args.kernel or find_kernels()[-1]
    out = os.path.abspath(args.out or f"lab-out-{args.cpus}")
    try:
        os.makedirs(out, exist_ok=True)
    except OSError as e:
        print(f"ipctop.lab: --out {out}: {e.strerror}", file=sys.stderr)
        return EXIT_USAGE
    topo = PRESETS[args.cpus]
    try:
        with interruptible():
            return _boot(args, kernel, out, topo, command)
    except Interrupted as e:
        # guest.run's finally has killed the guest's process group by now. What the
        # run was is still written: a stopped 64-CPU try is a finding too.
        _write_summary(out, _plan(args, kernel, topo) | {"stopped_by": str(e)})
        print(f"ipctop.lab: stopped by {e}; the guest was killed", file=sys.stderr)
        return e.exit_code
    except RuntimeError as e:
        print(f"ipctop.lab: {e}", file=sys.stderr)
        return EXIT_FAILED


def _plan(args: argparse.Namespace, kernel: str, topo: LabTopology) -> dict[str, object]:
    """What was asked for, known before the guest boots."""
    return {
        "preset": args.cpus,
        "topology": topo.describe(),
        "kernel": kernel,
        "numa_balancing": args.numa_balancing,
    }


def _write_summary(out: str, summary: dict[str, object]) -> None:
    with open(os.path.join(out, "lab.json"), "w", encoding="utf-8") as f:
        json.dump(summary, f, indent=2)


def _boot(
    args: argparse.Namespace, kernel: str, out: str, topo: LabTopology, command: list[str]
) -> int:
    print(f"lab: {topo.describe()}, kernel {kernel}", file=sys.stderr)
    acc = accel_mod.choose(kernel, args.accel)
    for why in acc.tried:
        print(f"lab: not used: {why}", file=sys.stderr)
    print(f"lab: accelerator {acc.note()}", file=sys.stderr)
    scope = "smoke" if args.smoke else "short" if args.short else "full"
    if args.timeout is None:
        big = scope == "full" and not command and args.cpus > 8
        args.timeout = FULL_TIMEOUT if big else TIMEOUT
    argv = _guest_argv(out, args.cpus, acc.name, scope, command)
    balancing = args.numa_balancing == "on"
    print(f"lab: NUMA balancing {args.numa_balancing} in the guest", file=sys.stderr)
    t0 = time.monotonic()
    run = guest.run(kernel, topo, acc, out, argv, args.timeout, args.boot_timeout, balancing)
    left = args.timeout - (time.monotonic() - t0)
    retried = run.boot_hung and left > 0
    if retried:
        print(
            f"lab: the guest did not reach its command in {args.boot_timeout:.0f} s: "
            "killed; booting once more",
            file=sys.stderr,
        )
        run = guest.run(kernel, topo, acc, out, argv, left, args.boot_timeout, balancing)
    summary = _plan(args, kernel, topo) | {
        "accelerator": acc.name,
        "cpu_model": acc.cpu_model,
        "note": acc.note(),
        "boot_seconds": run.boot_seconds,
        "boot_retried": retried,
        "total_seconds": run.total_seconds,
        "returncode": run.returncode,
        "scope": scope,
        "command": list(run.command),
        "finished": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
    }
    _write_summary(out, summary)
    emu = " (TCG emulation, not the kernel's speed)" if acc.emulated else " (in a guest)"
    boot = "never reached its command" if run.boot_seconds is None else f"{run.boot_seconds:.0f} s"
    print(f"lab: boot to first command: {boot}{emu}; total {run.total_seconds:.0f} s")
    print(f"lab: logs, records and screenshots in {out}")
    if run.boot_hung:
        print(
            f"ipctop.lab: the guest did not reach its command in {args.boot_timeout:.0f} s, "
            "twice (or --timeout left no second boot); vng's log:",
            file=sys.stderr,
        )
        _say_log(run.log)
        return EXIT_FAILED
    if run.returncode is None:
        print(f"ipctop.lab: guest killed after --timeout {args.timeout:.0f} s", file=sys.stderr)
        _say_log(run.log)
        return EXIT_FAILED
    if run.boot_seconds is None:
        print("ipctop.lab: the guest never ran its command; vng's log:", file=sys.stderr)
        _say_log(run.log)
        return EXIT_FAILED
    return EXIT_OK if run.returncode == 0 else EXIT_FAILED
