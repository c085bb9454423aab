"""A stopped world: pairs that make no round and readings that come late.

SIGSTOP to one end's process (processes mode) leaves its pair at 0 ops/s
with no failure to report; SIGSTOP of ipctop itself leaves a hole in the
timeline that a plain average spreads over the run. Both are stalls: a pair
whose ends made no progress for STALL_S, and a reading more than STALL_S
later than the sampler's period. A window with either is not a rate sample,
so the rates leave it out (stalled_windows) and the outputs say so.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

STALL_S = 2.0  # no round for this long is a stalled pair; a reading this late is a gap
STALL = "stall:"  # how every such event starts


class StallWatch:
    """Live: which pairs are stalled now, and whether this reading came late."""

    def __init__(self, period: float, stall_s: float = STALL_S) -> None:
        self.period = period
        self.stall_s = stall_s
        self._counts: dict[int, int] = {}  # each pair's progress at the last reading
        self._prev_now: float | None = None  # when that reading was
        # Pairs that made no progress at the last reading -> when they last moved:
        # at 1,024 pairs a reading is a dict copy and one pass, not a tuple per pair.
        self._still: dict[int, float] = {}
        self._since: dict[int, float] = {}  # stalled pair -> when it last moved
        self._readings = 0

    def gap(self, dt: float) -> str | None:
        """An event when this reading came STALL_S or more after its period."""
        self._readings += 1
        # The first reading follows the start-up of the pairs, not a period.
        if self._readings == 1 or dt < self.period + self.stall_s:
            return None
        return (
            f"{STALL} {dt:.1f} s between two readings (period {self.period:g} s): ipctop "
            "itself was stopped or starved; that window is left out of the rates"
        )

    def update(self, now: float, progress: dict[int, int]) -> tuple[tuple[int, ...], list[str]]:
        """(pairs stalled now, events) given each running pair's progress count."""
        events = []
        counts = self._counts
        moved_at = self._prev_now if self._prev_now is not None else now
        # A pair seen for the first time counts as moving now, as one whose count changed.
        still = [p for p, c in progress.items() if counts.get(p, -1) == c]
        old_still = self._still
        self._still = {p: old_still.get(p, moved_at) for p in still}
        self._counts, self._prev_now = dict(progress), now
        if self._since or self._still:  # else nothing to say: no pass over the pairs
            for pair in [p for p in self._since if p not in progress]:
                del self._since[pair]  # removed, failed or done: not a stall
            for pair in progress:  # in the pairs' order, as the events are read
                last = self._still.get(pair)
                if last is None:
                    since = self._since.pop(pair, None)
                    if since is not None:
                        events.append(
                            f"{STALL} pair {pair} resumed after {now - since:.1f} s without a round"
                        )
                elif pair not in self._since and now - last >= self.stall_s:
                    self._since[pair] = last
                    events.append(
                        f"{STALL} pair {pair} made no round for {now - last:.1f} s (an end "
                        f"stopped, or starved of CPU); its windows are left out of the rates"
                    )
        return tuple(sorted(self._since)), events


@dataclass(frozen=True)
class StallReport:
    """What the stalls of one measured window took out of it."""

    windows: tuple[bool, ...]  # per sample: True when it is not a rate sample
    pair_windows: dict[int, tuple[bool, ...]]  # per pair: its own stalled samples
    left_out_s: float  # seconds of the window that were stalled (any pair, or a gap)
    gaps: int  # readings that came late
    stalled_pairs: tuple[int, ...]  # pairs that stalled at some point
    stalled_at_end: tuple[int, ...]  # pairs still stalled at the last reading

    @property
    def any(self) -> bool:
        return any(self.windows)

    def summary(self) -> StallSummary:
        """What a record keeps of it."""
        return StallSummary(
            threshold_s=STALL_S,
            left_out_s=round(self.left_out_s, 2),
            windows_left_out=sum(self.windows),
            gaps=self.gaps,
            stalled_pairs=self.stalled_pairs,
            stalled_at_end=self.stalled_at_end,
        )


@dataclass(frozen=True)
class StallSummary:
    """A recorded step's stalls (a Step's `stalls`): its runs' StallReports, summed."""

    threshold_s: float  # STALL_S when it was recorded
    left_out_s: float
    windows_left_out: int
    gaps: int
    stalled_pairs: tuple[int, ...] = ()
    stalled_at_end: tuple[int, ...] = ()

    def plus(self, other: StallSummary) -> StallSummary:
        """Both runs' stalls: the times and counts added, the pairs joined."""
        return StallSummary(
            threshold_s=self.threshold_s,
            left_out_s=round(self.left_out_s + other.left_out_s, 2),
            windows_left_out=self.windows_left_out + other.windows_left_out,
            gaps=self.gaps + other.gaps,
            stalled_pairs=tuple(sorted(set(self.stalled_pairs) | set(other.stalled_pairs))),
            stalled_at_end=tuple(sorted(set(self.stalled_at_end) | set(other.stalled_at_end))),
        )


def stalled_windows(timeline: Sequence[Any], start: dict[int, int]) -> StallReport:
    """Mark every sample that is not a rate sample, back to where a stall began.

    The sampler can only flag a pair after STALL_S without a round; the
    samples before the flag in the same run of roundless samples were
    stalled too. `start` is each pair's round count before the first sample.
    """
    n = len(timeline)
    gaps = [bool(getattr(s, "gap", False)) for s in timeline]
    per_pair: dict[int, list[bool]] = {}
    last = dict(start)
    quiet: dict[int, list[int]] = {}  # pair -> the current run of roundless samples
    for i, s in enumerate(timeline):
        rounds = _pair_rounds(s.threads)
        flagged = set(getattr(s, "stalled", ()))
        for pair, count in rounds.items():
            marks = per_pair.setdefault(pair, [False] * n)
            if count != last.get(pair):
                quiet[pair] = []
            else:
                quiet.setdefault(pair, []).append(i)
            last[pair] = count
            if pair in flagged:
                for j in quiet.get(pair, ()) or (i,):
                    marks[j] = True
    windows = tuple(gaps[i] or any(m[i] for m in per_pair.values()) for i in range(n))
    end = tuple(sorted(getattr(timeline[-1], "stalled", ()))) if timeline else ()
    return StallReport(
        windows=windows,
        pair_windows={p: tuple(m) for p, m in per_pair.items()},
        left_out_s=sum(s.dt for s, w in zip(timeline, windows) if w),
        gaps=sum(gaps),
        stalled_pairs=tuple(sorted(p for p, m in per_pair.items() if any(m))),
        stalled_at_end=end,
    )


def _pair_rounds(threads: Iterable[Any]) -> dict[int, int]:
    out: dict[int, int] = {}
    for t in threads:
        out[t.pair] = out.get(t.pair, 0) + t.rounds
    return out
