"""What the app knows of a sample source: RunInfo, the callback and SampleSource.

The three sources (live/sources.py's LiveSource and FixedSource,
live/replay_source.py's ReplaySource) subclass SampleSource explicitly: the
members below `-- what some sources say` have defaults here, so a source
overrides only what it has to say and the app never asks which kind of
source it holds.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any, Protocol

from ..engine.config import RunConfig
from ..engine.sample import Sample

if TYPE_CHECKING:
    from ..output.records.record import Record

#: on_sample(sample, generation): generation changes when the run is restarted
SampleCallback = Callable[[Sample, int], None]
#: a pair's histograms by name: (bucket's lower edge in ns, count), ascending
Histograms = dict[str, list[tuple[float, int]]]


@dataclass(frozen=True)
class RunInfo:
    """What the header says about the run; fixed until the source is reconfigured.

    `config` is the run's configuration as its record keeps it (the engine's
    RunConfig.as_run, with the sampler's interval; a live run has no fixed duration or
    repeat count), so a session's record takes it as it is; beside it, where the
    run is and what produces the samples.
    """

    config: RunConfig
    kernel: str
    cpu_model: str
    source: str = "live"  # "live", "fixed", "replay ..."

    def __post_init__(self) -> None:
        if self.config.interval is None:
            raise ValueError("a source's run has a sample interval")

    def changed(self, **update: Any) -> RunInfo:
        """This run with some settings changed: where it runs (kernel, cpu_model,
        source) or its configuration's keys (workload, placement, ...)."""
        own = {k: update.pop(k) for k in ("kernel", "cpu_model", "source") if k in update}
        return replace(self, config=self.config.changed(**update), **own)

    @property
    def interval(self) -> float:
        """The sampler's interval, which every source has (a record's config may not)."""
        assert self.config.interval is not None  # __post_init__
        return self.config.interval


class SampleSource(Protocol):
    """The one interface between the app and whatever produces samples."""

    @property
    def info(self) -> RunInfo: ...

    @property
    def controllable(self) -> bool:
        """True when pairs can be added, removed and restarted."""
        ...

    @property
    def monitor_cpu(self) -> int | None:
        """The CPU the monitor's threads are pinned to, None when they share."""
        ...

    def pair_tids(self) -> set[int]:
        """Threads of this process that are pair ends (not the monitor)."""
        ...

    def pair_count(self) -> int:
        """Pairs started now (the samples lag by up to one interval)."""
        ...

    def start(self, on_sample: SampleCallback) -> None:
        """Begin delivering samples; on_sample is called from any thread."""
        ...

    def detach(self) -> None:
        """Stop delivering samples (the app is going away); keeps the pairs."""
        ...

    def stop(self) -> None:
        """Stop delivering samples and remove everything; idempotent."""
        ...

    def add_pair(self) -> str: ...

    def remove_pair(self) -> str: ...

    def reconfigure(self, pairs: int | None = None, **changes: Any) -> str:
        """Restart the pairs with a new workload, placement or mode, same count
        unless `pairs` says otherwise (W starts a mechanism at 1 pair)."""
        ...

    def set_detail(self, on: bool) -> None:
        """Read where the time goes (extra /proc reads) only while it is shown."""
        ...

    # -- what some sources say; the defaults fit a source with nothing to say --------
    @property
    def monitor_note(self) -> str:
        """For the status line: why the monitor runs at normal priority, or ""."""
        return ""

    @property
    def record(self) -> Record | None:
        """The record being played back; None for a run."""
        return None

    def header_note(self) -> str:
        """For the header: where a playback is, or ""."""
        return ""

    def end_message(self) -> str:
        """Said once, when the last sample has been delivered; "" while more may come."""
        return ""

    def latency_histogram(self, pair: int) -> Histograms | None:
        """One pair's histograms of the last interval; None says histogram_missing."""
        return None

    @property
    def histogram_missing(self) -> str:
        """Why latency_histogram gives None."""
        return "these samples carry percentiles only"
