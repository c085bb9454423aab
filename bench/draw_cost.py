#!/usr/bin/env python3
"""What a frame of the monitor costs its UI thread, frame by frame, with no pairs running.

    python bench/draw_cost.py --make-record FILE [--pairs 32] [--seconds 15] [--cpus N]
    python bench/draw_cost.py FILE [--pairs 256] [--frames 40] [--profile]
    python bench/draw_cost.py FILE --compare [VARIANTS] [--blocks 12] [--frames 4]
    python bench/draw_cost.py FILE --idle SECONDS [--profile]
    python bench/draw_cost.py FILE [--frames 40] --json OUT   (each frame's CPU, for view_cost.py)

--make-record runs the pairs once (sysv-msg, same core, threads, the first two
allowed CPUs or the first N with --cpus, 0 for all, a sample every 0.5 s, as the observer bench does) and keeps what
the sampler sent as a session record: 32 pairs by default, 64 threads, which a
box shared with other work can spare for 15 s. A record of fewer pairs than
--pairs is widened: each recorded pair is shown again as further pairs (widen()
below), so 32 recorded pairs draw as 256 would. Every other use plays it into
the real IpctopApp, headless (App.run_test, 120x40), from a source that delivers
nothing itself: the bench hands the app one sample a frame, as the sampler's
message would (on_sample_arrived), draws at once (not after the 4 Hz throttle's
timer), lets the screen composite, and turns the update into the bytes a
terminal would be sent (headless Textual skips that step; a real pane does
not). The samples cycle and are re-timed 0.5 s apart; the first 60 frames are
not measured, so every sparkline is full width as in a session a minute old.

A frame's CPU is time.thread_time() of the UI thread in its three steps: feed
(on_sample_arrived), redraw (IpctopApp._redraw) and composite
(Screen._on_timer_update: layout if any, the compositor, and the escape
sequences, given apart as escape). "whole" is the thread's CPU from one sample
to the next, the pilot's waiting and the widgets' messages too. Per
frame it also counts the lines the StylesCache styled afresh (changed lines),
the widgets the compositor asked for lines, the bytes, and garbage collections.

--profile: cProfile over the measured frames, the top functions by cumulative
and by own time. --idle: after the same warm frames, the UI thread's CPU over
SECONDS with no sample handed to it (the observer bench's "sampler alone"
windows: timers, messages, whatever the app does unasked), in blocks of a
second; with --profile, where it went. Headless, so no input thread reads a
terminal (a real one wakes ten times a second, textual's LinuxDriver). --compare: the frame as on main (A, the methods this branch
changed put back: draw_before.py, all of them or the variants named, comma
separated) against this branch (B), alternating in one
process, ABBA blocks of --frames frames a side; B/A with its interval over the
blocks (analysis/stats.paired_difference). A ratio survives a loaded box; ms
do not.
"""

from __future__ import annotations

import argparse
import asyncio
import cProfile
import gc
import io
import json
import os
import pstats
import statistics
import sys
import time
from collections.abc import Callable, Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

# Before Textual is imported (it reads this once): a tmux pane's colours, not a dumb one's.
os.environ.setdefault("TEXTUAL_COLOR_SYSTEM", "256")
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from draw_before import BEFORE  # noqa: E402  (this folder: main's methods, for --compare)
from textual._compositor import CompositorUpdate  # noqa: E402
from textual._styles_cache import StylesCache  # noqa: E402
from textual.screen import Screen  # noqa: E402
from textual.widget import Widget  # noqa: E402

from ipctop.analysis.stats import fmt_diff, paired_difference, summarize  # noqa: E402
from ipctop.engine.sample import Sample  # noqa: E402
from ipctop.live.source_protocol import RunInfo  # noqa: E402
from ipctop.live.sources import FixedSource  # noqa: E402
from ipctop.output.records.record_io import read_record  # noqa: E402
from ipctop.tui.app import IpctopApp, SampleArrived  # noqa: E402
from ipctop.tui.widgets.scaling_panel import ScalingPlot  # noqa: E402

SIZE = (120, 40)
WARM = 60  # frames before any is measured: a sparkline is about 40 samples wide at 120x40
STEPS = ("feed", "redraw", "composite")  # a frame's CPU is their sum
PARTS = (*STEPS, "escape", "whole")  # escape runs inside composite; whole: see frames()


class Tally:
    """CPU per step and counts, since the last take()."""

    def __init__(self) -> None:
        self.cpu = dict.fromkeys(PARTS, 0.0)
        self.count: dict[str, int] = {}
        self.gc_cpu = 0.0
        self._gc_t0 = 0.0

    def take(self) -> tuple[dict[str, float], dict[str, int], float]:
        out = (dict(self.cpu), dict(self.count), self.gc_cpu)
        self.cpu = dict.fromkeys(PARTS, 0.0)
        self.count = {}
        self.gc_cpu = 0.0
        return out

    def gc_callback(self, phase: str, info: dict[str, Any]) -> None:
        if phase == "start":
            self._gc_t0 = time.thread_time()
        else:
            self.count["gc"] = self.count.get("gc", 0) + 1
            self.gc_cpu += time.thread_time() - self._gc_t0


