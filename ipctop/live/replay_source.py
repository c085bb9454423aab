"""Play a record back through the monitor: one more SampleSource, read-only.

A session record replays its timeline with the recorded spacing divided by
speed. A sweep record has no timeline, only one summary per pair count, so
each step becomes a few identical samples carrying the step's total and
threads: as many as the live settler needs to call the step settled, so the
scaling curve shows exactly the totals the sweep printed. A load sweep's step
keeps its units (groups or rooms), not their ends: each unit comes back as
its recorded number of ends sharing its rate evenly, on the CPUs it ran on,
so the threads panel shows the one row per unit the monitor showed.

Nothing here starts a pair: one delivery thread ("ipctop-replay") sleeps
between samples and hands them over.
"""

from __future__ import annotations

import statistics
import threading

from ..analysis.settle import Settler
from ..engine.sample import Sample, ThreadSample
from ..errors import RecordError, UnsupportedError
from ..output.records.record import Record, Step, unrated
from .source_protocol import RunInfo, SampleCallback, SampleSource

#: a longer pause in a timeline (the recording was paused?) is cut to this, in seconds
MAX_GAP = 5.0
#: a sweep step is shown as samples this long when the record does not say
DEFAULT_STEP_SECONDS = 1.0
#: safety net: a step settles after 3 identical samples with the default settler
MAX_SAMPLES_PER_STEP = 50


def _unit_ends(step: Step) -> tuple[ThreadSample, ...]:
    """A load step's units as ends: the row a unit makes is its sum, its ends' CPUs."""
    out = []
    for u in step.units:
        n = max(u.ends, 1)
        cpus: list[int | None] = list(u.cpus) or [None]
        for i in range(n):
            cpu = cpus[i % len(cpus)]
            out.append(
                ThreadSample(
                    pair=u.unit,
                    role=f"e{i}",  # one key per end (a sweep keeps no tids)
                    tid=0,
                    bound_cpu=None,
                    last_cpu=cpu,
                    rounds=0,
                    ops_per_s=u.ops_per_s / n,
                )
            )
    return tuple(out)


def _step_threads(step: Step) -> tuple[ThreadSample, ...]:
    if not step.threads and step.units:
        return _unit_ends(step)
    return tuple(
        ThreadSample(
            pair=t.pair,
            role=t.role,
            tid=0,  # a sweep does not keep thread ids
            bound_cpu=t.cpu,
            last_cpu=t.cpu,
            rounds=t.rounds,
            ops_per_s=t.ops_per_s,
            errors=t.errors,
        )
        for t in step.threads
    )


def sweep_samples(record: Record) -> list[Sample]:
    """Samples for a sweep record: each step repeated until a fresh Settler settles."""
    seconds = record.config.seconds or DEFAULT_STEP_SECONDS
    out: list[Sample] = []
    t = 0.0
    none = unrated(record)
    for step in record.steps:
        if step.pairs in none:
            continue  # no rate to play: a 0 would read as a collapse on the curve
        settler = Settler()
        threads = _step_threads(step)
        for i in range(MAX_SAMPLES_PER_STEP):
            t += seconds
            sample = Sample(
                t=t,
                dt=seconds,
                pairs=step.pairs,
                threads=threads,
                total_ops_per_s=step.total_ops_per_s,
                events=tuple(step.events) if i == 0 else (),
                oversubscribed=step.oversubscribed,
            )
            out.append(sample)
            settler.feed_sample(sample)
            if settler.settled:
                break
    return out


def replay_samples(record: Record) -> list[Sample]:
    """What a record plays back as; RecordError when it holds nothing to play."""
    samples = list(record.timeline) if record.timeline else sweep_samples(record)
    if not samples:
        raise RecordError(f"{record.name} holds no samples and no sweep steps to replay")
    return samples


def _interval(record: Record, samples: list[Sample]) -> float:
    interval = record.config.interval or record.config.seconds
    if interval:
        return float(interval)
    return statistics.median(s.dt for s in samples) if samples else DEFAULT_STEP_SECONDS


class ReplaySource(SampleSource):
    """A record's samples at `speed` x their recorded pace; refuses every control."""

    controllable = False
    monitor_cpu = None

    def __init__(self, record: Record, speed: float = 1.0) -> None:
        if not speed > 0:
            raise ValueError(f"speed must be positive, got {speed}")
        self._record = record
        self.samples = replay_samples(record)
        self.speed = speed
        self.delivered = 0
        self.finished = False
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._info = RunInfo(
            record.config.model_copy(update={"interval": _interval(record, self.samples)}),
            kernel=record.box.kernel,
            cpu_model=record.box.cpu,
            source=f"REPLAY {record.name}",
        )

    @property
    def info(self) -> RunInfo:
        return self._info

    @property
    def record(self) -> Record:
        return self._record

    @property
    def histogram_missing(self) -> str:
        return "a record carries percentiles only"

    def pair_tids(self) -> set[int]:
        return set()

    def set_detail(self, on: bool) -> None:
        """Costs are whatever the record holds; nothing to switch on."""

    def pair_count(self) -> int:
        i = self.delivered
        return self.samples[i - 1].pairs if i else 0

    def header_note(self) -> str:
        """Where the replay is."""
        if self.finished:
            return "replay finished"
        return f"REPLAY {self.speed:g}x {self.delivered}/{len(self.samples)}"

    def end_message(self) -> str:
        if not self.finished:
            return ""
        return f"replay finished: {len(self.samples)} samples of {self._record.name}"

    def start(self, on_sample: SampleCallback) -> None:
        if self._thread is not None:
            return
        self._thread = threading.Thread(
            target=self._play, args=(on_sample,), name="ipctop-replay", daemon=True
        )
        self._thread.start()

    def _play(self, on_sample: SampleCallback) -> None:
        last = len(self.samples) - 1
        for i, sample in enumerate(self.samples):
            if i:
                gap = (sample.t - self.samples[i - 1].t) / self.speed
                if self._stop.wait(min(max(gap, 0.0), MAX_GAP)):
                    return
            elif self._stop.is_set():
                return
            self.delivered = i + 1
            # Before the last delivery, so the frame it triggers already says so.
            self.finished = i == last
            on_sample(sample, 0)

    def detach(self) -> None:
        self._stop.set()
        thread = self._thread
        if thread is not None and thread is not threading.current_thread():
            thread.join(timeout=5.0)

    def stop(self) -> None:
        self.detach()

    def add_pair(self) -> str:
        raise UnsupportedError("a replay cannot add pairs")

    def remove_pair(self) -> str:
        raise UnsupportedError("a replay cannot remove pairs")

    def reconfigure(self, pairs: int | None = None, **changes: str) -> str:
        raise UnsupportedError("a replay cannot be restarted")
