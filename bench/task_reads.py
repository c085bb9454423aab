"""What one sampler tick's per-thread /proc reads cost: the native pass against
the Python one, alternated in one process on the same threads.

    python bench/task_reads.py [--threads 512,2048] [--reps 20] [--engine]

Without --engine the threads are parked (blocked on an event): the files and
their sizes are those of any thread, and the box is not loaded by the bench.
"before" is how a tick read them before the one pass (read_task, then
read_schedstat_task and read_migrations, per thread, in Python: four files
with detail); "fallback" is python_read_tasks, what runs without the extension; "now" is
TaskFiles.read, the sampler's pass (native, each thread's files kept open).
With --engine a real sysv-msg run of threads/2 pairs on CPUs 0-1 is sampled
instead and whole detail ticks (Sampler.sample with detail on) are timed in
ABBA order, with the per-thread reads as they were before and as they are now.
Figures are the calling thread's CPU time (time.thread_time: the reads are
done on it, system time included), medians with a 95 % interval over --reps.
"""

from __future__ import annotations

import argparse
import os
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from ipctop.analysis.stats import summarize  # noqa: E402
from ipctop.engine import objects, procfs, task_reads  # noqa: E402


def cpu_ms(fn: Callable[[], object]) -> float:
    t = time.thread_time()
    fn()
    return (time.thread_time() - t) * 1e3


def alternate(reps: int, a: Callable[[], object], b: Callable[[], object]) -> tuple[list, list]:
    """ABBA pairs: a host that drifts favours neither side."""
    xs: list[float] = []
    ys: list[float] = []
    for i in range(reps):
        if i % 2:
            ys.append(cpu_ms(b))
            xs.append(cpu_ms(a))
        else:
            xs.append(cpu_ms(a))
            ys.append(cpu_ms(b))
    return xs, ys


def line(label: str, py: list[float], nat: list[float]) -> str:
    ratios = [p / n for p, n in zip(py, nat) if n > 0]
    s = summarize(ratios)
    return (
        f"{label} {summarize(py).median:6.2f} ms, now {summarize(nat).median:6.2f} ms, "
        f"ratio {s.median:.1f} [{s.low or float('nan'):.1f}, "
        f"{s.high or float('nan'):.1f}] n={s.n}"
    )


def before(ids: list[tuple[int, int]], detail: bool) -> list:
    """What a tick read before the one pass: each thread's files one by one in
    Python, status always and, with detail, schedstat and sched after it."""
    out = []
    for pid, tid in ids:
        task = procfs.read_task(pid, tid)
        if task is not None and detail:
            task = replace(
                task,
                sched=procfs.read_schedstat_task(pid, tid),
                migrations=procfs.read_migrations(pid, tid),
            )
        out.append(task)
    return out


def parked(threads: int, reps: int) -> None:
    release = threading.Event()
    pool = [threading.Thread(target=release.wait, daemon=True) for _ in range(threads)]
    for t in pool:
        t.start()
    ids = [(os.getpid(), t.native_id or 0) for t in pool]
    files = task_reads.TaskFiles()
    try:
        for detail in (False, True):
            files.read(ids, detail)  # opened once, as a sampler's first tick does
            what = "stat, sched, schedstat" if detail else "stat, status"
            print(f"{threads} parked threads, {what}; against the sampler's pass now (kept files):")
            for label, fn in (
                ("before (Python, per thread)", lambda d=detail: before(ids, d)),
                ("fallback (python_read_tasks)", lambda d=detail: task_reads.python_read_tasks(ids, detail=d)),
                ("native, reopened each tick", lambda d=detail: task_reads.read_tasks(ids, detail=d)),
            ):  # fmt: skip
                old, now = alternate(reps, fn, lambda d=detail: files.read(ids, d))
                print(line(f"  {label:<29}", old, now))
    finally:
        files.close()
        release.set()


def engine_ticks(threads: int, reps: int) -> None:
    from ipctop.engine.config import RunConfig
    from ipctop.engine.engine import Engine
    from ipctop.engine.sampler import Sampler

    engine = Engine(RunConfig(workload="sysv-msg", placement="same", cpus=(0, 1)))
    engine.start(threads // 2)
    try:
        sampler = Sampler(engine)
        sampler.detail = True
        sampler.sample()
        files = sampler._task_files
        now_read = files.read

        def before_tick() -> None:
            files.read = before  # type: ignore[method-assign]
            try:
                sampler.sample()
            finally:
                files.read = now_read  # type: ignore[method-assign]

        old, now = alternate(reps, before_tick, sampler.sample)
        print(line(f"{threads} threads of sysv-msg, whole detail tick: before", old, now))
    finally:
        engine.stop()


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--threads", default="512,2048")
    ap.add_argument("--reps", type=int, default=20)
    ap.add_argument("--engine", action="store_true", help="time whole ticks of a real run")
    args = ap.parse_args()
    if objects._native is None:
        print("the native extension is not built: nothing to compare", file=sys.stderr)
        return 2
    print(f"load average {os.getloadavg()[0]:.2f} on {os.cpu_count()} CPUs")
    for n in (int(x) for x in args.threads.split(",")):
        (engine_ticks if args.engine else parked)(n, args.reps)
    return 0


if __name__ == "__main__":
    sys.exit(main())
