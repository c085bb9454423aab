"""Where the app's samples come from: the live engine, or a fixed list for tests.

The app only talks to a SampleSource (live/source_protocol.py). A live
source drives an Engine and a Sampler; the fixed source replays prepared
Samples and refuses control. A record replay is one more implementation of
the same protocol.

Every method that changes pairs may block for milliseconds to seconds (fork,
join): the app calls them from a thread worker, never from the event loop.
"""

from __future__ import annotations

import os
import threading
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import replace
from typing import Any

from ..box import read_box
from ..engine.config import RunConfig
from ..engine.engine import Engine
from ..engine.latency import histogram, merged
from ..engine.sample import Sample
from ..engine.sampler import Sampler
from ..engine.workloads import WORKLOADS
from ..errors import UnsupportedError
from .monitor import choose_monitor_cpu, pin_monitor
from .priority import MonitorPriority
from .source_protocol import Histograms, RunInfo, SampleCallback, SampleSource

__all__ = ["FixedSource", "LiveSource", "RunInfo", "SampleCallback", "SampleSource"]


def _box_text() -> tuple[str, str]:
    box = read_box()
    return box.kernel_release, box.cpu_model


class LiveSource(SampleSource):
    """The real engine and its sampler, with the monitor kept off the pairs' CPUs."""

    def __init__(
        self,
        config: RunConfig,
        interval: float = 0.5,
        engine: Engine | None = None,
        pin: bool = True,
        own_engine: bool = True,
        boost: bool = True,
    ) -> None:
        # Validates workload, mode and placement before anything is created.
        self.engine = engine if engine is not None else Engine(config)
        # False when the caller keeps the engine across apps (the observer bench).
        self.own_engine = own_engine
        self.interval = interval
        self.pin = pin
        # Raise the monitor's threads above the pairs' (see priority.py).
        self.boost = boost
        self._priority = MonitorPriority()
        self.generation = 0
        self._kernel, self._cpu_model = _box_text()
        # Read before any pinning: the set pairs and the monitor may use.
        self._allowed = set(os.sched_getaffinity(0))
        self._lock = threading.RLock()
        self._sampler: Sampler | None = None
        self._on_sample: SampleCallback | None = None
        self._monitor_cpu: int | None = None
        self._stopped = False
        self._detail = False
        self._deliver_to: Callable[[Sample], None] | None = None
        # Engine warnings travel in the samples: what the log held up to
        # _warned is delivered; a replaced engine's last words wait in _pending.
        self._warn_lock = threading.Lock()
        self._warned = 0
        self._pending: list[str] = []
        self._told: set[str] = set()  # texts delivered, for unsaid_warnings

    # -- what the app reads ----------------------------------------------------
    @property
    def info(self) -> RunInfo:
        config = self.engine.config.as_run(self.engine.kind, interval=self.interval)
        return RunInfo(config, kernel=self._kernel, cpu_model=self._cpu_model)

    @property
    def controllable(self) -> bool:
        return not self._stopped

    @property
    def allowed(self) -> frozenset[int]:
        """The CPUs pairs may use: the affinity read before the monitor pinned itself."""
        return frozenset(self._allowed)

    @property
    def monitor_cpu(self) -> int | None:
        return self._monitor_cpu

    @property
    def monitor_note(self) -> str:
        """Why the monitor runs at normal priority, or ""."""
        return self._priority.note

    @property
    def histogram_missing(self) -> str:
        return "not timed"

    def pair_count(self) -> int:
        return len(self.engine.pairs)

    def pair_tids(self) -> set[int]:
        if self.engine.config.mode != "threads":
            return set()
        return {e.tid for e in self.engine.ends() if e.tid}

    # -- lifecycle ---------------------------------------------------------------
    def open(self, pairs: int) -> None:
        """Start the engine with `pairs` pairs (before the app runs: errors reach the CLI)."""
        with self._lock:
            if self.boost:
                # Raised before the app exists, so its threads inherit it: at the
                # ends' nice the first screen would wait behind hundreds of them.
                self._priority.apply(self.pair_tids())
            self.engine.start(pairs)

    def start(self, on_sample: SampleCallback) -> None:
        with self._lock:
            self._on_sample = on_sample
            self._start_sampler()

    def detach(self) -> None:
        with self._lock:
            self._on_sample = None
            if self._sampler is not None:
                self._sampler.close()
                self._sampler = None

    def stop(self) -> None:
        with self._lock:
            self.detach()
            self._stopped = True
            if self.own_engine:
                self.engine.stop()
            if self.pin:
                # Pairs of an engine we do not own keep running, and keep their binding.
                pin_monitor(self._allowed, self.pair_tids())
            self._priority.restore(self.pair_tids())

    # -- control (blocking: call from a worker thread) -----------------------------
    def add_pair(self) -> str:
        with self._lock:
            self._unpin_me()
            pair = self.engine.add_pair()
            self._repin()
            cpus = sorted({e.bound_cpu for e in pair.ends if e.bound_cpu is not None})
            where = "unpinned" if not cpus else "CPU " + ",".join(map(str, cpus))
            over = " (oversubscribed)" if self.engine.oversubscribed else ""
            return f"pair {pair.index} added on {where}{over}"

    def remove_pair(self) -> str:
        with self._lock:
            pair = self.engine.remove_pair()
            self._repin()
            if pair is None:
                return "no pair to remove"
            return f"pair {pair.index} removed with its objects"

    def reconfigure(self, pairs: int | None = None, **changes: Any) -> str:
        with self._lock:
            if self._stopped:  # a late caller (an A/B ending) must not start pairs again
                raise UnsupportedError("the pairs were stopped: nothing to restart")
            self._unpin_me()
            old = self.engine
            new_config = old.config.changed(**changes)
            if new_config.size is not None and WORKLOADS[new_config.workload].default_size is None:
                new_config = new_config.changed(size=None)  # --size means nothing there
            count = len(old.pairs) if pairs is None else pairs
            if new_config == old.config and count == len(old.pairs):
                return "nothing changed"
            new = Engine(new_config)  # raises UsageError before the old run is touched
            had_sampler = self._sampler is not None
            if self._sampler is not None:
                self._sampler.close()
                self._sampler = None
            old.stop()
            with self._warn_lock:
                said, _ = old.events.since(self._warned)
                self._pending.extend(said)
                self._warned = 0
            self.engine = new
            self.generation += 1
            try:
                new.start(count)
            finally:
                self._repin()
                if had_sampler:
                    self._start_sampler()
            return f"restarted {count} pair(s): {new.describe()}"

    def latency_histogram(self, pair: int) -> Histograms | None:
        """The last interval's histograms of one pair, read live; None when not timed."""
        sampler = self._sampler
        last = sampler.latency_last(pair) if sampler is not None else None
        if last is None:
            return None
        rtt, ab, ba = last
        return {"round trip (A)": histogram(rtt), "one-way (both ways)": histogram(merged(ab, ba))}

    def set_detail(self, on: bool) -> None:
        with self._lock:
            self._detail = on
            sampler = self._sampler
            if sampler is None or sampler.detail == on:
                return
            # The sampler thread reads its cost tracker mid-sample: switch it
            # between samples, with the thread stopped (it keeps its baselines).
            callback = self._deliver_to
            sampler.stop()
            sampler.detail = on
            sampler.start(callback)

    # -- internals ---------------------------------------------------------------
    def _start_sampler(self) -> None:
        sampler = Sampler(self.engine, self.interval)
        sampler.detail = self._detail
        generation = self.generation
        callback = self._on_sample

        def deliver(sample: Sample) -> None:
            if callback is not None and self._on_sample is callback:
                callback(self._with_warnings(sample), generation)

        self._repin()
        sampler.monitor_cpu = self._monitor_cpu
        self._deliver_to = deliver
        sampler.start(deliver)
        self._sampler = sampler

    def _with_warnings(self, sample: Sample) -> Sample:
        """The sample with every engine warning no sample carried yet (a reaper
        that is missing, an end that did not stop): the TUI shows a sample's
        events once, and records keep them. poll()'s are in it already."""
        with self._warn_lock:
            said, self._warned = self.engine.events.since(self._warned)
            said, self._pending = self._pending + said, []
        carried = Counter(sample.events)
        extra = []
        for w in said:
            if carried[w]:
                carried[w] -= 1
            else:
                extra.append(w)
        if not extra:
            return sample
        with self._warn_lock:
            self._told.update(extra)
        return replace(sample, events=(*extra, *sample.events))

    def unsaid_warnings(self) -> list[str]:
        """Engine warnings no delivered sample carried (those of the final stop),
        each once: for the caller to print once the screen is gone. A stopping
        engine repeats its reaper's warnings from the start; those were said."""
        with self._warn_lock:
            said, self._warned = self.engine.events.since(self._warned)
            said, self._pending = self._pending + said, []
            new = [w for w in dict.fromkeys(said) if w not in self._told]
            self._told.update(new)
        return new

    def _pair_cpus(self) -> set[int] | None:
        cpus: set[int] = set()
        for end in self.engine.ends():
            if end.bound_cpu is None:
                return None
            cpus.add(end.bound_cpu)
        return cpus

    def _unpin_me(self) -> None:
        # Unpinned pairs inherit their creator's affinity: create them from a
        # thread that may run anywhere, not from a pinned monitor thread.
        if self.pin:
            os.sched_setaffinity(0, self._allowed)

    def _repin(self) -> None:
        if self.boost:
            self._priority.apply(self.pair_tids())
        if not self.pin:
            return
        cpu = choose_monitor_cpu(self._allowed, self._pair_cpus())
        self._monitor_cpu = cpu
        target = {cpu} if cpu is not None else self._allowed
        pin_monitor(target, self.pair_tids())