TALLY = Tally()


def timed(cls: type, name: str, step: str) -> None:
    """cls.name now adds its thread CPU to TALLY's step (nested calls counted once)."""
    real = getattr(cls, name)
    depth = [0]

    def wrapper(*args: Any, **kwargs: Any) -> Any:
        if depth[0]:
            return real(*args, **kwargs)
        depth[0] += 1
        t0 = time.thread_time()
        try:
            return real(*args, **kwargs)
        finally:
            TALLY.cpu[step] += time.thread_time() - t0
            depth[0] -= 1

    setattr(cls, name, wrapper)


def counted(cls: type, name: str, key: str) -> None:
    real = getattr(cls, name)

    def wrapper(*args: Any, **kwargs: Any) -> Any:
        TALLY.count[key] = TALLY.count.get(key, 0) + 1
        return real(*args, **kwargs)

    setattr(cls, name, wrapper)


class QuietSource(FixedSource):
    """The record's run as a live one would name it; delivers nothing by itself."""

    def __init__(self, info: RunInfo) -> None:
        super().__init__([], info)


class DrawApp(IpctopApp):
    """The app, with the escape sequences a terminal would be sent made and measured."""

    CSS_PATH = str(Path(sys.modules[IpctopApp.__module__].__file__ or "").parent / "app.tcss")

    def _display(self, screen: Screen[Any], renderable: Any) -> None:
        if isinstance(renderable, CompositorUpdate):
            t0 = time.thread_time()
            sent = len(renderable.render_segments(self.console))
            TALLY.count["bytes"] = TALLY.count.get("bytes", 0) + sent
            TALLY.cpu["escape"] += time.thread_time() - t0
        super()._display(screen, renderable)


def instrument() -> None:
    timed(IpctopApp, "on_sample_arrived", "feed")
    timed(IpctopApp, "_redraw", "redraw")
    timed(Screen, "_on_timer_update", "composite")
    counted(StylesCache, "render_line", "lines")
    counted(Widget, "render_lines", "widgets")
    counted(Screen, "_compositor_refresh", "passes")
    counted(ScalingPlot, "render", "chart")  # plotext draws the whole chart each time
    real_refresh = Widget.refresh

    def refresh(self: Widget, *regions: Any, **kwargs: Any) -> Any:
        if not regions and kwargs.get("repaint", True) and self.is_mounted:
            key = f"whole {type(self).__name__}"  # every line of it, its border's too
            TALLY.count[key] = TALLY.count.get(key, 0) + 1
        return real_refresh(self, *regions, **kwargs)

    Widget.refresh = refresh  # type: ignore[method-assign]
    gc.callbacks.append(TALLY.gc_callback)


def stream(samples: list[Sample]) -> Iterator[Sample]:
    """The samples over and over, 0.5 s apart, so time only moves forward."""
    k = 0
    while True:
        for s in samples:
            k += 1
            yield replace(s, t=0.5 * k, dt=0.5, events=())


async def frame(app: IpctopApp, pilot: Any, sample: Sample) -> None:
    app._redraw_pending = True  # drawn below, at once: no throttle timer is set
    app.on_sample_arrived(SampleArrived(sample, 0))
    app._redraw()
    await pilot.pause()  # widgets' updates reach the screen; it composites


Row = tuple[float, dict[str, float], dict[str, int], float]  # ms, ms per step, counts, gc ms


async def frames(app: IpctopApp, pilot: Any, samples: Iterator[Sample], n: int) -> list[Row]:
    out: list[Row] = []
    for _ in range(n):
        TALLY.take()
        t0 = time.thread_time()
        await frame(app, pilot, next(samples))
        # The UI thread's every step from one sample to the next, the pilot's waiting too.
        TALLY.cpu["whole"] = time.thread_time() - t0
        cpu, count, gc_cpu = TALLY.take()
        ms = {k: 1e3 * v for k, v in cpu.items()}
        out.append((sum(ms[k] for k in STEPS), ms, count, 1e3 * gc_cpu))
    return out


def load(path: str, pairs: int) -> tuple[RunInfo, list[Sample]]:
    record = read_record(path)
    most = max(s.pairs for s in record.timeline)
    samples = [s for s in record.timeline if s.pairs == most][2:]  # the first two ramp up
    config = record.config.model_copy(update={"interval": 0.5})
    return RunInfo(config, record.box.kernel, record.box.cpu), widen(samples, pairs)


