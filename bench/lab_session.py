#!/usr/bin/env python3
"""The pieces of issue 26 that need a big guest, run one after the other in one boot.

A 64-CPU lab guest takes about 4 minutes to boot under TCG on a 2-CPU box, so
one boot runs every step asked for, in the order given:

    python -m ipctop.lab --cpus 64 --out DIR --timeout S -- \\
        VENV/bin/python bench/lab_session.py record monitor-120x40 sampler monitor-80x24

Steps:
  record        `ipctop sweep` (sysv-sem, 1 pair on CPU 0, 2 runs of 0.5 s) into
                records/sweep-WHERE.json: the record tests/lab/test_lab_kernels.py
                compares with the host's (made by this same step on the host)
  sampler       bench/sampler_scale.py --pairs 64 --samples 40 --paired into
                sampler-WHERE.json (the sampler's own cost a sample at 128 ends, in
                calibrations timed beside each sample)
  sampler-2cpu  the same with CPUs 0-1 only allowed (taskset) into
                sampler-WHERE-2cpu.json: in a guest, the same emulation and kernel
                with 2 CPUs, which tells the 64 CPUs' cost from TCG's
  view          bench/view_cost.py into view/: the monitor's frame at 64 pairs drawn
                (128 ends) from a record of every CPU against one of CPUs 0-1, in
                ABBA blocks of draw processes (issue 29: at most twice)
  monitor       tests/lab/test_guest_monitor.py (120x40 and 80x24): every CPU row
                reachable and whole, an SVG screenshot of each size in screenshots/;
                monitor-120x40 and monitor-80x24 run one size (pytest -k), so
                that other steps can go between them

WHERE is "guest" inside a lab guest and "host" elsewhere. DIR is --out, else the
lab's out folder (IPCTOP_LAB_OUT, which the host reads back). Each step's
output goes to DIR/steps/STEP.log as it comes, and DIR/session-WHERE.json is
rewritten after every step (exit status, start, wall seconds), so a guest
killed by the lab's --timeout still says how far it got. A step that fails
does not stop the next; the exit status is 1 if any step failed. Wall
times in a guest are TCG emulation, not the kernel's speed.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
# The same sweep as tests/records/test_compare_kernels.py's host record: short enough
# for an emulated guest (about 2 minutes under TCG, most of it Python starting over 9p).
RECORD_ARGS = (
    "sweep", "-w", "sysv-sem", "--max-pairs", "1", "--seconds", "0.5", "--warmup", "0",
    "--repeat", "2", "--cpus", "0",
)  # fmt: skip
STEPS = ("record", "sampler", "sampler-2cpu", "view", "monitor", "monitor-120x40", "monitor-80x24")


def where() -> str:
    return "guest" if os.environ.get("IPCTOP_LAB_GUEST") == "1" else "host"


def record_path(out: Path, side: str) -> Path:
    return out / "records" / f"sweep-{side}.json"


def step_argv(step: str, out: Path, side: str) -> list[str]:
    py = sys.executable
    scale = [py, str(ROOT / "bench" / "sampler_scale.py"), "--pairs", "64", "--samples", "40"]
    scale.append("--paired")  # the calibration beside each sample: TCG's preempted vCPUs
    if step == "record":
        return [py, "-m", "ipctop", *RECORD_ARGS, "--json", str(record_path(out, side))]
    if step == "sampler":
        return [*scale, "--json", str(out / f"sampler-{side}.json")]
    if step == "sampler-2cpu":
        return ["taskset", "-c", "0,1", *scale, "--json", str(out / f"sampler-{side}-2cpu.json")]
    if step == "view":
        return [py, str(ROOT / "bench" / "view_cost.py"), "--out", str(out / "view")]
    if step.startswith("monitor"):
        size = step.partition("-")[2]  # one size's test (pytest -k), or both
        return [
            py, "-m", "pytest", "-p", "no:cacheprovider", "-v", "-rA", "--rootdir", str(ROOT),
            f"--junitxml={out / f'junit-{step}.xml'}", *(["-k", size] if size else []),
            str(ROOT / "tests" / "lab" / "test_guest_monitor.py"),
        ]  # fmt: skip
    raise ValueError(step)


def run_step(step: str, out: Path, side: str) -> dict[str, object]:
    argv = step_argv(step, out, side)
    env = dict(os.environ)
    # The guest's root file system is the host's, read-only: no byte code written into it.
    env["PYTHONDONTWRITEBYTECODE"] = "1"
    started = time.strftime("%H:%M:%SZ", time.gmtime())
    print(f"lab session: {step} started {started}", flush=True)
    t0 = time.monotonic()
    with open(out / "steps" / f"{step}.log", "wb") as log:
        rc = subprocess.run(
            argv, stdout=log, stderr=subprocess.STDOUT, cwd=ROOT, env=env
        ).returncode
    seconds = time.monotonic() - t0
    print(f"lab session: {step} exited {rc} after {seconds:.0f} s", flush=True)
    return {
        "step": step,
        "argv": argv,
        "returncode": rc,
        "started_utc": started,
        "wall_seconds": round(seconds, 1),
        "load_after": round(os.getloadavg()[0], 2),
    }


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("steps", nargs="+", choices=STEPS)
    p.add_argument("--out", help="folder for what the steps make (default: $IPCTOP_LAB_OUT)")
    args = p.parse_args(argv)
    out_dir = args.out or os.environ.get("IPCTOP_LAB_OUT")
    if not out_dir:
        p.error("--out is needed outside a lab guest")
    out = Path(out_dir)
    side = where()
    for sub in ("records", "steps"):
        (out / sub).mkdir(parents=True, exist_ok=True)
    done: list[dict[str, object]] = []
    summary: dict[str, object] = {"where": side, "cpus": os.cpu_count(), "steps": done}
    if side == "guest":
        summary["note"] = "wall times are TCG emulation (or a nested guest's), not the kernel's"
    for step in args.steps:
        done.append(run_step(step, out, side))
        (out / f"session-{side}.json").write_text(json.dumps(summary, indent=2) + "\n")
    return 0 if all(d["returncode"] == 0 for d in done) else 1


if __name__ == "__main__":
    raise SystemExit(main())
