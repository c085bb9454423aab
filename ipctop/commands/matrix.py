"""`ipctop matrix`: one-way latency between every ordered pair of CPUs, by topology class."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from ..box import read_box
from ..cpuclass import CLASSES, ordered_pairs, read_classes
from ..engine.engine import ENGINES, resolve_engine
from ..engine.latency import format_ns
from ..engine.matrix_runs import BASELINE, Cell, check_workload, class_rows, run_matrix
from ..engine.placement import MODES
from ..errors import UsageError
from ..live.priority import raise_monitor
from ..output.records.matrix_record import MatrixConfig, MatrixRecord, write_matrix
from ..output.records.output_paths import check_output_file, write_or_keep
from ..output.records.record_box import Box
from ..output.text import matrix_text
from .common import count, cpu_text, non_negative_float, positive_float, resolve_cpus

# Every ordered pair up to this many CPUs (64 cells); a sample per class above it.
ALL_UP_TO = 8
PER_CLASS = 4


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--workload", "-w", default="sysv-sem",
                   help="comma-separated mechanisms (default sysv-sem)")  # fmt: skip
    p.add_argument("--cpus", help="CPUs to use, e.g. 0-3,8 (default: the allowed set)")
    p.add_argument("--mode", choices=MODES, default="threads", help="default: threads")
    p.add_argument("--engine", choices=ENGINES, default="auto", help="needs native")
    p.add_argument("--seconds", type=positive_float, default=1.0, help="per cell (1)")
    p.add_argument("--warmup", type=non_negative_float, default=0.2, help="per cell (0.2)")
    p.add_argument("--all", action="store_true",
                   help=f"every ordered pair even above {ALL_UP_TO} CPUs")  # fmt: skip
    p.add_argument("--per-class", type=count(1, 10_000), default=PER_CLASS,
                   help=f"above {ALL_UP_TO} CPUs: cells per class (default {PER_CLASS})")  # fmt: skip
    p.add_argument("--no-baseline", dest="baseline", action="store_false",
                   help="skip the spin flag, so no kernel share")  # fmt: skip
    p.add_argument("--rt", type=count(1, 99), metavar="PRIO", help="SCHED_FIFO ends")
    p.add_argument("--json", metavar="FILE", help="write the matrix record")
    p.add_argument("--figure", choices=("p50", "p99"), default="p50",
                   help="what the heatmap shows (default p50)")  # fmt: skip


def run(args: argparse.Namespace) -> int:
    if args.json:  # before the first cell: a result that cannot be saved is found out now
        check_output_file(args.json, "--json")
    workloads = [w.strip() for w in args.workload.split(",") if w.strip()]
    if not workloads:
        raise UsageError("--workload is empty")
    kind = resolve_engine(args.engine)
    for w in workloads:
        check_workload(w, kind)
    cpus = resolve_cpus(args.cpus)
    classes = read_classes(cpus)
    sample = None if args.all or len(cpus) <= ALL_UP_TO else args.per_class
    cells = ordered_pairs(cpus, classes, sample)
    priority = raise_monitor()
    how = "every ordered pair" if sample is None else f"at most {sample} cells per class"
    base = f", and {BASELINE} as the baseline" if args.baseline else ""
    print(f"ipctop matrix · {', '.join(workloads)}{base} · {args.mode} · CPUs {cpu_text(cpus)} · "
          f"{how}: {len(cells)} cells · {args.seconds:g} s per cell"
          + (f" · {priority.note}" if priority.note else ""))  # fmt: skip
    present = sorted({classes.classify(a, b) for a, b in cells}, key=CLASSES.index)
    print(f"classes on this box: {', '.join(present)}"
          + (f" (sysfs did not say: {', '.join(classes.unknown)})" if classes.unknown else ""))  # fmt: skip
    print("latency: every round timed (CLOCK_MONOTONIC); one-way = the woken end's clock "
          "minus the sender's stamp", flush=True)  # fmt: skip

    def progress(c: Cell) -> None:
        print(f"  {c.workload:<16} {c.src:>3} -> {c.dst:<3} {c.cls:<12} "
              f"p50 {format_ns(c.oneway.p50):>7}  p99 {format_ns(c.oneway.p99):>7}  "
              f"n={c.oneway.n:,}", file=sys.stderr, flush=True)  # fmt: skip

    measured = run_matrix(workloads, cells, classes, args.seconds, args.warmup, args.baseline,
                          args.mode, args.rt, progress)  # fmt: skip
    colour = sys.stdout.isatty()
    for w in dict.fromkeys(c.workload for c in measured):
        print(f"\n{w}")
        print(matrix_text.heatmap([c for c in measured if c.workload == w], cpus,
                                  args.figure, colour))  # fmt: skip
    print("\nby class (medians over the class's cells; kernel = mechanism minus spin flag)")
    print(matrix_text.class_table(class_rows(measured)))
    if args.json:
        config = MatrixConfig(
            workloads=tuple(workloads), mode=args.mode, cpus=tuple(cpus),
            seconds=args.seconds, warmup=args.warmup, sample=sample,
            baseline=BASELINE if args.baseline else None, rt=args.rt,
            unknown=tuple(classes.unknown),
        )  # fmt: skip
        rec = MatrixRecord(Box.of(read_box()), config, measured)
        said, ok = write_or_keep(Path(args.json), lambda p: write_matrix(p, rec))
        print(f"{'' if ok else 'ipctop: '}{said}", file=sys.stderr)
        return 0 if ok else 1
    return 0