def widen(samples: list[Sample], pairs: int) -> list[Sample]:
    """A record of n pairs shown as `pairs`: pair p again as p + n, p + 2n, ... (its
    own tid, 1 % faster a copy, its latency too), so a 64-thread recording draws as
    512 threads would; the CPUs, IPIs and switches stay the recorded ones."""
    n = samples[0].pairs
    if pairs <= n:
        return samples
    out = []
    for s in samples:
        copies = range(-(-pairs // n))
        threads = tuple(
            replace(
                t,
                pair=t.pair + n * k,
                tid=t.tid + 1_000_000 * k,
                ops_per_s=t.ops_per_s * (1 + k / 100),
            )
            for k in copies
            for t in s.threads
            if t.pair + n * k < pairs
        )
        latency = tuple(x for x in s.latency if x.pair < 0) + tuple(
            replace(x, pair=x.pair + n * k)
            for k in copies
            for x in s.latency
            if 0 <= x.pair and x.pair + n * k < pairs
        )
        total = sum(t.ops_per_s for t in threads)  # as the sampler sums it
        out.append(replace(s, pairs=pairs, threads=threads, latency=latency, total_ops_per_s=total))
    return out


def describe(rows: list[Row]) -> str:
    def med(get: Callable[[Row], float]) -> float:
        return statistics.median(get(r) for r in rows)

    total = summarize([r[0] for r in rows])  # frames in time order: as windows, AR(1)
    parts = ", ".join(f"{k} {med(lambda r, k=k: r[1][k]):.2f}" for k in PARTS)
    keys = sorted({k for r in rows for k in r[2]})
    counts = ", ".join(f"{k} {statistics.fmean(r[2].get(k, 0) for r in rows):.1f}" for k in keys)
    return (
        f"frame CPU {total.estimate:.2f} ms [{total.low:.2f}, {total.high:.2f}], median "
        f"{total.median:.2f} (n = {total.n} frames; medians: {parts}; garbage collection "
        f"{statistics.fmean(r[3] for r in rows):.2f} ms a frame, mean, wherever it ran)\n"
        f"per frame (means): {counts}"
    )


async def measure(args: argparse.Namespace) -> str:
    info, samples = load(args.record, args.pairs)
    source = QuietSource(info)
    app = DrawApp(source, own_cpu=lambda _tids: 1.4)
    feed = stream(samples)
    lines = [
        f"{len(samples[0].threads)} threads, {samples[0].pairs} pairs from {args.record}; "
        f"{SIZE[0]}x{SIZE[1]}, colours {os.environ['TEXTUAL_COLOR_SYSTEM']}; "
        f"load average {os.getloadavg()[0]:.2f} at the start"
    ]
    async with app.run_test(size=SIZE) as pilot:
        await frames(app, pilot, feed, WARM)
        if args.idle:
            lines.append(await idle_cost(args.idle, args.profile))
        elif args.compare:
            lines.append(await compare(app, pilot, feed, args.blocks, args.frames, args.compare))
        elif args.profile:
            prof = cProfile.Profile()
            prof.enable()
            rows = await frames(app, pilot, feed, args.frames)
            prof.disable()
            lines.append(describe(rows) + " (under cProfile)")
            text = io.StringIO()
            stats = pstats.Stats(prof, stream=text)
            stats.sort_stats("cumulative").print_stats(45)
            stats.sort_stats("tottime").print_stats(30)
            lines.append(text.getvalue())
        else:
            rows = await frames(app, pilot, feed, args.frames)
            lines.append(describe(rows))
            if args.json:
                cpus = len(samples[0].cpus) if samples[0].cpus else None
                Path(args.json).write_text(
                    json.dumps(
                        {"record": args.record, "cpus": cpus, "frames_ms": [r[0] for r in rows]}
                    )
                )
            idle = []
            for _ in range(args.frames):  # what "whole" holds that is the bench's own
                t0 = time.thread_time()
                await pilot.pause()
                idle.append(1e3 * (time.thread_time() - t0))
            lines.append(f"the pilot's wait alone, no sample: {statistics.median(idle):.2f} ms")
        lines.append(f"the {samples[0].pairs}-pair point at the end: {app.session.settle_state}")
    lines.append(f"load average {os.getloadavg()[0]:.2f} at the end")
    return "\n".join(lines)


async def idle_cost(seconds: float, profile: bool) -> str:
    """The UI thread's CPU while the app is handed nothing, a second at a time."""
    prof = cProfile.Profile() if profile else None
    TALLY.take()
    per_s = []
    if prof is not None:
        prof.enable()
    for _ in range(max(1, round(seconds))):
        t0, c0 = time.monotonic(), time.thread_time()
        await asyncio.sleep(1.0)  # the app's loop runs meanwhile: this is its thread
        per_s.append(1e3 * (time.thread_time() - c0) / (time.monotonic() - t0))
    if prof is not None:
        prof.disable()
    _, count, _ = TALLY.take()
    # Median and range, not summarize's interval: a second with no work reads 0.
    mid = statistics.median(per_s)
    out = (
        f"idle app: UI thread {mid:.3f} ms a second, median (range {min(per_s):.3f}-"
        f"{max(per_s):.3f}, n = {len(per_s)} seconds), {mid / 10:.3f} % of a CPU; "
        f"in all: {', '.join(f'{k} {v}' for k, v in sorted(count.items())) or 'nothing drawn'}"
    )
    if prof is not None:
        text = io.StringIO()
        stats = pstats.Stats(prof, stream=text)
        stats.sort_stats("tottime").print_stats(30)
        out += "\n" + text.getvalue()
    return out


async def compare(
    app: IpctopApp, pilot: Any, feed: Iterator[Sample], blocks: int, k: int, what: str
) -> str:
    """A (main's methods, those of the variants named) against B (this branch's), ABBA."""
    names = list(BEFORE) if what == "all" else what.split(",")
    before = [m for name in names for m in BEFORE[name]]
    mine = {(cls, name): getattr(cls, name) for cls, name, _ in before}

    def use(old_ones: bool) -> None:
        for cls, name, old in before:
            setattr(cls, name, old if old_ones else mine[cls, name])

    async def side(old_ones: bool) -> list[Row]:
        use(old_ones)
        await frames(app, pilot, feed, 1)  # the switch's own first frame is not counted
        return await frames(app, pilot, feed, k)

    # A's own state warmed as B's was (columns keeps main's histories apart): its
    # sparklines full width before its first block, as B's are.
    use(True)
    await frames(app, pilot, feed, WARM)
    pairs: list[tuple[list[float], list[float]]] = []
    rows: dict[bool, list[Row]] = {True: [], False: []}
    for _ in range(blocks):
        a1, b1, b2, a2 = await side(True), await side(False), await side(False), await side(True)
        rows[True] += a1 + a2
        rows[False] += b1 + b2
        pairs.append(([r[0] for r in a1 + a2], [r[0] for r in b1 + b2]))
    use(False)
    d = paired_difference(pairs)
    return (
        f"A (main's {', '.join(f'{c.__name__}.{n}' for c, n, _ in before)}): "
        f"{describe(rows[True])}\n"
        f"B (this branch): {describe(rows[False])}\n"
        f"B/A {fmt_diff(d)} (n = {blocks} ABBA blocks of {k} frames a side)"
    )


def make_record(path: str, pairs: int, seconds: float, ncpus: int = 2) -> str:
    from ipctop.box import read_box
    from ipctop.engine.config import RunConfig
    from ipctop.live.sources import LiveSource
    from ipctop.output.records.record_box import Box
    from ipctop.output.records.session_recorder import SessionRecorder

    allowed = sorted(os.sched_getaffinity(0))
    cpus = tuple(allowed[:ncpus] if ncpus else allowed)
    source = LiveSource(RunConfig(workload="sysv-msg", placement="same", cpus=cpus), 0.5)
    got: list[Sample] = []
    source.open(pairs)
    try:
        source.start(lambda sample, _generation: got.append(sample))
        time.sleep(seconds)
    finally:
        source.stop()
    recorder = SessionRecorder(path, Box.of(read_box()), source.info.config)
    for s in got:
        recorder.feed(s)
    return f"{len(got)} samples of {pairs} pairs on {len(cpus)} CPUs in {recorder.finish([])}"


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("record", nargs="?", help="a session record (--make-record makes one)")
    p.add_argument("--make-record", metavar="FILE")
    p.add_argument("--pairs", type=int, default=None, help="recorded (32), or drawn (256)")
    p.add_argument("--seconds", type=float, default=15.0)
    p.add_argument("--frames", type=int, default=None, help="measured (40), or a side (4)")
    p.add_argument("--profile", action="store_true")
    p.add_argument("--idle", type=float, default=0.0, metavar="SECONDS")
    p.add_argument(
        "--compare",
        nargs="?",
        const="all",
        metavar="VARIANTS",
        help=f"A/B against main: all (the default) or some of {','.join(BEFORE)}",
    )
    p.add_argument("--blocks", type=int, default=12)
    p.add_argument("--cpus", type=int, default=2, help="--make-record: the first N allowed, 0: all")
    p.add_argument("--json", metavar="OUT", help="each measured frame's CPU (ms) as JSON")
    args = p.parse_args()
    if args.make_record:
        print(make_record(args.make_record, args.pairs or 32, args.seconds, args.cpus))
        return 0
    args.pairs = args.pairs or 256
    if not args.record:
        p.error("a record to play (or --make-record FILE)")
    if args.frames is None:
        args.frames = 4 if args.compare else 40
    instrument()
    print(asyncio.run(measure(args)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