class FixedSource(SampleSource):
    """Prepared samples, delivered all at once on start: deterministic pictures.

    Used by the snapshot tests and the demo; it cannot add or remove pairs.
    """

    monitor_note = ""  # a picture may say what a live source would (tests/engine/test_priority.py)

    def __init__(
        self,
        samples: Sequence[Sample],
        info: RunInfo,
        monitor_cpu: int | None = None,
    ) -> None:
        self.samples = list(samples)
        self._info = info
        self._monitor_cpu = monitor_cpu
        self.stopped = False

    @property
    def info(self) -> RunInfo:
        return self._info

    @property
    def controllable(self) -> bool:
        return False

    @property
    def monitor_cpu(self) -> int | None:
        return self._monitor_cpu

    def pair_tids(self) -> set[int]:
        return set()

    def pair_count(self) -> int:
        return self.samples[-1].pairs if self.samples else 0

    def start(self, on_sample: SampleCallback) -> None:
        for s in self.samples:
            on_sample(s, 0)

    def detach(self) -> None:
        """Nothing is running: the samples were delivered at start."""

    def stop(self) -> None:
        self.stopped = True

    def add_pair(self) -> str:
        raise UnsupportedError(f"a {self._info.source} source cannot add pairs")

    def remove_pair(self) -> str:
        raise UnsupportedError(f"a {self._info.source} source cannot remove pairs")

    def reconfigure(self, pairs: int | None = None, **changes: Any) -> str:
        raise UnsupportedError(f"a {self._info.source} source cannot be restarted")

    def set_detail(self, on: bool) -> None:
        """The samples carry their costs or not: nothing to switch."""
