"""Options shared by the commands that start pairs, and their validation."""

from __future__ import annotations

import argparse
import contextlib
import math
import sys
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any

from ..cpus import choose_cpus, format_cpu_list, read_topology
from ..engine.config import LATENCY_EVERY, RunConfig
from ..engine.engine import ENGINES
from ..engine.placement import MODES, PLACEMENTS
from ..engine.profile.span import SpanProfiler
from ..engine.workloads import OPTIONS, WORKLOADS, takers

if TYPE_CHECKING:
    from ..output.exports.metrics import MetricsAddress

# The most pairs a command accepts: what bench/bulk_start.py starts within its
# target (BENCHMARKS.md, "Bulk start"); the counter block holds 4,096 ends.
MAX_PAIRS = 1024


def _seconds(text: str, allow_zero: bool) -> float:
    try:
        value = float(text.rstrip("s"))
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number of seconds") from None
    if not math.isfinite(value) or value < 0 or (value == 0 and not allow_zero):
        need = "zero or more" if allow_zero else "a positive number of"
        raise argparse.ArgumentTypeError(f"{text!r} must be {need} seconds")
    return value


def positive_float(text: str) -> float:
    return _seconds(text, allow_zero=False)


def non_negative_float(text: str) -> float:
    return _seconds(text, allow_zero=True)


def count(low: int, high: int) -> Callable[[str], int]:
    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None
        if not low <= value <= high:
            raise argparse.ArgumentTypeError(f"{value} is outside {low}..{high}")
        return value

    parse.__name__ = "count"
    return parse


def add_workload_options(p: argparse.ArgumentParser, many: bool = False) -> None:
    from ..engine.stalls import STALL_S

    p.epilog = (
        f"Stalls: a pair with no round for {STALL_S:g} s, or a reading {STALL_S:g} s later "
        "than its interval (ipctop itself stopped), is reported and its windows are left "
        "out of the rates; `run` exits 1 when a pair is still stalled at the end."
    )
    names = ", ".join(WORKLOADS)
    p.add_argument(
        "--workload",
        "-w",
        default="sysv-msg",
        help=f"{'comma-separated ' if many else ''}workload: {names} (default sysv-msg)",
    )
    p.add_argument("--placement", choices=PLACEMENTS, default="same", help="default: same")
    p.add_argument("--mode", choices=MODES, default="threads", help="default: threads")
    p.add_argument("--cpus", help="CPUs to use, e.g. 0-3,8 (default: the allowed set)")
    p.add_argument(
        "--engine", choices=ENGINES, default="auto", help="native (C) or python (fallback)"
    )
    p.add_argument(
        "--transport",
        choices=("socket", "pipe", "tcp", "unix"),
        help="hackbench: socket (a unix socketpair, the default) or pipe; chat: tcp (loopback, "
        "the default) or unix",
    )
    for o in OPTIONS.values():
        p.add_argument(
            o.flag,
            type=count(o.low, o.high),
            default=o.default,
            metavar=o.metavar,
            help=o.help_for(takers(o)),
        )
    _add_counts(p, _run_counts())
    add_latency_options(p)


def add_latency_options(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--no-latency",
        dest="latency",
        action="store_false",
        help="do not time rounds in the native ends (they do by default)",
    )
    _add_counts(p, _LATENCY_COUNTS)


# A whole-number option: (flag, lowest, highest, default, metavar, help).
_Count = tuple[str, int, int, int | None, str, str]


def _run_counts() -> tuple[_Count, ...]:
    """Whole-number options of every run: (flag, lowest, highest, default, metavar, help)."""
    sizes = ", ".join(f"{n} {c.default_size}" for n, c in WORKLOADS.items() if c.default_size)
    return (
        ("--think-ns", 0, 10**9, 0, "N",
         "each end busy-waits N ns between receive and send: a server's work per message "
         "(default 0)"),
        ("--size", 1, 1 << 24, None, "BYTES",
         f"payload per message (default: the seed's): {sizes}"),
    )  # fmt: skip


_LATENCY_COUNTS = (
    ("--latency-every", 1, 1_000_000, LATENCY_EVERY, "K",
     f"time one round in K (default {LATENCY_EVERY}: timing every round costs over 2 %% of "
     "throughput at 2 pairs; 1 times them all)"),
    ("--rt", 1, 99, None, "PRIO",
     "run the ends SCHED_FIFO at this priority (needs CAP_SYS_NICE or ulimit -r)"),
)  # fmt: skip


def _add_counts(p: argparse.ArgumentParser, options: tuple[_Count, ...]) -> None:
    for flag, low, high, default, metavar, text in options:
        p.add_argument(flag, type=count(low, high), default=default, metavar=metavar, help=text)


def add_measuring_options(p: argparse.ArgumentParser, many: bool = False) -> None:
    """What every command that measures pairs takes: the workload, --metrics, --profile."""
    add_workload_options(p, many)
    add_metrics_option(p)
    add_profile_option(p)


def start_profiler(args: argparse.Namespace, cpus: list[int]) -> SpanProfiler | None:
    """The --profile profiler (None without it); why perf cannot run goes to stderr."""
    if not getattr(args, "profile", False):
        return None
    profiler = SpanProfiler(cpus)
    for line in profiler.lines:
        print(f"ipctop: {line}", file=sys.stderr, flush=True)
    return profiler


def resolve_cpus(spec: str | None) -> list[int]:
    return choose_cpus(spec, read_topology())


def workload_names(text: str) -> list[str]:
    from ..errors import UsageError

    names = [n.strip() for n in text.split(",") if n.strip()]
    if not names:
        raise UsageError("--workload is empty")
    for n in names:
        if n not in WORKLOADS:
            raise UsageError(f"unknown workload {n!r}; choose from {', '.join(WORKLOADS)}")
    return names


def engine_config(args: argparse.Namespace, workload: str, cpus: list[int]) -> RunConfig:
    return RunConfig(
        workload=workload,
        placement=args.placement,
        mode=args.mode,
        cpus=tuple(cpus),
        engine=args.engine,
        think_ns=getattr(args, "think_ns", 0),
        latency=getattr(args, "latency", True),
        latency_every=getattr(args, "latency_every", LATENCY_EVERY),
        rt=getattr(args, "rt", None),
        size=getattr(args, "size", None),
        transport=getattr(args, "transport", None),
        **{name: getattr(args, name, o.default) for name, o in OPTIONS.items()},
    )


def run_configs(args: argparse.Namespace) -> list[RunConfig]:
    """One run per workload the options name (comma-separated), on the chosen CPUs."""
    names = workload_names(args.workload)
    cpus = resolve_cpus(args.cpus)
    return [engine_config(args, name, cpus) for name in names]


def run_config(args: argparse.Namespace) -> RunConfig:
    """The run of a command that takes one workload; a list is a usage error.

    Taking the first of `-w sysv-msg,sysv-sem` would measure less than was asked
    for and say nothing of it.
    """
    from ..errors import UsageError

    configs = run_configs(args)
    if len(configs) > 1:
        raise UsageError(
            f"--workload {args.workload}: this command runs one workload at a time;"
            " sweep and matrix take a list"
        )
    return configs[0]


def cpu_text(cpus: list[int]) -> str:
    return format_cpu_list(cpus)


def add_profile_option(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--profile",
        action="store_true",
        help="sample the pairs' CPUs with perf and show the top kernel and user symbols",
    )


def metrics_address(text: str) -> MetricsAddress:
    """argparse type for --metrics [HOST:]PORT."""
    from ..output.exports.metrics import parse_metrics_address

    try:
        return parse_metrics_address(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def add_metrics_option(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--metrics",
        type=metrics_address,
        metavar="[HOST:]PORT",
        help="serve Prometheus/OpenMetrics on http://HOST:PORT/metrics (loopback unless "
        "a host is named; port 0 picks a free one)",
    )


@contextlib.contextmanager
def metrics_endpoint(args: argparse.Namespace) -> Iterator[Any]:
    """The --metrics endpoint, open for the block; None without --metrics.

    Opened before any pair starts, so a port in use stops the command before
    it measures anything.
    """
    address = getattr(args, "metrics", None)
    if address is None:
        yield None
        return
    from ..output.exports.metrics import MetricsEndpoint

    if not address.loopback:
        print(
            f"ipctop: warning: metrics on {address.host}, not loopback: anyone who can "
            "reach this port can read this box's figures",
            file=sys.stderr,
        )
    with MetricsEndpoint(address) as endpoint:
        print(f"ipctop: metrics on {endpoint.url}", file=sys.stderr, flush=True)
        yield endpoint


def publisher(endpoint: Any, config: RunConfig, kind: str, engine: Any = None) -> Any:
    """The on_sample callback (with .points() and .attach(engine), whose latency
    histograms it exports) that feeds --metrics; None without it."""
    if endpoint is None:
        return None
    from ..output.exports.metrics import RunLabels

    labels = RunLabels(config.workload, config.placement, config.mode, kind)
    return endpoint.publisher(labels, engine)


def each(*callbacks: Any) -> Any:
    """One on_sample callback that calls every one given (None ones left out)."""
    live = [c for c in callbacks if c is not None]
    if len(live) <= 1:
        return live[0] if live else None

    def call(sample: Any) -> None:
        for c in live:
            c(sample)

    call.attach = lambda engine: attach(live, engine)  # type: ignore[attr-defined]
    return call


def attach(callbacks: Any, engine: Any) -> None:
    """Tell --metrics publishers among the callbacks (or inside an each()) which
    engine's latency histograms to export: a sweep or check starts one per step."""
    for c in callbacks if isinstance(callbacks, list) else [callbacks]:
        hook = getattr(c, "attach", None)
        if hook is not None:
            hook(engine)
